/**
 * A correction becomes SENT when its send run's log says every approved message exists at the
 * provider (each step CONFIRMED, by the call or by reconcile finding its key). The log is the truth;
 * the correction row follows it. This runs whenever a correction is read (queue, page, a repeated
 * Send), so whichever worker sent it (in-process or over the API) and whenever its task was
 * recorded, the desk shows SENT with the message id from the step.
 */
import { getPrisma } from "@/lib/core/db/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { finishUnwoundRun } from "@/packages/client/src/saga/finish-unwound-run";
import { appendRunAudit, writeTransaction } from "@/lib/core/db/transactions";
import { withDb } from "@/lib/desks/dashboard/context";
import { CorrectionStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import { sendRunId } from "./correction-view";

/** The audit actor of a settled send: the log said so, nobody clicked. */
const SETTLE_ACTOR = { type: "system", id: "correction-desk" } as const;

/** The send steps of each SENDING correction's run, in step order (only runs that have any). */
export async function sendStepsOf(correctionIds: readonly string[]) {
  if (correctionIds.length === 0) return new Map<string, { id: string; stepIdx: number; status: string; externalRef: string | null; updatedAt: Date }[]>();
  const runIds = correctionIds.map(sendRunId);
  const steps = await withDb((prisma) =>
    prisma.step.findMany({
      where: { runId: { in: runIds } },
      select: { id: true, runId: true, stepIdx: true, status: true, externalRef: true, updatedAt: true },
      orderBy: { stepIdx: "asc" },
    }),
  );
  const byCorrection = new Map<string, typeof steps>();
  for (const id of correctionIds) byCorrection.set(id, steps.filter((s) => s.runId === sendRunId(id)));
  return byCorrection;
}

/**
 * Marks SENDING corrections SENT whose send steps are all CONFIRMED (`expected`: messages per
 * correction, one per recipient): a fenced update (`WHERE status = 'SENDING'`) and the
 * `correction.sent` audit event in one transaction, so two readers settle it once.
 */
export async function settleCorrectionSends(rows: readonly { id: string; expected: number }[]): Promise<void> {
  const stepsBy = await sendStepsOf(rows.map((r) => r.id));
  for (const { id, expected } of rows) {
    const steps = stepsBy.get(id) ?? [];
    if (steps.length < expected || steps.length === 0 || !steps.every((s) => s.status === StepStatus.CONFIRMED)) continue;
    const [first] = steps;
    if (!first) continue;
    const messageId = steps.map((s) => s.externalRef).filter(Boolean).join(", ") || null;
    const sentAt = steps.reduce((latest, s) => (s.updatedAt > latest ? s.updatedAt : latest), first.updatedAt);
    const settledRun = await writeTransaction(await getPrisma(), async (tx, now) => {
      const { count } = await tx.correction.updateMany({
        where: { id, status: CorrectionStatus.SENDING },
        data: { status: CorrectionStatus.SENT, sentAt, messageId, sendStepId: first.id, version: { increment: 1 } },
      });
      if (count !== 1) return null;
      const row = await tx.correction.findUniqueOrThrow({ where: { id }, select: { runId: true, stepId: true, sentBy: true } });
      await appendRunAudit(tx, now, row.runId, row.stepId, {
        type: "correction.sent",
        actor: SETTLE_ACTOR,
        data: { correctionId: id, sentBy: row.sentBy, messageId, sendRunId: sendRunId(id), sendStepIds: steps.map((s) => s.id) },
      });
      return row.runId;
    });
    // The last thing left for people may have been this correction: the run is then UNWOUND.
    if (settledRun) await finishUnwoundRun(sharedSagaStore(await getPrisma()), settledRun, SETTLE_ACTOR);
  }
}
