import { randomBytes } from "node:crypto";
import type { PrismaClient } from "@/generated/prisma";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { toWebhookView } from "./find-webhooks";
import { webhookScope } from "./set-webhook-enabled";
import { ZCreateWebhookRequest, type TCreateWebhookRequest, type TWebhookView } from "./webhook-views";
import { checkWebhookTarget, REFUSAL_WORDS, webhookTargetPolicy, type WebhookTargetPolicy } from "./webhook-target";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { writeTransaction } from "@/lib/core/db/transactions";

/**
 * Registers a webhook. Its target is checked first (lib/server/notifications/webhook-target.ts: public
 * addresses only, after DNS; again at every send). Its signing secret is returned this once (the
 * admin gives it to the receiver); the row keeps it because the notifier must sign with it. The row
 * and its `webhook.created` audit event commit together.
 */
export async function createWebhook(prisma: PrismaClient, input: TCreateWebhookRequest & { createdBy: string; targetPolicy?: WebhookTargetPolicy }): Promise<{ webhook: TWebhookView; secret: string }> {
  const { name, url, topics } = ZCreateWebhookRequest.parse(input);
  const target = await checkWebhookTarget(url, input.targetPolicy ?? webhookTargetPolicy());
  if (!target.ok) throw new ApiError("VALIDATION_FAILED", `The webhook's URL is refused: ${REFUSAL_WORDS[target.reason]}.`, { details: [{ path: "url", message: REFUSAL_WORDS[target.reason] }] });
  const secret = `whsec_${randomBytes(32).toString("base64url")}`;
  try {
    const row = await writeTransaction(prisma, async (tx, now) => {
      const created = await tx.webhook.create({ data: { id: randomIds.next("whk"), name, url, secret, topics: [...new Set(topics)], createdBy: input.createdBy, createdAt: now } });
      await appendAuditLink(tx, now, { scope: webhookScope(created.id), runId: null, stepId: null, type: "webhook.created", actor: { type: "user", id: input.createdBy }, data: { name, url, topics: [...new Set(topics)] } });
      return created;
    });
    return { webhook: await toWebhookView(prisma, row), secret };
  } catch (e) {
    if (isUniqueViolation(e)) {
      throw new ApiError("CONFLICT", `A webhook named "${name}" already exists; pick another name.`, { details: [{ path: "name", message: "taken" }] });
    }
    throw e;
  }
}
