import { type PersonRequest, userActor } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { getPrisma } from "@/lib/core/db/prisma";
import { appendRunAudit, writeTransaction } from "@/lib/core/db/transactions";
import { holderName } from "@/lib/desks/escalations/claim-escalation";
import { CorrectionStatus } from "@/packages/client/src/saga/vocabulary";
import { CORRECTION_INCLUDE, correctionState, queueItem } from "./correction-view";
import { correctionNotFound, ZCorrectionId } from "./get-correction";
import type { TCorrectionClaimResult } from "./views";

/**
 * Gives a draft the signed-in person holds back to the queue (fenced on `claimedBy = me` and DRAFT),
 * with its audit event. Refused as a value when someone else holds it, nobody does, or it is closed.
 */
export async function releaseCorrection({ actor, correctionId }: PersonRequest<{ correctionId: string }>): Promise<TCorrectionClaimResult> {
  assertCan(actor, "correction.handle");
  const id = ZCorrectionId.parse(correctionId);
  const me = actor.email;
  const { row, now, released } = await writeTransaction(await getPrisma(), async (tx, now) => {
    const { count } = await tx.correction.updateMany({
      where: { id, status: CorrectionStatus.DRAFT, claimedBy: me },
      data: { claimedBy: null, claimedAt: null, version: { increment: 1 } },
    });
    const row = await tx.correction.findUnique({ where: { id }, include: CORRECTION_INCLUDE });
    if (row && count === 1) {
      await appendRunAudit(tx, now, row.runId, row.stepId, { type: "correction.released", actor: userActor(actor), data: { correctionId: id, version: row.version } });
    }
    return { row, now, released: count === 1 };
  });
  if (!row) throw correctionNotFound(id);
  if (released) return { ok: true, correction: queueItem(row, now) };
  if (row.status !== CorrectionStatus.DRAFT) return { ok: false, reason: "closed", state: correctionState(row) };
  if (!row.claimedBy) return { ok: false, reason: "not_claimed" };
  return { ok: false, reason: "held", heldBy: row.claimedBy, heldByName: await holderName(row.claimedBy), claimedAt: row.claimedAt?.toISOString() ?? null };
}
