import type { NotificationEvent, PrismaClient } from "@/generated/prisma";
import { NotificationTopic } from "@/lib/core/outbox/vocabulary";
import { approvalLinkUrl, mintApprovalLink } from "./approval-links";

/**
 * The lines an approval email adds for its one recipient: a link of their own to decide the waiting
 * pivot (made now, for this delivery: a retried send ends the link the failed one carried). None for
 * another topic, a pivot that no longer waits, or a recipient who may not decide pivots.
 */
export async function approvalEmailLines(prisma: PrismaClient, delivery: { id: string; target: string; event: Pick<NotificationEvent, "topic" | "subjectId"> }, baseUrl: string): Promise<string[]> {
  const pivotId = delivery.event.subjectId;
  if (delivery.event.topic !== NotificationTopic.pivot_waiting || !pivotId?.startsWith("piv_")) return [];
  const minted = await mintApprovalLink(prisma, { pivotId, email: delivery.target, deliveryId: delivery.id });
  if (!minted) return [];
  const until = minted.link.expiresAt.toISOString().replace("T", " ").slice(0, 16);
  return [
    "",
    `Decide from this email: ${approvalLinkUrl(baseUrl, minted.secret)}`,
    `The link is yours alone. It opens a page that shows the whole plan and asks you to confirm; it works once, until ${until} UTC, and stops working if the plan changes or the pivot is decided first.`,
  ];
}
