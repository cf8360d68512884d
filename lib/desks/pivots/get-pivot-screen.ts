import { revealPersonal } from "@/lib/core/privacy/personal-data-vault";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan, can } from "@/lib/server/auth/roles";
import { getPrisma } from "@/lib/core/db/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaError } from "@/packages/client/src/saga/errors";
import type { StepRecord } from "@/packages/client/src/saga/store";
import { CompensationState, StepStatus, ToolClass } from "@/packages/client/src/saga/vocabulary";
import { resolveAudience } from "@/lib/server/tools/audience";
import { connectorRegistry, withDb } from "@/lib/desks/dashboard/context";
import { pivotSummary, planItemViews } from "./pivot-view";
import { readToolPolicies, type ToolPolicyFacts } from "@/lib/server/tools/tool-policies";
import { systemOfTool, type ExternalSystem } from "@/lib/server/tools/tool-systems";
import type { TPivotScreen, TStagedEffect } from "@/lib/desks/pivots/views";
import { readPivotApprovals } from "@/lib/desks/approvals/pivot-approvals";
import { loadSlaRules, pivotSla, slaPoints } from "@/lib/server/sla/sla-rules";

/** Names of the blast radius ranks, lowest first. */
const RANK_LABELS = ["internal", "partner", "customer"] as const;

/** Rows with nothing left to release: released, compensated, or never happened. */
const SETTLED_STATUSES: readonly StepStatus[] = [StepStatus.COMPENSATED, StepStatus.NOT_EXECUTED, StepStatus.FAILED];

function earliest(dates: readonly (Date | null)[]): Date | null {
  return dates.reduce<Date | null>((min, d) => (d && (!min || d < min) ? d : min), null);
}

function stagedEffect(step: StepRecord, policy: ToolPolicyFacts | undefined, deadline: Date | null): TStagedEffect {
  const windowSec = policy?.revocationWindowSec ?? null;
  const revocableUntil = windowSec === null ? null : new Date(step.createdAt.getTime() + windowSec * 1000);
  const releasableUntil = earliest([revocableUntil, deadline]);
  // What was recorded, else the tool table's rule on the arguments, else unknown (customer-facing).
  const seenBy = resolveAudience(step.audience, policy?.audienceRule, step.args);
  return {
    stepId: step.id,
    stepIdx: step.stepIdx,
    tool: step.tool,
    toolClass: step.toolClass,
    system: systemOfTool(policy?.system),
    status: step.status,
    args: step.args,
    stepKey: step.stepKey,
    externalRef: step.externalRef,
    audience: seenBy.audience,
    audienceRank: seenBy.rank,
    release: step.compensation ? { tool: step.compensation.tool, args: step.compensation.args } : null,
    compensationState: step.compensationState,
    stagedAt: step.createdAt.toISOString(),
    revocationWindowSec: windowSec,
    windowSource: policy?.source ?? "registry_default",
    revocableUntil: revocableUntil?.toISOString() ?? null,
    releasableUntil: releasableUntil?.toISOString() ?? null,
    settled: SETTLED_STATUSES.includes(step.status) || step.compensationState === CompensationState.CONFIRMED,
  };
}

/**
 * Everything a reviewer needs to decide a pivot in one look: what is staged (by external system and
 * by blast radius), what releasing each staged effect would take and until when it can be released,
 * the commit plan with irreversible items marked and each tool's policy version then and now, and
 * the deadline. Throws PIVOT_NOT_FOUND.
 */
export async function getPivotScreen(request: PersonRequest<{ pivotId: string }>): Promise<TPivotScreen> {
  const view = await getPivotScreenStored(request);
  // Personal fields are stored sealed: opened here, or "erased on <date>" (lib/core/privacy/ARCHITECTURE.md).
  // Not inside withDb: the reveal queues its one read of the keys on the same connection itself.
  return revealPersonal(await getPrisma(), view);
}

