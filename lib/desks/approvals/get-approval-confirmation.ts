import type { PrismaClient } from "@/generated/prisma";
import { onConnection } from "@/lib/core/db/transactions";
import { hashLinkSecret, linkState } from "@/lib/server/approvals/approval-links";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { getEscalation } from "@/lib/desks/escalations/get-escalation";
import type { TEscalationDetail } from "@/lib/desks/escalations/views";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";
import type { TPivotScreen } from "@/lib/desks/pivots/views";
import { endedLink, forwardedLink, itemPathOf, unknownLink } from "./link-refusals";
import type { TLinkRefusal } from "./views";

/** The confirm page of an approval link. */
export type ApprovalConfirmation =
  /** Usable, for a pivot: the whole pivot as the pivot screen shows it, and until when the link works. */
  | { state: "usable"; linkId: string; expiresAt: string; planHash: string; subject: "pivot"; screen: TPivotScreen }
  /** Usable, for a held call: the escalation as its page shows it. */
  | { state: "usable"; linkId: string; expiresAt: string; planHash: string; subject: "escalation"; escalation: TEscalationDetail }
  /** The person used it from this page: what it did. */
  | { state: "done"; linkId: string; outcome: string; usedAt: string; itemPath: string | null; subject: "pivot" | "escalation" }
  /** It cannot be used here. */
  | { state: "refused"; refusal: TLinkRefusal };

/**
 * What an approval link's confirm page shows the signed-in person: the pivot screen's content
 * (every staged step and the plan, by system and audience) or the held call, read-only, with the form
 * that POSTs the decision; or what the link already did; or why it cannot be used. Reading it decides
 * nothing. `secret` is the link's, carried from the email's address in a cookie scoped to this flow.
 */
export async function getApprovalConfirmation({ actor, prisma, linkId, secret }: PersonRequest<{ prisma: PrismaClient; linkId: string; secret: string | null }>): Promise<ApprovalConfirmation> {
  assertCan(actor, "read");
  const link = await onConnection(prisma, () => prisma.approvalLink.findUnique({ where: { id: linkId } }));
  if (!link || !secret || link.tokenHash !== hashLinkSecret(secret)) return { state: "refused", refusal: unknownLink() };
  if (link.userId !== actor.id) return { state: "refused", refusal: forwardedLink() };
  const subject = link.pivotId ? "pivot" : "escalation";
  const state = await linkState(prisma, link);
  if (state.kind === "used") return { state: "done", linkId, outcome: link.outcome ?? "used", usedAt: link.usedAt!.toISOString(), itemPath: itemPathOf(link), subject };
  if (state.kind === "ended") return { state: "refused", refusal: endedLink(link, state.reason) };
  const base = { state: "usable" as const, linkId, expiresAt: link.expiresAt.toISOString(), planHash: link.planHash };
  return link.pivotId
    ? { ...base, subject: "pivot", screen: await getPivotScreen({ actor, pivotId: link.pivotId }) }
    : { ...base, subject: "escalation", escalation: await getEscalation({ actor, escalationId: link.escalationId ?? "" }) };
}
