import { z } from "zod";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { decidePivotFor } from "./decide-pivot";
import type { TPivotDecisionResult } from "@/lib/desks/pivots/views";

/** An approval, bound to the plan the reviewer saw. */
export const ZApprovePivotRequest = z.object({
  /** The pivot. */
  pivotId: z.string().trim().min(1).max(80),
  /** The plan hash the reviewer's page loaded. */
  planHash: z.string().trim().min(1).max(128),
});
/** An approval request. */
export type TApprovePivotRequest = z.input<typeof ZApprovePivotRequest>;

/**
 * Approves a pending pivot as the signed-in reviewer. Refused as a value (`ok: false`) when the plan
 * changed since the page loaded (a revised plan, or a tool policy edited since the plan was made:
 * `plan_changed` with the current plan), when someone decided first, or when the run stopped
 * waiting. The approval and its audit event commit together (SagaEngine.decidePivot).
 */
export async function approvePivot({ actor, ...request }: PersonRequest<TApprovePivotRequest>): Promise<TPivotDecisionResult> {
  assertCan(actor, "pivot.decide");
  const { pivotId, planHash } = ZApprovePivotRequest.parse(request);
  return decidePivotFor(actor, { pivotId, planHash, approve: true, reason: null });
}
