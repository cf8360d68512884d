import type { NotificationEvent, PrismaClient } from "@/generated/prisma";
import { NotificationTopic } from "@/lib/core/outbox/vocabulary";
import { approvalLinkUrl, mintApprovalLink, type LinkSubject } from "./approval-links";

/**
 * The lines an approval email adds for its one recipient: a link of their own to decide the waiting
 * pivot, or the held call an escalation raised (made now, for this delivery: a retried send ends the
 * link the failed one carried). None for another topic or another kind of escalation, an item that no
 * longer waits, or a recipient who may not decide it.
 */
export async function approvalEmailLines(prisma: PrismaClient, delivery: { id: string; target: string; event: Pick<NotificationEvent, "topic" | "subjectId"> }, baseUrl: string): Promise<string[]> {
  const id = delivery.event.subjectId ?? "";
  const subject: LinkSubject | null =
    delivery.event.topic === NotificationTopic.pivot_waiting && id.startsWith("piv_")
      ? { kind: "pivot", pivotId: id }
      : delivery.event.topic === NotificationTopic.escalation_raised && id.startsWith("esc_")
        ? { kind: "escalation", escalationId: id }
        : null;
  if (!subject) return [];
  const minted = await mintApprovalLink(prisma, { subject, email: delivery.target, deliveryId: delivery.id });
  if (!minted) return [];
  const until = minted.link.expiresAt.toISOString().replace("T", " ").slice(0, 16);
  return [
    "",
    `Decide from this email: ${approvalLinkUrl(baseUrl, minted.secret)}`,
    `The link is yours alone. It opens a page that shows what you would approve and asks you to confirm; it works once, until ${until} UTC, and stops working if the plan changes or someone else decides first.`,
  ];
}
