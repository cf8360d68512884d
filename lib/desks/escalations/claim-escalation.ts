import { z } from "zod";
import { assertEscalationWorker } from "./escalation-access";
import { type PersonRequest, userActor } from "@/lib/server/auth/current-user";
import { SagaError } from "@/packages/client/src/saga/errors";
import { EscalationStatus } from "@/packages/client/src/saga/vocabulary";
import { getPrisma } from "@/lib/core/db/prisma";
import { appendRunAudit, writeTransaction } from "@/lib/core/db/transactions";
import { withDb } from "@/lib/desks/dashboard/context";
import { ESCALATION_INCLUDE, queueItem, toolSystems } from "./escalation-view";
import type { TClaimResult } from "@/lib/desks/escalations/views";

/** An escalation id from a caller. */
export const ZEscalationId = z.string().trim().min(1).max(80);

/** The display name of the person holding a claim, when they are a dashboard user. */
export async function holderName(email: string): Promise<string | null> {
  const holder = await withDb((prisma) => prisma.user.findUnique({ where: { email }, select: { name: true } }));
  return holder?.name ?? null;
}

/**
 * Claims an escalation for the signed-in user, once: a fenced update (`WHERE id = ? AND status =
 * 'OPEN'`) and its audit event in one transaction, so of two people claiming at once exactly one
 * wins; the other gets `{ ok: false, reason: "held", heldBy }`. Claiming an item you already hold
 * succeeds again without a second audit event.
 */
export async function claimEscalation({ actor, escalationId }: PersonRequest<{ escalationId: string }>): Promise<TClaimResult> {
  const id = ZEscalationId.parse(escalationId);
  await assertEscalationWorker(actor, id);
  const me = actor.email;
  const outcome = await writeTransaction(await getPrisma(), async (tx, now) => {
    const { count } = await tx.escalation.updateMany({
      where: { id, status: EscalationStatus.OPEN },
      data: { status: EscalationStatus.CLAIMED, claimedBy: me, claimedAt: now },
    });
    const row = await tx.escalation.findUnique({ where: { id }, include: ESCALATION_INCLUDE });
    if (row && count === 1) {
      await appendRunAudit(tx, now, row.runId, row.stepId, {
        type: "escalation.claimed",
        actor: userActor(actor),
        data: { escalationId: id, kind: row.kind },
      });
    }
    return { row, now };
  });
  const { row, now } = outcome;
  if (!row) throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${id} does not exist; reload the queue.`);
  if (row.status === EscalationStatus.CLAIMED && row.claimedBy === me) return { ok: true, escalation: queueItem(row, now, await toolSystems([row])) };
  if (row.status === EscalationStatus.RESOLVED) return { ok: false, reason: "resolved", resolvedBy: row.resolvedBy };
  const heldBy = row.claimedBy ?? "someone";
  return { ok: false, reason: "held", heldBy, heldByName: await holderName(heldBy), claimedAt: row.claimedAt?.toISOString() ?? null };
}
