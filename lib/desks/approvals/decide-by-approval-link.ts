import { z } from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { runScope } from "@/packages/client/src/saga/store";
import { EscalationKind, PIVOT_REJECTION_CODES } from "@/packages/client/src/saga/vocabulary";
import { actionOf, hashLinkSecret, linkState } from "@/lib/server/approvals/approval-links";
import { userActor, type PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { decidePivotFor } from "@/lib/desks/pivots/decide-pivot";
import { claimEscalation } from "@/lib/desks/escalations/claim-escalation";
import { resolveEscalation } from "@/lib/desks/escalations/resolve-escalation";
import { auditRefusal, endedLink, forwardedLink, runOfLink, unknownLink, usedLink } from "./link-refusals";
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

/** What a decision through a link came to: what it did (approved, rejected, first_approval, refused:<why>), or why the link was refused. */
export type LinkDecision = { ok: true; outcome: string } | { ok: false; refusal: TLinkRefusal };

/**
 * Decides from an approval link's confirm page (the POST; nothing else decides): the link must be the
 * person's, unused, still usable, and for the plan the page showed. It is spent first, in one fenced
 * update with its audit event (`approval_link.used`), so two POSTs of one link decide once; then the
 * decision takes the path the dashboard's takes, as this person: a pivot's (same rules, two approvers
 * included), or a held call's (claim, then resolve), and the outcome is written on the link.
 */
export async function decideByApprovalLink({ actor, prisma, linkId, secret, form }: PersonRequest<{ prisma: PrismaClient; linkId: string; secret: string | null; form: TLinkDecisionForm }>): Promise<LinkDecision> {
  const link = await onConnection(prisma, () => prisma.approvalLink.findUnique({ where: { id: linkId } }));
  if (!link || !secret || link.tokenHash !== hashLinkSecret(secret)) return { ok: false, refusal: unknownLink() };
  assertCan(actor, actionOf(link));
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
  const runId = await runOfLink(prisma, link);
  if (!runId) return { ok: false, refusal: endedLink(link, "decided") };
  const spent = await writeTransaction(prisma, async (tx, now) => {
    const { count } = await tx.approvalLink.updateMany({ where: { id: link.id, usedAt: null, endedAt: null, expiresAt: { gt: now } }, data: { usedAt: now, outcome: "deciding" } });
    if (count === 0) return false;
    const item: { [key: string]: string } = link.pivotId ? { pivotId: link.pivotId } : { escalationId: link.escalationId ?? "" };
    await appendAuditLink(tx, now, { scope: runScope(runId), runId, stepId: null, type: "approval_link.used", actor: userActor(actor), data: { linkId: link.id, ...item, decision: form.decision } });
    return true;
  });
  if (!spent) {
    const now = await onConnection(prisma, () => prisma.approvalLink.findUniqueOrThrow({ where: { id: link.id } }));
    return { ok: false, refusal: now.usedAt ? usedLink(now) : endedLink(now, "expired") };
  }
  const decided = form.decision === "approve" ? "approved" : "rejected";
  let outcome: string;
  if (link.pivotId) {
    const result =
      form.decision === "approve"
        ? await decidePivotFor(actor, { pivotId: link.pivotId, planHash: link.planHash, approve: true, reason: null, via: "email" })
        : await decidePivotFor(actor, { pivotId: link.pivotId, planHash: link.planHash, approve: false, reason: form.reason, reasonCode: form.reasonCode, via: "email" });
    outcome = result.ok ? decided : result.reason === "second_approver_needed" ? "first_approval" : `refused:${result.reason}`;
  } else {
    // A held call is decided by whoever holds it: take it (or keep it, when already this person's), then decide.
    const escalationId = link.escalationId ?? "";
    const claim = await claimEscalation({ actor, escalationId });
    if (!claim.ok && !(claim.reason === "held" && claim.heldBy === actor.email)) outcome = `refused:${claim.reason}`;
    else {
      const resolved = await resolveEscalation({
        actor,
        escalationId,
        kind: EscalationKind.APPROVAL_REQUIRED,
        approve: form.decision === "approve",
        ...(form.decision === "reject" ? { note: form.reason, reasonCode: form.reasonCode } : { note: "approved from the approval email's confirm page" }),
      });
      outcome = resolved.ok ? decided : `refused:${resolved.reason}`;
    }
  }
  await writeTransaction(prisma, (tx) => tx.approvalLink.updateMany({ where: { id: link.id }, data: { outcome } }));
  return { ok: true, outcome };
}