async function getPivotScreenStored({ actor, pivotId }: PersonRequest<{ pivotId: string }>): Promise<TPivotScreen> {
  assertCan(actor, "read");
  const store = sharedSagaStore(await getPrisma());
  const pivot = await store.getPivot(pivotId);
  if (!pivot) throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${pivotId} does not exist. Open its run from the runs list to find its pivots.`);
  const run = await store.getRun(pivot.runId);
  if (!run) throw new SagaError("RUN_NOT_FOUND", `The run of pivot ${pivotId} does not exist.`);
  const [steps, pivots] = [await store.listSteps(run.id), await store.listPivots(run.id)];

  const byId = new Map(steps.map((s) => [s.id, s]));
  const stagedSteps = pivot.stagedStepIds
    .map((id) => byId.get(id))
    .filter((s): s is StepRecord => s !== undefined)
    .sort((a, b) => a.stepIdx - b.stepIdx);
  const registry = connectorRegistry();
  const policies = await withDb((prisma) =>
    readToolPolicies(prisma, registry, [...stagedSteps.map((s) => s.tool), ...pivot.plan.map((i) => i.tool)]),
  );

  const staged = stagedSteps.map((s) => stagedEffect(s, policies.get(s.tool), pivot.deadline));
  const bySystem: { system: ExternalSystem; stepIds: string[] }[] = [];
  for (const effect of staged) {
    const group = bySystem.find((g) => g.system === effect.system);
    if (group) group.stepIds.push(effect.stepId);
    else bySystem.push({ system: effect.system, stepIds: [effect.stepId] });
  }
  const byAudience = RANK_LABELS.map((label, rank) => {
    const members = staged.filter((e) => e.audienceRank === rank);
    return { rank, label, audience: [...new Set(members.flatMap((e) => e.audience))], stepIds: members.map((e) => e.stepId) };
  }).filter((g) => g.stepIds.length > 0);

  const plan = planItemViews(pivot.plan, policies, registry);
  // A plan item retried under its key (NOT_EXECUTED, then again) has several steps: the latest tells.
  const committed = new Map<number, StepRecord>();
  for (const s of steps) {
    if (s.approvalId !== pivot.id || s.planItemIdx === null) continue;
    if ((committed.get(s.planItemIdx)?.stepIdx ?? -1) < s.stepIdx) committed.set(s.planItemIdx, s);
  }
  const now = new Date();
  const open = staged.filter((e) => !e.settled);
  // A window that closed before anything released the effect: it can no longer be released.
  const expired = open.filter((e) => e.releasableUntil !== null && new Date(e.releasableUntil) <= now);
  const releasable = open.filter((e) => !expired.includes(e));
  const [approvals, slaRules] = await withDb(async (prisma) => [await readPivotApprovals(prisma, pivot), await loadSlaRules(prisma)] as const);
  // The one deadline: what the SLA banner counts down (lib/server/sla), read from the same rule.
  const sla = pivotSla(slaRules, pivot.plan.map((i) => i.tool));
  const expireAt = slaPoints(sla, pivot.createdAt, pivot.deadline).expireAt;
  return {
    pivot: pivotSummary(pivot),
    run: { id: run.id, title: run.title, agent: run.agent, onBehalfOf: run.onBehalfOf, status: run.status },
    staged,
    bySystem,
    byAudience,
    plan,
    irreversibleCount: plan.filter((i) => i.toolClass === ToolClass.IRREVERSIBLE).length,
    policyChanged: plan.some((i) => i.policyChanged),
    releasableUntil: earliest([...releasable.map((e) => (e.releasableUntil ? new Date(e.releasableUntil) : null)), pivot.deadline])?.toISOString() ?? null,
    expiredStaged: expired.length,
    decideBy: { at: (expireAt ?? pivot.deadline)?.toISOString() ?? null, rejectsAutomatically: expireAt !== null, agentDeadline: pivot.deadline?.toISOString() ?? null, rule: sla.source },
    otherPivots: pivots.filter((p) => p.id !== pivot.id).map((p) => ({ id: p.id, status: p.status, createdAt: p.createdAt.toISOString() })),
    committed: [...committed].sort(([a], [b]) => a - b).map(([idx, s]) => ({ idx, stepIdx: s.stepIdx, status: s.status })),
    now: now.toISOString(),
    // The role read once above (`userCan` would read the User row again).
    abilities: { canDecide: can(actor.role, "pivot.decide") },
    approvals,
  };
}
