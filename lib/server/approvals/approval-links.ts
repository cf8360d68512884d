/**
 * Approval links: what an approval email carries so one approver can decide one approval from it: a
 * waiting pivot, or a held call (an APPROVAL_REQUIRED escalation). The secret is 256 random bits,
 * stored only as its sha256; a link is bound to the item, the approver and the plan hash it was sent
 * for (a held call's: its arguments' hash), works once, and expires at the earlier of the item's
 * decision deadline (its SLA expiry, or a pivot's own deadline) and 72 hours. It is dead at once when
 * the plan changes, the item is decided or taken by another person, or the approver may no longer
 * decide: its state is worked out from the item and the person as they are now on every use
 * (`linkState`), and ended on the row when seen. Opening the link never decides
 * (lib/desks/approvals/ARCHITECTURE.md).
 */
import { createHash, randomBytes } from "node:crypto";
import type { ApprovalLink, PrismaClient } from "@/generated/prisma";
import { databaseNow } from "@/lib/core/db/dialect";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { randomIds } from "@/packages/client/src/saga/ids";
import { EscalationKind, EscalationStatus, PivotStatus } from "@/packages/client/src/saga/vocabulary";
import { can, isRole, type Action } from "@/lib/server/auth/roles";
import { escalationSla, loadSlaRules, pivotSla, slaPoints } from "@/lib/server/sla/sla-rules";

/** The longest a link lives. */
export const APPROVAL_LINK_MAX_AGE_MS = 72 * 3_600_000;
/** The link's path prefix: `/approve/<secret>`. */
export const APPROVAL_LINK_PATH = "/approve";

/** Why a link no longer works (besides having been used). */
export const LinkEndReason = {
  /** The plan was edited or revised after the link was sent. */
  plan_changed: "plan_changed",
  /** The item was decided (approved, rejected, expired) by someone or something else. */
  decided: "decided",
  /** Another person took the held call (claimed it) to decide it themselves. */
  reassigned: "reassigned",
  /** The approver's account is disabled, or their role no longer decides pivots. */
  not_an_approver: "not_an_approver",
  /** The email was sent again with a new link. */
  resent: "resent",
  /** Past its expiry. */
  expired: "expired",
} as const;
export type LinkEndReason = (typeof LinkEndReason)[keyof typeof LinkEndReason];

/** Where a link stands for whoever opens it. */
export type LinkState =
  | { kind: "usable"; link: ApprovalLink }
  | { kind: "used"; link: ApprovalLink }
  | { kind: "ended"; link: ApprovalLink; reason: LinkEndReason };

/** sha256 of a link's secret (what the row keeps). */
export function hashLinkSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** The row a secret names, or null (a secret of the wrong shape is never looked up). */
export async function findApprovalLink(prisma: PrismaClient, secret: string): Promise<ApprovalLink | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(secret)) return null;
  return onConnection(prisma, () => prisma.approvalLink.findUnique({ where: { tokenHash: hashLinkSecret(secret) } }));
}

/** What a link decides: a waiting pivot, or a held call's escalation. */
export type LinkSubject = { kind: "pivot"; pivotId: string } | { kind: "escalation"; escalationId: string };

/** What a person must be allowed to do to decide a link's item. */
export function actionOf(subject: Pick<ApprovalLink, "escalationId">): Action {
  return subject.escalationId ? "escalation.resolve" : "pivot.decide";
}

/** A held call's tool and arguments' hash, from its escalation's detail. */
function heldCallOf(detail: unknown): { tool: string | null; argsHash: string } {
  const d = detail !== null && typeof detail === "object" && !Array.isArray(detail) ? (detail as Record<string, unknown>) : {};
  return { tool: typeof d.tool === "string" ? d.tool : null, argsHash: typeof d.argsHash === "string" ? d.argsHash : "" };
}

/** The item as a link needs it: still waiting, its plan hash, when it must be decided by. Null: it no longer waits. */
async function waitingItem(prisma: PrismaClient, subject: LinkSubject): Promise<{ pivotId: string | null; escalationId: string | null; planHash: string; deadline: Date | null } | null> {
  const rules = await loadSlaRules(prisma);
  if (subject.kind === "pivot") {
    const pivot = await prisma.pivot.findUnique({ where: { id: subject.pivotId } });
    if (!pivot || pivot.status !== PivotStatus.PENDING) return null;
    const tools = Array.isArray(pivot.plan) ? pivot.plan.map((i) => String((i as { tool?: unknown }).tool ?? "")) : [];
    return { pivotId: pivot.id, escalationId: null, planHash: pivot.planHash, deadline: slaPoints(pivotSla(rules, tools), pivot.createdAt, pivot.deadline).expireAt };
  }
  const escalation = await prisma.escalation.findUnique({ where: { id: subject.escalationId } });
  if (!escalation || escalation.kind !== EscalationKind.APPROVAL_REQUIRED || escalation.status !== EscalationStatus.OPEN) return null;
  const held = heldCallOf(escalation.detail);
  return { pivotId: null, escalationId: escalation.id, planHash: held.argsHash, deadline: slaPoints(escalationSla(rules, EscalationKind.APPROVAL_REQUIRED, held.tool), escalation.createdAt).expireAt };
}

