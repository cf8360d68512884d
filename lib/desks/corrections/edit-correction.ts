import { z } from "zod";
import type { Prisma } from "@/generated/prisma";
import { type PersonRequest, userActor } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { getPrisma } from "@/lib/core/db/prisma";
import { appendRunAudit, writeTransaction } from "@/lib/core/db/transactions";
import { withDb } from "@/lib/desks/dashboard/context";
import { CorrectionStatus } from "@/packages/client/src/saga/vocabulary";
import { assertHeldBy, assertNotClosed, assertVersion } from "./correction-guard";
import { CORRECTION_INCLUDE, queueItem, recipientsOf } from "./correction-view";
import { correctionNotFound, ZCorrectionId } from "./get-correction";
import type { TCorrectionQueueItem } from "./views";

/** An edit of a draft: any of subject, body and recipients, made on the version the person saw. */
export const ZEditCorrection = z
  .object({
    /** The version the edit was made on (the page's `version`). */
    expectedVersion: z.number().int().min(0),
    /** The new subject. */
    subject: z.string().trim().min(1, "the subject cannot be empty: say what the message is about").max(300).optional(),
    /** The new body. */
    body: z.string().trim().min(1, "the body cannot be empty: write what the recipients should read").max(20_000).optional(),
    /** Who it goes to: one or more email addresses. */
    recipients: z
      .array(z.string().trim().pipe(z.email("not a valid email address: check for typos (name@example.com)")))
      .min(1, "name at least one recipient")
      .max(20)
      .optional(),
  })
  .refine((e) => e.subject !== undefined || e.body !== undefined || e.recipients !== undefined, { path: ["body"], message: "change the subject, the body or the recipients" });
/** An edit as the form sends it. */
export type TEditCorrection = z.input<typeof ZEditCorrection>;

/**
 * Edits a draft the signed-in person holds: fenced on the version they saw, DRAFT and their claim,
 * with its audit event (what changed, from and to) in one transaction. The drafted text is kept
 * (originalSubject/originalBody) at the first edit, so the history can show drafted against sent.
 * Empty text and invalid addresses are refused naming the field (400) and nothing changes.
 */
export async function editCorrection({ actor, correctionId, ...request }: PersonRequest<{ correctionId: string } & TEditCorrection>): Promise<TCorrectionQueueItem> {
  assertCan(actor, "correction.handle");
  const id = ZCorrectionId.parse(correctionId);
  const edit = ZEditCorrection.parse(request);
  const current = await withDb((prisma) => prisma.correction.findUnique({ where: { id }, include: CORRECTION_INCLUDE }));
  if (!current) throw correctionNotFound(id);
  assertNotClosed(current, "edited");
  assertHeldBy(current, actor.email, "edit");
  assertVersion(current, edit.expectedVersion);

  const before = { subject: current.subject, body: current.body, recipients: recipientsOf(current) };
  const after = { subject: edit.subject ?? before.subject, body: edit.body ?? before.body, recipients: edit.recipients ?? before.recipients };
  const changed = (["subject", "body", "recipients"] as const).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
  if (changed.length === 0) return queueItem(current, new Date());

  const { row, now } = await writeTransaction(await getPrisma(), async (tx, now) => {
    const { count } = await tx.correction.updateMany({
      where: { id, status: CorrectionStatus.DRAFT, claimedBy: actor.email, version: edit.expectedVersion },
      data: {
        subject: after.subject,
        body: after.body,
        recipients: after.recipients as Prisma.InputJsonValue,
        originalSubject: current.originalSubject ?? current.subject,
        originalBody: current.originalBody ?? current.body,
        editedBy: actor.email,
        editedAt: now,
        version: { increment: 1 },
      },
    });
    const row = await tx.correction.findUniqueOrThrow({ where: { id }, include: CORRECTION_INCLUDE });
    if (count === 1) {
      const diff = Object.fromEntries(changed.map((k) => [k, { from: before[k], to: after[k] }]));
      await appendRunAudit(tx, now, row.runId, row.stepId, { type: "correction.edited", actor: userActor(actor), data: { correctionId: id, version: row.version, changed, diff } });
    }
    return { row: count === 1 ? row : null, now, latest: row };
  }).then((r) => {
    if (r.row) return { row: r.row, now: r.now };
    // Someone changed it between the read and the write: say what, from the row as it is now.
    assertNotClosed(r.latest, "edited");
    assertHeldBy(r.latest, actor.email, "edit");
    assertVersion(r.latest, edit.expectedVersion);
    throw new ApiError("CONFLICT", `Correction ${id} changed while it was being saved; reload it and try again. Nothing was changed.`);
  });
  return queueItem(row, now, { claimedByName: actor.name });
}
