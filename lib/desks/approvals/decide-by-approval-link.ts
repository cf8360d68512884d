import { z } from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { runScope } from "@/lib/saga/store";
import { PIVOT_REJECTION_CODES } from "@/lib/saga/vocabulary";
import { hashLinkSecret, linkState } from "@/lib/server/approvals/approval-links";
import { userActor, type PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { decidePivotFor } from "@/lib/desks/pivots/decide-pivot";
import type { TPivotDecisionResult } from "@/lib/desks/pivots/views";
import { auditRefusal, endedLink, forwardedLink, unknownLink, usedLink } from "./link-refusals";
import type { TLinkRefusal } from "./views";

/** The confirm page's form, as its POST sends it. */
export const ZLinkDecisionForm = z.discriminatedUnion("decision", [
  z.object({
    decision: z.literal("approve"),
    /** The plan hash the confirm page showed. */
    planHash: z.string().trim().min(1).max(128),
  }),
  z.object({
    decision: z.literal("reject"),
    planHash: z.string().trim().min(1).max(128),
    /** Why: it goes back to the agent. */
    reason: z.string().trim().min(1, "say why: the reason goes back to the agent").max(2000),
    /** What the agent should do next. */
    reasonCode: z.enum(PIVOT_REJECTION_CODES).default("OTHER"),
  }),
]);
/** The confirm page's form. */
export type TLinkDecisionForm = z.infer<typeof ZLinkDecisionForm>;

/** What a decision through a link came to. */
export type LinkDecision = { ok: true; result: TPivotDecisionResult } | { ok: false; refusal: TLinkRefusal };

/**
 * Decides a pivot from an approval link's confirm page (the POST; nothing else decides): the link
 * must be the person's, unused, still usable, and for the plan the page showed. It is spent first,
 * in one fenced update with its audit event (`approval_link.used`), so two POSTs of one link decide
 * once; then the decision takes the one path the dashboard's takes (same rules, two approvers
 * included), as this person, and the outcome is written on the link.
 */
export async function decideByApprovalLink({ actor, prisma, linkId, secret, form }: PersonRequest<{ prisma: PrismaClient; linkId: string; secret: string | null; form: TLinkDecisionForm }>): Promise<LinkDecision> {
  assertCan(actor, "pivot.decide");
  const link = await onConnection(prisma, () => prisma.approvalLink.findUnique({ where: { id: linkId } }));
  if (!link || !secret || link.tokenHash !== hashLinkSecret(secret)) return { ok: false, refusal: unknownLink() };
  if (link.userId !== actor.id) {
    await auditRefusal(prisma, link, actor, "forwarded");
    return { ok: false, refusal: forwardedLink() };
  }
  const state = await linkState(prisma, link);
  if (state.kind !== "usable") {
    await auditRefusal(prisma, link, actor, state.kind === "used" ? "used" : state.reason);
    return { ok: false, refusal: state.kind === "used" ? usedLink(link) : endedLink(link, state.reason) };
  }
  if (form.planHash !== link.planHash) return { ok: false, refusal: endedLink(link, "plan_changed") };
  const pivot = await onConnection(prisma, () => prisma.pivot.findUniqueOrThrow({ where: { id: link.pivotId }, select: { runId: true } }));
  const spent = await writeTransaction(prisma, async (tx, now) => {
    const { count } = await tx.approvalLink.updateMany({ where: { id: link.id, usedAt: null, endedAt: null, expiresAt: { gt: now } }, data: { usedAt: now, outcome: "deciding" } });
    if (count === 0) return false;
    await appendAuditLink(tx, now, { scope: runScope(pivot.runId), runId: pivot.runId, stepId: null, type: "approval_link.used", actor: userActor(actor), data: { linkId: link.id, pivotId: link.pivotId, decision: form.decision } });
    return true;
  });
  if (!spent) {
    const now = await onConnection(prisma, () => prisma.approvalLink.findUniqueOrThrow({ where: { id: link.id } }));
    return { ok: false, refusal: now.usedAt ? usedLink(now) : endedLink(now, "expired") };
  }
  const result =
    form.decision === "approve"
      ? await decidePivotFor(actor, { pivotId: link.pivotId, planHash: link.planHash, approve: true, reason: null, via: "email" })
      : await decidePivotFor(actor, { pivotId: link.pivotId, planHash: link.planHash, approve: false, reason: form.reason, reasonCode: form.reasonCode, via: "email" });
  const outcome = result.ok ? (form.decision === "approve" ? "approved" : "rejected") : result.reason === "second_approver_needed" ? "first_approval" : `refused:${result.reason}`;
  await writeTransaction(prisma, (tx) => tx.approvalLink.updateMany({ where: { id: link.id }, data: { outcome } }));
  return { ok: true, result };
}
