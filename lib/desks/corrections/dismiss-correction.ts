import { z } from "zod";
import { type PersonRequest, userActor } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { getPrisma } from "@/lib/core/db/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { finishUnwoundRun } from "@/packages/client/src/saga/finish-unwound-run";
import { appendRunAudit, writeTransaction } from "@/lib/core/db/transactions";
import { withDb } from "@/lib/desks/dashboard/context";
import { CorrectionStatus } from "@/packages/client/src/saga/vocabulary";
import { assertHeldBy, assertNotClosed } from "./correction-guard";
import { CORRECTION_INCLUDE, queueItem } from "./correction-view";
import { correctionNotFound, ZCorrectionId } from "./get-correction";
import type { TCorrectionQueueItem } from "./views";

/** A dismissal: why nothing is sent. */
export const ZDismissCorrection = z.object({
  /** Why (e.g. "the customer never saw the original", "handled by phone"); kept in the history. */
  reason: z.string().trim().min(1, "say why no correction is sent (e.g. the customer never saw the original)").max(2000),
});
/** A dismissal as the form sends it. */
export type TDismissCorrection = z.input<typeof ZDismissCorrection>;

/**
 * Dismisses a draft the signed-in person holds: nothing is sent, and who, when and why are recorded
 * (row and audit event in one transaction, fenced on DRAFT and their claim).
 */
export async function dismissCorrection({ actor, correctionId, ...request }: PersonRequest<{ correctionId: string } & TDismissCorrection>): Promise<TCorrectionQueueItem> {
  assertCan(actor, "correction.handle");
  const id = ZCorrectionId.parse(correctionId);
  const { reason } = ZDismissCorrection.parse(request);
  const current = await withDb((prisma) => prisma.correction.findUnique({ where: { id }, include: CORRECTION_INCLUDE }));
  if (!current) throw correctionNotFound(id);
  assertNotClosed(current, "dismissed");
  assertHeldBy(current, actor.email, "dismiss");
  const { row, now, dismissed } = await writeTransaction(await getPrisma(), async (tx, now) => {
    const { count } = await tx.correction.updateMany({
      where: { id, status: CorrectionStatus.DRAFT, claimedBy: actor.email },
      data: { status: CorrectionStatus.DISMISSED, dismissedBy: actor.email, dismissedAt: now, dismissReason: reason, version: { increment: 1 } },
    });
    const row = await tx.correction.findUniqueOrThrow({ where: { id }, include: CORRECTION_INCLUDE });
    if (count === 1) await appendRunAudit(tx, now, row.runId, row.stepId, { type: "correction.dismissed", actor: userActor(actor), data: { correctionId: id, reason } });
    return { row, now, dismissed: count === 1 };
  });
  if (!dismissed) {
    assertNotClosed(row, "dismissed");
    assertHeldBy(row, actor.email, "dismiss");
    throw new ApiError("CONFLICT", `Correction ${id} changed while it was being dismissed; reload it. Nothing was changed.`);
  }
  // The last thing left for people may have been this correction: the run is then UNWOUND.
  await finishUnwoundRun(sharedSagaStore(await getPrisma()), row.runId, userActor(actor));
  return queueItem(row, now);
}
