import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { toWebhookView } from "./find-webhooks";
import type { TWebhookView } from "./webhook-views";
import { writeTransaction } from "@/lib/core/db/transactions";

/** A webhook's audit chain. */
export function webhookScope(webhookId: string): string {
  return `webhook:${webhookId}`;
}

/** Turn a webhook's deliveries off or on. */
export const ZSetWebhookEnabledRequest = z.object({
  /** `whk_...` */
  webhookId: z.string().trim().min(1).max(80),
  /** false: its deliveries stop (each attempt fails "disabled" until it is enabled and replayed). */
  enabled: z.boolean(),
});
export type TSetWebhookEnabledRequest = z.infer<typeof ZSetWebhookEnabledRequest>;

/**
 * An admin disables or enables a webhook; the change and its `webhook.disabled` / `webhook.enabled`
 * audit event commit together. Setting the state it already has changes nothing and records nothing.
 */
export async function setWebhookEnabled(prisma: PrismaClient, input: TSetWebhookEnabledRequest & { by: string }): Promise<TWebhookView> {
  const { webhookId, enabled } = ZSetWebhookEnabledRequest.parse(input);
  const row = await writeTransaction(prisma, async (tx, now) => {
    const { count } = await tx.webhook.updateMany({ where: { id: webhookId, enabled: !enabled }, data: { enabled } });
    const hook = await tx.webhook.findUnique({ where: { id: webhookId } });
    if (!hook) throw new ApiError("NOT_FOUND", `Webhook ${webhookId} does not exist; reload the webhooks page.`, { details: [{ path: "webhookId", message: "no such webhook" }] });
    if (count > 0) {
      await appendAuditLink(tx, now, { scope: webhookScope(hook.id), runId: null, stepId: null, type: enabled ? "webhook.enabled" : "webhook.disabled", actor: { type: "user", id: input.by }, data: { name: hook.name } });
    }
    return hook;
  });
  return toWebhookView(prisma, row);
}
