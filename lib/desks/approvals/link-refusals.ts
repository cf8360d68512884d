/**
 * What a person is told when an approval link does not work, and the audit event each refusal of a
 * known link writes on its item's run chain (`approval_link.refused`, with who tried and why).
 */
import type { ApprovalLink, PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { runScope } from "@/packages/client/src/saga/store";
import type { LinkEndReason } from "@/lib/server/approvals/approval-links";
import { userActor, type CurrentUser } from "@/lib/server/auth/current-user";
import type { TLinkRefusal } from "./views";

/** What the link decides, in words ("the pivot", "the held call"). */
function itemWords(link: Pick<ApprovalLink, "escalationId">): string {
  return link.escalationId ? "held call" : "pivot";
}

/** Where the link's item is in the dashboard. */
export function itemPathOf(link: Pick<ApprovalLink, "pivotId" | "escalationId">): string | null {
  if (link.pivotId) return `/pivots/${encodeURIComponent(link.pivotId)}`;
  if (link.escalationId) return `/escalations/${encodeURIComponent(link.escalationId)}`;
  return null;
}

/** Words for a link that ended unused. */
function endedWords(reason: LinkEndReason, item: string): string {
  switch (reason) {
    case "plan_changed":
      return "The plan changed after this email was sent (edited by a reviewer or revised by the agent), so the link no longer works: approving it would approve a plan you have not seen.";
    case "decided":
      return `This ${item} was already decided (by another reviewer, or rejected when it expired), so the link no longer works.`;
    case "reassigned":
      return `Another reviewer took this ${item} to decide it, so the link no longer works.`;
    case "not_an_approver":
      return `Your account may no longer decide such items, so the link no longer works.`;
    case "resent":
      return `A newer email about this ${item} replaced this one; use the link in the newest email.`;
    case "expired":
      return `This link has expired: links work for 72 hours at most, and never past the ${item}'s own deadline.`;
  }
}

/** The refusal of a link nobody sent with this secret. */
export function unknownLink(): TLinkRefusal {
  return { status: 404, title: "This approval link is not known", message: "Sagaboard sent no link like this one. Check that the whole address was copied, or open the item from the runs list or the queue.", itemPath: null };
}

/** The refusal of a used link. */
export function usedLink(link: ApprovalLink): TLinkRefusal {
  const item = itemWords(link);
  const what = link.outcome === "approved" ? `approved the ${item}` : link.outcome === "rejected" ? `rejected the ${item}` : link.outcome === "first_approval" ? "gave the first of two approvals" : "used it";
  return {
    status: 409,
    title: "This approval link was already used",
    message: `It works once: you ${what} with it at ${link.usedAt?.toISOString().replace("T", " ").slice(0, 16) ?? "an earlier time"} UTC. Open the ${item} to see where it stands.`,
    itemPath: itemPathOf(link),
  };
}

/** The refusal of a link that ended unused. */
export function endedLink(link: ApprovalLink, reason: LinkEndReason): TLinkRefusal {
  return { status: 410, title: "This approval link no longer works", message: `${endedWords(reason, itemWords(link))} Open the ${itemWords(link)} to decide it there.`, itemPath: itemPathOf(link) };
}

/** The refusal of someone else's link (a forwarded email). */
export function forwardedLink(): TLinkRefusal {
  return {
    status: 403,
    title: "This approval link was sent to someone else",
    message: "Each approval email carries a link for its one recipient, and you are signed in as another person. Nothing was decided. If you review such items, open it from the runs list or the queue; your decision is then yours.",
    itemPath: null,
  };
}

/** The run a link's item belongs to, or null when the item is gone. */
export async function runOfLink(prisma: PrismaClient, link: Pick<ApprovalLink, "pivotId" | "escalationId">): Promise<string | null> {
  return onConnection(prisma, async () =>
    link.pivotId
      ? ((await prisma.pivot.findUnique({ where: { id: link.pivotId }, select: { runId: true } }))?.runId ?? null)
      : ((await prisma.escalation.findUnique({ where: { id: link.escalationId ?? "" }, select: { runId: true } }))?.runId ?? null),
  );
}

/** Writes `approval_link.refused` on the item's run chain: who tried which link, and why it was refused. */
export async function auditRefusal(prisma: PrismaClient, link: ApprovalLink, actor: CurrentUser, reason: string): Promise<void> {
  const runId = await runOfLink(prisma, link);
  if (!runId) return;
  await writeTransaction(prisma, async (tx, now) => {
    await appendAuditLink(tx, now, {
      scope: runScope(runId),
      runId,
      stepId: null,
      type: "approval_link.refused",
      actor: userActor(actor),
      data: { linkId: link.id, ...(link.pivotId ? { pivotId: link.pivotId } : { escalationId: link.escalationId }), reason, sentTo: link.userId },
    });
  });
}
