/**
 * Sessions that end. next-auth's session is a JWT that would stay valid for its whole lifetime; each
 * one also carries the id of a UserSession row, and readSessionState accepts the cookie only while
 * that row has not ended. Sign-out ends its own session; disabling an account, a new password and
 * "sign out everywhere" end every session of the person. Effective on the very next request.
 */
import type { Prisma, PrismaClient } from "@/generated/prisma";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { databaseNow } from "@/lib/core/db/dialect";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { Actor } from "@/packages/client/src/saga/store";
import { userScope } from "@/lib/server/users/user";
import { writeTransaction } from "@/lib/core/db/transactions";

/** Why a session ended. */
export const SessionEndReason = {
  /** The person signed out in this browser. */
  signed_out: "signed_out",
  /** The person (or an admin) ended every session of the account. */
  signed_out_everywhere: "signed_out_everywhere",
  /** The account was disabled. */
  disabled: "disabled",
  /** The password changed. */
  password_changed: "password_changed",
  /** The identity provider deactivated or deleted the person (SCIM). */
  deprovisioned: "deprovisioned",
  /** The person's groups no longer give the role they signed in with (or none). */
  groups_changed: "groups_changed",
} as const;
export type SessionEndReason = (typeof SessionEndReason)[keyof typeof SessionEndReason];

/** How a session was signed in. */
export const SignInMethod = {
  /** Email and password. */
  password: "password",
  /** Single sign-on through the identity provider. */
  sso: "sso",
} as const;
export type SignInMethod = (typeof SignInMethod)[keyof typeof SignInMethod];

/** A new session for `userId` at sign-in; its id goes into the cookie. */
export async function startUserSession(prisma: PrismaClient, userId: string, method: SignInMethod = SignInMethod.password): Promise<string> {
  const id = randomIds.next("ses");
  await writeTransaction(prisma, async (tx, now) => {
    await tx.userSession.create({ data: { id, userId, createdAt: now, method } });
    await tx.user.updateMany({ where: { id: userId }, data: { lastSignInAt: now } });
  });
  return id;
}

/** Ends one session (sign-out). Ending it twice changes nothing. */
export async function endUserSession(prisma: PrismaClient, sessionId: string): Promise<void> {
  await writeTransaction(prisma, async (tx, now) => {
    await tx.userSession.updateMany({ where: { id: sessionId, endedAt: null }, data: { endedAt: now, endReason: SessionEndReason.signed_out } });
  });
}

/**
 * Ends every open session of `userId`, in the caller's transaction (disabling, a password change) or
 * its own, with an audit event on the person's chain. Returns how many ended.
 */
export async function endAllUserSessions(db: PrismaClient | Prisma.TransactionClient, userId: string, reason: SessionEndReason, actor: Actor): Promise<number> {
  const run = async (tx: Prisma.TransactionClient, now: Date) => {
    const { count } = await tx.userSession.updateMany({ where: { userId, endedAt: null }, data: { endedAt: now, endReason: reason } });
    if (count > 0) await appendAuditLink(tx, now, { scope: userScope(userId), runId: null, stepId: null, type: "user.sessions_ended", actor, data: { reason, sessions: count } });
    return count;
  };
  return "$transaction" in db ? writeTransaction(db as PrismaClient, run) : run(db, await databaseNow(db));
}
