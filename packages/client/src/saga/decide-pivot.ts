/**
 * A reviewer's decision on a pivot, approval or rejection: the one path the engine
 * (`SagaEngine.decidePivot`) and the dashboard (lib/desks/pivots/decide-pivot.ts) take. Bound to the plan
 * hash the reviewer saw; a rejection carries its reason and, when given, a code from the closed list
 * (`PivotRejectionCode`) the agent acts on without parsing prose. Framework-free: a store in.
 */
import { SagaError } from "./errors";
import type { Actor, PivotRecord, SagaStore } from "./store";
import { EscalationKind, EscalationStatus, PIVOT_REJECTION_CODES, PivotStatus, REJECTION_NEXT_STEP, type PivotRejectionCode } from "./vocabulary";

/** A reviewer's decision. */
export interface DecidePivotInput {
  /** The pivot. */
  pivotId: string;
  /** Approve (true) or reject. */
  approve: boolean;
  /** The reviewer. */
  actor: Actor;
  /** The plan hash the reviewer's page loaded. */
  planHash: string;
  /** Why (required when rejecting: it goes back to the agent). */
  reason?: string | null;
  /** A rejection's code: what the agent should do next. */
  reasonCode?: PivotRejectionCode | null;
}

/**
 * Decides a PENDING pivot whose plan hash is `planHash` and moves its run on (COMMITTING, or RUNNING
 * after a rejection). An approval resolves the held calls its plan covers as superseded. Refused with
 * PIVOT_CONFLICT, saying which, when it was already decided, the plan changed since it was loaded, or
 * the run no longer waits for it; INVALID_ARGS for a rejection without a reason or with a code
 * outside the list.
 */
export async function decidePivot(deps: { store: SagaStore }, input: DecidePivotInput): Promise<PivotRecord> {
  const { store } = deps;
  const reason = input.reason?.trim() ? input.reason.trim() : null;
  const reasonCode = input.approve ? null : (input.reasonCode ?? null);
  if (!input.approve && !reason) {
    throw new SagaError("INVALID_ARGS", "A rejection needs a reason: it goes back to the agent.", [{ path: "reason", message: "required when rejecting" }]);
  }
  if (reasonCode !== null && !PIVOT_REJECTION_CODES.includes(reasonCode)) {
    throw new SagaError("INVALID_ARGS", `reasonCode must be one of ${PIVOT_REJECTION_CODES.join(", ")}.`, [{ path: "reasonCode", message: "unknown code" }]);
  }
  const status = input.approve ? PivotStatus.APPROVED : PivotStatus.REJECTED;
  const data = { pivotId: input.pivotId, planHash: input.planHash, reason, ...(reasonCode ? { reasonCode, agentShould: REJECTION_NEXT_STEP[reasonCode] } : {}) };
  const decided = await store.decidePivot(
    input.pivotId,
    { status, decidedBy: input.actor.id, reason, expectedPlanHash: input.planHash, ...(reasonCode ? { reasonCode } : {}) },
    { type: input.approve ? "pivot.approved" : "pivot.rejected", actor: input.actor, data },
  );
  if (decided) {
    if (decided.status === PivotStatus.APPROVED) await supersedeHolds(store, decided, input.actor);
    return decided;
  }
  const pivot = await store.getPivot(input.pivotId);
  if (!pivot) throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${input.pivotId} does not exist.`);
  if (pivot.status !== PivotStatus.PENDING) {
    throw new SagaError("PIVOT_CONFLICT", `Pivot ${input.pivotId} was already ${pivot.status.toLowerCase()} by ${pivot.decidedBy ?? "someone"}; reload it.`);
  }
  if (pivot.planHash === input.planHash) {
    const run = await store.getRun(pivot.runId);
    throw new SagaError("PIVOT_CONFLICT", `Run ${pivot.runId} is ${run?.status ?? "gone"} and no longer waits for pivot ${input.pivotId}; nothing was decided.`);
  }
  throw new SagaError(
    "PIVOT_CONFLICT",
    `The plan of pivot ${input.pivotId} changed since it was loaded (plan hash ${pivot.planHash.slice(0, 12)}, not ${input.planHash.slice(0, 12)}); review the current plan and decide again.`,
  );
}

/**
 * Held calls that an approved pivot covers are resolved as superseded: the pivot is now their
 * approval, and a late approval of the old hold must not let the same call run a second time.
 */
async function supersedeHolds(store: SagaStore, pivot: PivotRecord, actor: Actor): Promise<void> {
  const open = await store.listEscalations({ runId: pivot.runId, status: [EscalationStatus.OPEN, EscalationStatus.CLAIMED] });
  for (const e of open) {
    const held = e.detail as { tool?: unknown; argsHash?: unknown } | null;
    if (e.kind !== EscalationKind.APPROVAL_REQUIRED || !pivot.plan.some((i) => i.tool === held?.tool && i.argsHash === held?.argsHash)) continue;
    const resolution = { approved: false, supersededBy: pivot.id, note: `covered by approved pivot ${pivot.id}` };
    await store.resolveEscalation(e.id, { resolvedBy: actor.id, resolution }, { type: "escalation.resolved", actor, data: { escalationId: e.id, kind: e.kind, resolution } });
  }
}
