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
 * Claims a correction draft for the signed-in support person, once: a fenced update (`WHERE status =
 * 'DRAFT' AND claimedBy IS NULL`) and its audit event in one transaction, so of two people claiming
 * at once exactly one wins; the other gets `{ ok: false, reason: "held", heldBy }`. Claiming a draft
 * you already hold succeeds again without a second event.
 */
export async function claimCorrection({ actor, correctionId }: PersonRequest<{ correctionId: string }>): Promise<TCorrectionClaimResult> {
  assertCan(actor, "correction.handle");
  const id = ZCorrectionId.parse(correctionId);
  const me = actor.email;
  const { row, now } = await writeTransaction(await getPrisma(), async (tx, now) => {
    const { count } = await tx.correction.updateMany({
      where: { id, status: CorrectionStatus.DRAFT, claimedBy: null },
      data: { claimedBy: me, claimedAt: now, version: { increment: 1 } },
    });
    const row = await tx.correction.findUnique({ where: { id }, include: CORRECTION_INCLUDE });
    if (row && count === 1) {
      await appendRunAudit(tx, now, row.runId, row.stepId, { type: "correction.claimed", actor: userActor(actor), data: { correctionId: id, version: row.version } });
    }
    return { row, now };
  });
  if (!row) throw correctionNotFound(id);
  if (row.status !== CorrectionStatus.DRAFT) return { ok: false, reason: "closed", state: correctionState(row) };
  if (row.claimedBy === me) return { ok: true, correction: queueItem(row, now, { claimedByName: actor.name }) };
  const heldBy = row.claimedBy ?? "someone";
  return { ok: false, reason: "held", heldBy, heldByName: await holderName(heldBy), claimedAt: row.claimedAt?.toISOString() ?? null };
}
