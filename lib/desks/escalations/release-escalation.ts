import { assertEscalationWorker } from "./escalation-access";
import { type PersonRequest, userActor } from "@/lib/server/auth/current-user";
import { SagaError } from "@/packages/client/src/saga/errors";
import { EscalationStatus } from "@/packages/client/src/saga/vocabulary";
import { getPrisma } from "@/lib/core/db/prisma";
import { appendRunAudit, writeTransaction } from "@/lib/core/db/transactions";
import { holderName, ZEscalationId } from "./claim-escalation";
import { ESCALATION_INCLUDE, queueItem, toolSystems } from "./escalation-view";
import type { TClaimResult } from "@/lib/desks/escalations/views";

/**
 * Gives an escalation the signed-in user holds back to the queue (fenced on `claimedBy = me`), with
 * its audit event. Refused as a value when someone else holds it, nobody does, or it is resolved.
 */
export async function releaseEscalation({ actor, escalationId }: PersonRequest<{ escalationId: string }>): Promise<TClaimResult> {
  const id = ZEscalationId.parse(escalationId);
  await assertEscalationWorker(actor, id);
  const me = actor.email;
  const { row, now, released } = await writeTransaction(await getPrisma(), async (tx, now) => {
    const { count } = await tx.escalation.updateMany({
      where: { id, status: EscalationStatus.CLAIMED, claimedBy: me },
      data: { status: EscalationStatus.OPEN, claimedBy: null, claimedAt: null },
    });
    const row = await tx.escalation.findUnique({ where: { id }, include: ESCALATION_INCLUDE });
    if (row && count === 1) {
      await appendRunAudit(tx, now, row.runId, row.stepId, {
        type: "escalation.released",
        actor: userActor(actor),
        data: { escalationId: id, kind: row.kind },
      });
    }
    return { row, now, released: count === 1 };
  });
  if (!row) throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${id} does not exist; reload the queue.`);
  if (released) return { ok: true, escalation: queueItem(row, now, await toolSystems([row])) };
  if (row.status === EscalationStatus.RESOLVED) return { ok: false, reason: "resolved", resolvedBy: row.resolvedBy };
  if (row.status === EscalationStatus.OPEN) return { ok: false, reason: "not_claimed" };
  const heldBy = row.claimedBy ?? "someone";
  return { ok: false, reason: "held", heldBy, heldByName: await holderName(heldBy), claimedAt: row.claimedAt?.toISOString() ?? null };
}
