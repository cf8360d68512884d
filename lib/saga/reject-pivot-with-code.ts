/**
 * A rejection an agent can act on: a code from a closed list (PivotRejectionCode) beside the
 * reason text, both stored on the pivot, so the agent reads `reasonCode` from GET /api/v1/pivots/{id}
 * and revises, waits or unwinds without parsing prose. Framework-free: a store in.
 */
import { SagaError } from "./errors";
import type { Actor, PivotRecord, SagaStore } from "./store";
import { PIVOT_REJECTION_CODES, PivotStatus, REJECTION_NEXT_STEP, type PivotRejectionCode } from "./vocabulary";

/** A rejection with a code. */
export interface RejectPivotWithCodeInput {
  /** The pivot. */
  pivotId: string;
  /** The plan hash the reviewer's page loaded. */
  planHash: string;
  /** What the agent should do, as a code. */
  reasonCode: PivotRejectionCode;
  /** Why, in words (required: the agent and the audit log read it). */
  reason: string;
  /** The reviewer. */
  actor: Actor;
}

/**
 * Rejects a PENDING pivot whose plan hash is `planHash` (the run returns to RUNNING). Null when it
 * was decided, revised or edited meanwhile, or the run stopped waiting: the caller reads the pivot
 * and says which. Throws INVALID_ARGS for a missing reason or a code outside the list.
 */
export async function rejectPivotWithCode(store: SagaStore, input: RejectPivotWithCodeInput): Promise<PivotRecord | null> {
  const reason = input.reason.trim();
  if (!reason) throw new SagaError("INVALID_ARGS", "A rejection needs a reason: it goes back to the agent.", [{ path: "reason", message: "required when rejecting" }]);
  if (!PIVOT_REJECTION_CODES.includes(input.reasonCode)) {
    throw new SagaError("INVALID_ARGS", `reasonCode must be one of ${PIVOT_REJECTION_CODES.join(", ")}.`, [{ path: "reasonCode", message: "unknown code" }]);
  }
  return store.decidePivot(
    input.pivotId,
    { status: PivotStatus.REJECTED, decidedBy: input.actor.id, reason, expectedPlanHash: input.planHash, reasonCode: input.reasonCode },
    {
      type: "pivot.rejected",
      actor: input.actor,
      data: { pivotId: input.pivotId, planHash: input.planHash, reason, reasonCode: input.reasonCode, agentShould: REJECTION_NEXT_STEP[input.reasonCode] },
    },
  );
}
