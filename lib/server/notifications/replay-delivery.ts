import type { PrismaClient } from "@/generated/prisma";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { databaseNow } from "@/lib/core/db/dialect";
import { onConnection } from "@/lib/core/db/transactions";
import { toDeliveryView } from "./find-webhooks";
import { DeliveryStatus } from "@/lib/core/outbox/vocabulary";
import type { TDeliveryView } from "./webhook-views";

/**
 * An admin sends a delivery again: it goes back to PENDING, due now, under the same delivery id (the
 * receiver dedupes on it, so a replay of one it already took changes nothing there). A delivery a
 * notifier holds right now is refused: its attempt is under way.
 */
export async function replayDelivery(prisma: PrismaClient, input: { deliveryId: string; by: string }): Promise<TDeliveryView> {
  return onConnection(prisma, async () => {
    const now = await databaseNow(prisma);
    const { count } = await prisma.notificationDelivery.updateMany({
      where: { id: input.deliveryId, status: { in: [DeliveryStatus.DELIVERED, DeliveryStatus.FAILED, DeliveryStatus.PENDING] } },
      data: { status: DeliveryStatus.PENDING, nextAttemptAt: now, replayedBy: input.by, replayedAt: now },
    });
    const row = await prisma.notificationDelivery.findUnique({ where: { id: input.deliveryId }, include: { event: { select: { topic: true, eventType: true, runId: true, subjectId: true } } } });
    if (!row) throw new ApiError("NOT_FOUND", `Delivery ${input.deliveryId} does not exist; reload the webhook's log.`);
    if (count === 0) throw new ApiError("INVALID_TRANSITION", `Delivery ${input.deliveryId} is being sent right now; wait for the attempt to finish and replay it then if it failed.`);
    return toDeliveryView(row);
  });
}
