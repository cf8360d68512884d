import { z } from "zod";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { PIVOT_REJECTION_CODES } from "@/packages/client/src/saga/vocabulary";
import { decidePivotFor } from "./decide-pivot";
import type { TPivotDecisionResult } from "@/lib/desks/pivots/views";

/** A rejection: the reason goes back to the agent, so it is required. */
export const ZRejectPivotRequest = z.object({
  /** The pivot. */
  pivotId: z.string().trim().min(1).max(80),
  /** The plan hash the reviewer's page loaded. */
  planHash: z.string().trim().min(1).max(128),
  /** Why: the agent reads it to revise or unwind. */
  reason: z.string().trim().min(1, "say why: the reason goes back to the agent").max(2000),
  /** What the agent should do next, from a closed list (it acts on the code, the text explains). */
  reasonCode: z.enum(PIVOT_REJECTION_CODES).default("OTHER"),
});
/** A rejection request. */
export type TRejectPivotRequest = z.input<typeof ZRejectPivotRequest>;

/**
 * Rejects a pending pivot as the signed-in reviewer, with a reason for the agent (the run returns to
 * RUNNING so the agent can revise or unwind) and a code saying which (`reasonCode`, default OTHER).
 * Bound to the plan hash like an approval; refusals are values. A missing reason is a 400.
 */
export async function rejectPivot({ actor, ...request }: PersonRequest<TRejectPivotRequest>): Promise<TPivotDecisionResult> {
  assertCan(actor, "pivot.decide");
  const { pivotId, planHash, reason, reasonCode } = ZRejectPivotRequest.parse(request);
  return decidePivotFor(actor, { pivotId, planHash, approve: false, reason, reasonCode });
}
