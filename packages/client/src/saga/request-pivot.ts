/**
 * Requesting a pivot: the one function the in-process engine (`RunContext.requestPivot`, through its
 * local port) and the server (`POST /runs/{id}/pivots`, lib/server/agent-api/request-pivot.ts) both call.
 * The plan's classes and policy versions come from the tool facts the caller passes (the tool table
 * on the server), never from the agent; the hash is computed here. Asking again with the same plan
 * returns the same pivot; a new plan revises a pending one.
 */
import { closedRun, CLOSED_RUN_STATUSES } from "./calls";
import { SagaError } from "./errors";
import { currentPolicyVersion } from "./gate";
import type { GateTool } from "./tool-table";
import type { IdGenerator } from "./ids";
import { argsHash, planHash } from "./keys";
import type { Actor, PivotRecord, PlanItem, SagaStore } from "./store";
import type { Json } from "./tools";
import { Phase, PivotStatus, StepStatus, ToolClass } from "./vocabulary";

/** A pivot request, its plan's arguments already parsed by whoever knows the tools' schemas. */
export interface RequestPivotInput {
  /** The run. */
  runId: string;
  /** One paragraph for the reviewer. */
  summary: string;
  /** The commit calls to approve (tool and exact arguments). */
  plan: ReadonlyArray<{ tool: string; args: Json }>;
  /** When the staged effects stop being releasable. */
  deadline: Date | null;
  /** Who asks (the agent). */
  actor: Actor;
  /** The tool as the deciding side's tool table has it (PURE tools need no approval and are refused in a plan; the approval binds its policy version). */
  toolFacts: (tool: string) => Promise<GateTool>;
  /** Extra audit data (`via: "api"`). */
  auditData?: Record<string, Json>;
}

export async function requestPivot(deps: { store: SagaStore; ids: IdGenerator }, input: RequestPivotInput): Promise<PivotRecord> {
  const { store } = deps;
  if (!input.summary?.trim()) throw new SagaError("INVALID_ARGS", "A pivot needs a summary for the reviewer.", [{ path: "summary", message: "required" }]);
  if (!Array.isArray(input.plan) || input.plan.length === 0) {
    throw new SagaError("INVALID_ARGS", "A pivot needs a commit plan with at least one call.", [{ path: "plan", message: "must be a non-empty list" }]);
  }
  const plan: PlanItem[] = [];
  for (const [i, item] of input.plan.entries()) {
    const facts = await input.toolFacts(item.tool);
    if (facts.class === ToolClass.PURE) {
      throw new SagaError("INVALID_ARGS", `Plan item ${i} (${item.tool}) is PURE: pure calls need no approval; leave it out.`, [{ path: `plan.${i}.tool`, message: "pure tool" }]);
    }
    plan.push({ tool: item.tool, args: item.args, argsHash: argsHash(item.args), policyVersion: currentPolicyVersion(facts), toolClass: facts.class });
  }
  const hash = planHash(plan);
  const latest = (await store.listPivots(input.runId)).at(-1);
  if (latest && latest.planHash === hash && latest.status !== PivotStatus.REJECTED) return latest;
  const run = await store.getRun(input.runId);
  if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${input.runId} does not exist.`);
  if (CLOSED_RUN_STATUSES.includes(run.status)) throw closedRun(run);
  const staged = (await store.listSteps(input.runId)).filter((s) => s.phase === Phase.STAGING && s.status !== StepStatus.NOT_EXECUTED && s.status !== StepStatus.FAILED);
  const extra = input.auditData ?? {};
  if (latest?.status === PivotStatus.PENDING) {
    // A revised proposal replaces the pending one; a reviewer holding the old plan hash is refused.
    const revised = await store.revisePivot(
      latest.id,
      { summary: input.summary, plan, planHash: hash, stagedStepIds: staged.map((s) => s.id), deadline: input.deadline },
      { type: "pivot.revised", actor: input.actor, data: { previousPlanHash: latest.planHash, planHash: hash, items: plan.length, ...extra } },
    );
    if (revised) return revised;
    throw new SagaError("PIVOT_CONFLICT", `Pivot ${latest.id} was decided while it was being revised; read its decision first.`);
  }
  return store.createPivot(
    { id: deps.ids.next("piv"), runId: input.runId, summary: input.summary, plan, planHash: hash, stagedStepIds: staged.map((s) => s.id), deadline: input.deadline },
    { type: "pivot.requested", actor: input.actor, data: { planHash: hash, items: plan.length, staged: staged.length, ...extra } },
  );
}