/**
 * A new link for `email` to decide the item, or null when that person may not decide it (no such
 * enabled account, or a role that does not decide such items) or the item no longer waits (a held
 * call already taken by someone counts as not waiting). A link made for the same delivery before (a
 * retried send) is ended: only the newest email's link works.
 */
export async function mintApprovalLink(prisma: PrismaClient, input: { subject: LinkSubject; email: string; deliveryId: string | null }): Promise<{ secret: string; link: ApprovalLink } | null> {
  const action: Action = input.subject.kind === "pivot" ? "pivot.decide" : "escalation.resolve";
  // Reads queued on the client (SQLite: never inside another caller's open transaction), then the write.
  const read = await onConnection(prisma, async () => {
    const user = await prisma.user.findUnique({ where: { email: input.email.toLowerCase() } });
    if (!user || user.disabledAt !== null || !isRole(user.role) || !can(user.role, action)) return null;
    const item = await waitingItem(prisma, input.subject);
    return item ? { item, user, now: await databaseNow(prisma) } : null;
  });
  if (!read) return null;
  const { item, user, now } = read;
  const deadline = item.deadline;
  const expiresAt = new Date(Math.min(now.getTime() + APPROVAL_LINK_MAX_AGE_MS, deadline?.getTime() ?? Infinity));
  const secret = randomBytes(32).toString("base64url");
  const link = await writeTransaction(prisma, async (tx, at) => {
    if (input.deliveryId) await tx.approvalLink.updateMany({ where: { deliveryId: input.deliveryId, usedAt: null, endedAt: null }, data: { endedAt: at, endReason: LinkEndReason.resent } });
    return tx.approvalLink.create({
      data: { id: randomIds.next("apl"), tokenHash: hashLinkSecret(secret), pivotId: item.pivotId, escalationId: item.escalationId, userId: user.id, planHash: item.planHash, deliveryId: input.deliveryId, expiresAt, createdAt: at },
    });
  });
  return { secret, link };
}

/**
 * Where `link` stands now, read from the pivot and the approver as they are (the database clock for
 * expiry): used, ended (why), or usable. An end seen here is written on the row, once.
 */
export async function linkState(prisma: PrismaClient, link: ApprovalLink): Promise<LinkState> {
  if (link.usedAt) return { kind: "used", link };
  if (link.endedAt) return { kind: "ended", link, reason: (link.endReason as LinkEndReason | null) ?? LinkEndReason.expired };
  const [item, user, now] = await onConnection(prisma, async () => [
    link.pivotId
      ? await prisma.pivot.findUnique({ where: { id: link.pivotId }, select: { status: true, planHash: true } }).then((p) => p && { waiting: p.status === PivotStatus.PENDING, planHash: p.planHash, takenBy: null })
      : await prisma.escalation.findUnique({ where: { id: link.escalationId ?? "" }, select: { status: true, claimedBy: true, detail: true } }).then(
          (e) => e && { waiting: e.status === EscalationStatus.OPEN || e.status === EscalationStatus.CLAIMED, planHash: heldCallOf(e.detail).argsHash, takenBy: e.status === EscalationStatus.CLAIMED ? e.claimedBy : null },
        ),
    await prisma.user.findUnique({ where: { id: link.userId }, select: { email: true, role: true, disabledAt: true } }),
    await databaseNow(prisma),
  ] as const);
  const reason: LinkEndReason | null =
    link.expiresAt <= now
      ? LinkEndReason.expired
      : !item || !item.waiting
        ? LinkEndReason.decided
        : item.planHash !== link.planHash
          ? LinkEndReason.plan_changed
          : !user || user.disabledAt !== null || !isRole(user.role) || !can(user.role, actionOf(link))
            ? LinkEndReason.not_an_approver
            : item.takenBy !== null && item.takenBy !== user.email
              ? LinkEndReason.reassigned
              : null;
  if (reason === null) return { kind: "usable", link };
  await writeTransaction(prisma, (tx, at) => tx.approvalLink.updateMany({ where: { id: link.id, usedAt: null, endedAt: null }, data: { endedAt: at, endReason: reason } }));
  return { kind: "ended", link, reason };
}

/** A link's secret as the email's address. */
export function approvalLinkUrl(baseUrl: string, secret: string): string {
  return `${baseUrl}${APPROVAL_LINK_PATH}/${secret}`;
}
