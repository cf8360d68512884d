import { randomBytes } from "node:crypto";
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { ApiError } from "@/lib/api/errors";
import { databaseNow } from "@/lib/db/dialect";
import { onConnection } from "@/lib/db/prisma-saga-store";
import { randomIds } from "@/lib/saga/ids";
import { toWebhookView } from "./find-webhooks";
import { ZCreateWebhookRequest, type TCreateWebhookRequest, type TWebhookView } from "./webhook-views";

/**
 * Registers a webhook. Its signing secret is returned this once (the admin gives it to the
 * receiver); the row keeps it because the notifier must sign with it.
 */
export async function createWebhook(prisma: PrismaClient, input: TCreateWebhookRequest & { createdBy: string }): Promise<{ webhook: TWebhookView; secret: string }> {
  const { name, url, topics } = ZCreateWebhookRequest.parse(input);
  const secret = `whsec_${randomBytes(32).toString("base64url")}`;
  try {
    const row = await onConnection(prisma, async () => {
      const now = await databaseNow(prisma);
      return prisma.webhook.create({ data: { id: randomIds.next("whk"), name, url, secret, topics: [...new Set(topics)], createdBy: input.createdBy, createdAt: now } });
    });
    return { webhook: await toWebhookView(prisma, row), secret };
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") {
      throw new ApiError("CONFLICT", `A webhook named "${name}" already exists; pick another name.`, { details: [{ path: "name", message: "taken" }] });
    }
    throw e;
  }
}
