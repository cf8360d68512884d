/**
 * What a person is told when an approval link does not work, and the audit event each refusal of a
 * known link writes on the pivot's run chain (`approval_link.refused`, with who tried and why).
 */
import type { ApprovalLink, PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { runScope } from "@/lib/saga/store";
import type { LinkEndReason } from "@/lib/server/approvals/approval-links";
import { userActor, type CurrentUser } from "@/lib/server/auth/current-user";
import type { TLinkRefusal } from "./views";

/** Words for a link that ended unused. */
const ENDED_WORDS: Record<LinkEndReason, string> = {
  plan_changed: "The plan changed after this email was sent (edited by a reviewer or revised by the agent), so the link no longer works: approving it would approve a plan you have not seen.",
  decided: "This pivot was already decided (by another reviewer, or rejected when it expired), so the link no longer works.",
  not_an_approver: "Your account may no longer decide pivots, so the link no longer works.",
  resent: "A newer email about this pivot replaced this one; use the link in the newest email.",
  expired: "This link has expired: links work for 72 hours at most, and never past the pivot's own deadline.",
};

/** The refusal of a link nobody sent with this secret. */
export function unknownLink(): TLinkRefusal {
  return { status: 404, title: "This approval link is not known", message: "Sagaboard sent no link like this one. Check that the whole address was copied, or open the pivot from the runs list.", pivotId: null };
}

/** The refusal of a used link. */
export function usedLink(link: ApprovalLink): TLinkRefusal {
  const what = link.outcome === "approved" ? "approved the pivot" : link.outcome === "rejected" ? "rejected the pivot" : link.outcome === "first_approval" ? "gave the first of two approvals" : "used it";
  return {
    status: 409,
    title: "This approval link was already used",
    message: `It works once: you ${what} with it at ${link.usedAt?.toISOString().replace("T", " ").slice(0, 16) ?? "an earlier time"} UTC. Open the pivot to see where it stands.`,
    pivotId: link.pivotId,
  };
}

/** The refusal of a link that ended unused. */
export function endedLink(link: ApprovalLink, reason: LinkEndReason): TLinkRefusal {
  return { status: 410, title: "This approval link no longer works", message: `${ENDED_WORDS[reason]} Open the pivot to decide it there.`, pivotId: link.pivotId };
}

/** The refusal of someone else's link (a forwarded email). */
export function forwardedLink(): TLinkRefusal {
  return {
    status: 403,
    title: "This approval link was sent to someone else",
    message: "Each approval email carries a link for its one recipient, and you are signed in as another person. Nothing was decided. If you review pivots, open it from the runs list; your decision is then yours.",
    pivotId: null,
  };
}

/** Writes `approval_link.refused` on the pivot's run chain: who tried which link, and why it was refused. */
export async function auditRefusal(prisma: PrismaClient, link: ApprovalLink, actor: CurrentUser, reason: string): Promise<void> {
  const pivot = await onConnection(prisma, () => prisma.pivot.findUnique({ where: { id: link.pivotId }, select: { runId: true } }));
  if (!pivot) return;
  await writeTransaction(prisma, async (tx, now) => {
    await appendAuditLink(tx, now, {
      scope: runScope(pivot.runId),
      runId: pivot.runId,
      stepId: null,
      type: "approval_link.refused",
      actor: userActor(actor),
      data: { linkId: link.id, pivotId: link.pivotId, reason, sentTo: link.userId },
    });
  });
}
