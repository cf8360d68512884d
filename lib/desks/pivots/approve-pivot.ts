import { z } from "zod";
import { requireUser } from "@/lib/server/auth/current-user";
import { decidePivotFor } from "./decide-pivot";
import type { TPivotDecisionResult } from "@/lib/desks/dashboard/views";

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
export async function approvePivot(request: TApprovePivotRequest): Promise<TPivotDecisionResult> {
  const user = await requireUser("pivot.decide");
  const { pivotId, planHash } = ZApprovePivotRequest.parse(request);
  return decidePivotFor(user, { pivotId, planHash, approve: true, reason: null });
}
