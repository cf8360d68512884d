import type { PrismaClient } from "@/generated/prisma";
import { findApprovalLink, linkState } from "@/lib/server/approvals/approval-links";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { auditRefusal, endedLink, forwardedLink, unknownLink, usedLink } from "./link-refusals";
import type { TLinkRefusal } from "./views";

/** What opening a link comes to: its confirm page, or why not. */
export type OpenedLink = { ok: true; linkId: string } | { ok: false; refusal: TLinkRefusal };

/**
 * A signed-in person opens an approval link (GET or HEAD): never a decision. The link must be theirs
 * (a forwarded one is 403), unused (409), and still usable (410: expired, the plan changed, the pivot
 * decided, the approver no longer one); each refusal of a known link is audited. When it is usable,
 * the person goes on to its confirm page, which shows the whole pivot and asks for a POST.
 */
export async function openApprovalLink({ actor, prisma, secret }: PersonRequest<{ prisma: PrismaClient; secret: string }>): Promise<OpenedLink> {
  assertCan(actor, "read");
  const link = await findApprovalLink(prisma, secret);
  if (!link) return { ok: false, refusal: unknownLink() };
  if (link.userId !== actor.id) {
    await auditRefusal(prisma, link, actor, "forwarded");
    return { ok: false, refusal: forwardedLink() };
  }
  const state = await linkState(prisma, link);
  if (state.kind === "used") {
    await auditRefusal(prisma, link, actor, "used");
    return { ok: false, refusal: usedLink(link) };
  }
  if (state.kind === "ended") {
    await auditRefusal(prisma, link, actor, state.reason);
    return { ok: false, refusal: endedLink(link, state.reason) };
  }
  return { ok: true, linkId: link.id };
}
