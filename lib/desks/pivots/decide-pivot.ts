/**
 * The one path by which approve-pivot and reject-pivot reach the engine: bound to the plan hash the
 * reviewer's page loaded, with every refusal a person can act on returned as a value.
 */
import { getPrisma } from "@/lib/core/db/prisma";
import { sharedSagaStore, type PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaError } from "@/packages/client/src/saga/errors";
import type { PivotRecord } from "@/packages/client/src/saga/store";
import { PivotStatus, RunStatus, type PivotRejectionCode } from "@/packages/client/src/saga/vocabulary";
import { dashboardEngine, connectorRegistry, withDb } from "@/lib/desks/dashboard/context";
import { type CurrentUser, userActor } from "@/lib/server/auth/current-user";
import { pivotSummary, readPlanItemViews } from "./pivot-view";
import type { TPivotDecisionResult } from "@/lib/desks/pivots/views";
import { expireIfDue } from "@/lib/server/sla/sweep-slas";
import { actorAttributes, inRunSpan } from "@/lib/core/observability/people-spans";
import { recordPivotApproval } from "@/lib/desks/approvals/record-pivot-approval";
import type { TApprovalChannel } from "@/lib/desks/approvals/views";

/** A reviewer's decision as the use cases pass it on. */
export interface PivotDecisionInput {
  /** The pivot. */
  pivotId: string;
  /** The plan hash the reviewer's page showed. */
  planHash: string;
  /** Approve (true) or reject. */
  approve: boolean;
  /** A rejection's reason (goes back to the agent). */
  reason: string | null;
  /** A rejection's code: what the agent should do next. */
  reasonCode?: PivotRejectionCode;
  /** Where the person decided (the dashboard unless said: an email's confirm page, Slack). */
  via?: TApprovalChannel;
}

async function planChanged(pivot: PivotRecord): Promise<TPivotDecisionResult> {
  const plan = await withDb((prisma) => readPlanItemViews(prisma, connectorRegistry(), pivot.plan));
  return {
    ok: false,
    reason: "plan_changed",
    current: { planHash: pivot.planHash, summary: pivot.summary, status: pivot.status, plan },
    policyChanges: plan.filter((i) => i.policyChanged).map((i) => ({ tool: i.tool, planVersion: i.planPolicyVersion, currentVersion: i.currentPolicyVersion })),
  };
}

/** Why a pending pivot with the expected hash cannot be decided (or that it can): null means go ahead. */
async function refusal(store: PrismaSagaStore, pivot: PivotRecord, input: PivotDecisionInput): Promise<TPivotDecisionResult | null> {
  if (pivot.status !== PivotStatus.PENDING) return { ok: false, reason: "already_decided", pivot: pivotSummary(pivot) };
  if (pivot.planHash !== input.planHash) return planChanged(pivot);
  if (input.approve) {
    // A tool policy edited since the plan was made makes the approval stale before it is given.
    const changed = await planChanged(pivot);
    if (changed.ok === false && changed.reason === "plan_changed" && changed.policyChanges.length > 0) return changed;
  }
  const run = await store.getRun(pivot.runId);
  if (run && run.status !== RunStatus.AWAITING_PIVOT) return { ok: false, reason: "run_not_waiting", runStatus: run.status };
  return null;
}

/** What a decision span says of the outcome: the decision taken, or why none was (already decided, plan changed...). */
function decisionAttributes(result: TPivotDecisionResult): Record<string, string | number> {
  if (!result.ok) return { "sagaboard.pivot.result": result.reason };
  const waited = result.pivot.decidedAt && result.pivot.createdAt ? (Date.parse(String(result.pivot.decidedAt)) - Date.parse(String(result.pivot.createdAt))) / 1000 : NaN;
  return { "sagaboard.pivot.result": "decided", "sagaboard.pivot.status": result.pivot.status.toLowerCase(), ...(Number.isFinite(waited) ? { "sagaboard.pivot.wait_seconds": waited } : {}) };
}

/**
 * Decides the pivot through the engine (row + audit event in one transaction) for `user`: a
 * `decide_pivot` span in the agent's trace when tracing is on (lib/core/observability/people-spans.ts).
 */
export async function decidePivotFor(user: CurrentUser, input: PivotDecisionInput): Promise<TPivotDecisionResult> {
  const prisma = await getPrisma();
  const store = sharedSagaStore(prisma);
  // Expiry by the database clock wins over an approval that comes after it, whether or not a sweep has run.
  if (input.approve) await expireIfDue(prisma, store, input.pivotId);
  const pivot = await store.getPivot(input.pivotId);
  if (!pivot) throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${input.pivotId} does not exist; reload the runs list.`);
  const attributes = {
    "sagaboard.pivot.id": pivot.id,
    "sagaboard.pivot.decision": input.approve ? "approve" : "reject",
    "sagaboard.pivot.plan_items": pivot.plan.length,
    ...(input.approve ? {} : { "sagaboard.pivot.reason_code": (input.reasonCode ?? "OTHER").toLowerCase() }),
    ...actorAttributes("user", user.role),
  };
  return inRunSpan(prisma, "decide_pivot", pivot.runId, attributes, () => decide(store, user, pivot, input), decisionAttributes);
}

/** The decision itself, once the pivot is read: refusals a person can act on, else the engine's fenced decision. */
async function decide(store: PrismaSagaStore, user: CurrentUser, pivot: PivotRecord, input: PivotDecisionInput): Promise<TPivotDecisionResult> {
  const refused = await refusal(store, pivot, input);
  if (refused) return refused;
  if (input.approve) {
    // A plan with a two-approver tool: the first person's approval is recorded, the second person's decides.
    const count = await recordPivotApproval(await getPrisma(), pivot, user, input.via ?? "dashboard");
    if (count.kind === "first") return { ok: false, reason: "second_approver_needed", approvals: count.approvals };
    if (count.kind === "same_approver") return { ok: false, reason: "same_approver", approvals: count.approvals };
  }
  const engine = await dashboardEngine();
  try {
    // Approval or rejection (with its code), one path: the store's fence (PENDING + plan hash + run waiting) decides races.
    const decided = await engine.decidePivot(input.pivotId, {
      approve: input.approve,
      actor: userActor(user),
      planHash: input.planHash,
      reason: input.approve ? null : input.reason,
      reasonCode: input.approve ? null : (input.reasonCode ?? "OTHER"),
    });
    return { ok: true, pivot: pivotSummary(decided) };
  } catch (e) {
    // Lost a race (the agent revised the plan, another reviewer decided, the run moved): say which.
    if (!(e instanceof SagaError) || e.code !== "PIVOT_CONFLICT") throw e;
    const current = await store.getPivot(input.pivotId);
    if (!current) throw e;
    const raced = await refusal(store, current, input);
    if (raced) return raced;
    throw e;
  }
}
