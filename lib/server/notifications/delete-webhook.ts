import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { webhookScope } from "./set-webhook-enabled";
import { DeliveryStatus } from "@/lib/core/outbox/vocabulary";
import { writeTransaction } from "@/lib/core/db/transactions";

/** Which webhook to delete. */
export const ZDeleteWebhookRequest = z.object({
  /** `whk_...` */
  webhookId: z.string().trim().min(1).max(80),
});
export type TDeleteWebhookRequest = z.infer<typeof ZDeleteWebhookRequest>;

/** What was deleted. */
export const ZDeletedWebhook = z.object({ webhookId: z.string(), name: z.string(), cancelledDeliveries: z.number().int() });
export type TDeletedWebhook = z.infer<typeof ZDeletedWebhook>;

/**
 * An admin deletes a webhook: its deliveries still waiting are given up (FAILED, "the webhook was
 * deleted"), the log rows stay for the record, and the deletion's `webhook.deleted` audit event
 * (with the name and URL it had) commits with it. Its secret goes with the row.
 */
export async function deleteWebhook(prisma: PrismaClient, input: TDeleteWebhookRequest & { by: string }): Promise<TDeletedWebhook> {
  const { webhookId } = ZDeleteWebhookRequest.parse(input);
  return writeTransaction(prisma, async (tx, now) => {
    const hook = await tx.webhook.findUnique({ where: { id: webhookId } });
    if (!hook) throw new ApiError("NOT_FOUND", `Webhook ${webhookId} does not exist; reload the webhooks page.`, { details: [{ path: "webhookId", message: "no such webhook" }] });
    const { count } = await tx.notificationDelivery.updateMany({
      where: { webhookId, status: DeliveryStatus.PENDING },
      data: { status: DeliveryStatus.FAILED, lastError: "the webhook was deleted", nextAttemptAt: now },
    });
    await tx.webhook.delete({ where: { id: webhookId } });
    await appendAuditLink(tx, now, { scope: webhookScope(hook.id), runId: null, stepId: null, type: "webhook.deleted", actor: { type: "user", id: input.by }, data: { name: hook.name, url: hook.url, cancelledDeliveries: count } });
    return { webhookId, name: hook.name, cancelledDeliveries: count };
  });
}
