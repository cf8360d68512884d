/**
 * Approval links: what an approval email carries so one approver can decide one pivot from it. The
 * secret is 256 random bits, stored only as its sha256; a link is bound to the pivot, the approver and
 * the plan hash it was sent for, works once, and expires at the earlier of the pivot's decision
 * deadline (its SLA expiry, or its own deadline) and 72 hours. It is dead at once when the plan
 * changes, the pivot is decided, or the approver may no longer decide: its state is worked out from
 * the pivot and the person as they are now on every use (`linkState`), and ended on the row when seen.
 * Opening the link never decides (lib/desks/approvals/ARCHITECTURE.md).
 */
import { createHash, randomBytes } from "node:crypto";
import type { ApprovalLink, PrismaClient } from "@/generated/prisma";
import { databaseNow } from "@/lib/core/db/dialect";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { randomIds } from "@/lib/saga/ids";
import { PivotStatus } from "@/lib/saga/vocabulary";
import { can, isRole } from "@/lib/server/auth/roles";
import { loadSlaRules, pivotSla, slaPoints } from "@/lib/server/sla/sla-rules";

/** The longest a link lives. */
export const APPROVAL_LINK_MAX_AGE_MS = 72 * 3_600_000;
/** The link's path prefix: `/approve/<secret>`. */
export const APPROVAL_LINK_PATH = "/approve";

/** Why a link no longer works (besides having been used). */
export const LinkEndReason = {
  /** The plan was edited or revised after the link was sent. */
  plan_changed: "plan_changed",
  /** The pivot was decided (approved, rejected, expired) by someone or something else. */
  decided: "decided",
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

/** When a pivot must be decided by: its SLA expiry (pivots expire; the rule may be a tool's) or its own deadline. */
async function decisionDeadline(prisma: PrismaClient, pivot: { createdAt: Date; deadline: Date | null; plan: unknown }): Promise<Date | null> {
  const tools = Array.isArray(pivot.plan) ? pivot.plan.map((i) => String((i as { tool?: unknown }).tool ?? "")) : [];
  return slaPoints(pivotSla(await loadSlaRules(prisma), tools), pivot.createdAt, pivot.deadline).expireAt;
}

/**
 * A new link for `email` to decide `pivotId`, or null when that person may not decide it (no such
 * enabled account, or a role that does not decide pivots) or the pivot no longer waits. A link made
 * for the same delivery before (a retried send) is ended: only the newest email's link works.
 */
export async function mintApprovalLink(prisma: PrismaClient, input: { pivotId: string; email: string; deliveryId: string | null }): Promise<{ secret: string; link: ApprovalLink } | null> {
  // Reads queued on the client (SQLite: never inside another caller's open transaction), then the write.
  const read = await onConnection(prisma, async () => {
    const [pivot, user] = [await prisma.pivot.findUnique({ where: { id: input.pivotId } }), await prisma.user.findUnique({ where: { email: input.email.toLowerCase() } })];
    if (!pivot || pivot.status !== PivotStatus.PENDING || !user || user.disabledAt !== null || !isRole(user.role) || !can(user.role, "pivot.decide")) return null;
    return { pivot, user, now: await databaseNow(prisma), deadline: await decisionDeadline(prisma, pivot) };
  });
  if (!read) return null;
  const { pivot, user, now, deadline } = read;
  const expiresAt = new Date(Math.min(now.getTime() + APPROVAL_LINK_MAX_AGE_MS, deadline?.getTime() ?? Infinity));
  const secret = randomBytes(32).toString("base64url");
  const link = await writeTransaction(prisma, async (tx, at) => {
    if (input.deliveryId) await tx.approvalLink.updateMany({ where: { deliveryId: input.deliveryId, usedAt: null, endedAt: null }, data: { endedAt: at, endReason: LinkEndReason.resent } });
    return tx.approvalLink.create({
      data: { id: randomIds.next("apl"), tokenHash: hashLinkSecret(secret), pivotId: pivot.id, userId: user.id, planHash: pivot.planHash, deliveryId: input.deliveryId, expiresAt, createdAt: at },
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
  const [pivot, user, now] = await onConnection(prisma, async () => [
    await prisma.pivot.findUnique({ where: { id: link.pivotId }, select: { status: true, planHash: true } }),
    await prisma.user.findUnique({ where: { id: link.userId }, select: { role: true, disabledAt: true } }),
    await databaseNow(prisma),
  ] as const);
  const reason: LinkEndReason | null =
    link.expiresAt <= now
      ? LinkEndReason.expired
      : !pivot || pivot.status !== PivotStatus.PENDING
        ? LinkEndReason.decided
        : pivot.planHash !== link.planHash
          ? LinkEndReason.plan_changed
          : !user || user.disabledAt !== null || !isRole(user.role) || !can(user.role, "pivot.decide")
            ? LinkEndReason.not_an_approver
            : null;
  if (reason === null) return { kind: "usable", link };
  await writeTransaction(prisma, (tx, at) => tx.approvalLink.updateMany({ where: { id: link.id, usedAt: null, endedAt: null }, data: { endedAt: at, endReason: reason } }));
  return { kind: "ended", link, reason };
}

/** A link's secret as the email's address. */
export function approvalLinkUrl(baseUrl: string, secret: string): string {
  return `${baseUrl}${APPROVAL_LINK_PATH}/${secret}`;
}
