import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ApiError, validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { appendUserAudit, countActiveAdmins, toUserView, ZUserActor, ZUserEmail } from "./user";
import type { ChangedUser } from "./set-user-role";
import { endAllUserSessions, SessionEndReason } from "@/lib/server/auth/user-sessions";
import { writeTransaction } from "@/lib/core/db/transactions";

/** Which account to disable or enable again, and who does it. */
export const ZUserAccessInput = z.object({
  /** The account's email. */
  email: ZUserEmail,
  /** Who changes it. */
  by: ZUserActor,
});
/** Which account to disable or enable again, and who does it. */
export type TUserAccessInput = z.input<typeof ZUserAccessInput>;

/**
 * Disables an account: its next request is refused (the session is checked against the database on
 * every request), its open sessions end, and it cannot sign in again. Disabling twice keeps the
 * first time. Refused when it would leave no enabled admin. The row stays, so the audit log keeps
 * naming the person.
 */
export function disableUser(prisma: PrismaClient, input: TUserAccessInput): Promise<ChangedUser> {
  return setUserEnabled(prisma, input, false);
}

/**
 * Enables a disabled account: the person can sign in again, with the password (or SSO) they had,
 * and the role it had when it was disabled. Enabling an enabled account changes nothing.
 */
export function enableUser(prisma: PrismaClient, input: TUserAccessInput): Promise<ChangedUser> {
  return setUserEnabled(prisma, input, true);
}

/** Disables or enables an account; the change and its audit event commit together. */
async function setUserEnabled(prisma: PrismaClient, input: TUserAccessInput, enabled: boolean): Promise<ChangedUser> {
  const parsed = ZUserAccessInput.safeParse(input);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), enabled ? "The account to enable" : "The account to disable");
  const { email, by } = parsed.data;

  return writeTransaction(prisma, async (tx, now) => {
    // Write first (fenced on disabledAt), then read: see set-user-role.ts on SQLite snapshots.
    const { count } = await tx.user.updateMany({
      where: { email, disabledAt: enabled ? { not: null } : null },
      // An admin's disable is kept whatever the identity provider says later (lib/server/sso/person-access.ts).
      data: { disabledAt: enabled ? null : now, disabledReason: enabled ? null : "admin", updatedAt: now },
    });
    const row = await tx.user.findUnique({ where: { email } });
    if (!row) {
      throw new ApiError("NOT_FOUND", `No user has the email ${email}; list the users to see who exists.`, {
        details: [{ path: "email", message: "no such user" }],
      });
    }
    if (count > 0 && enabled) await appendUserAudit(tx, now, row.id, "user.enabled", by, { email });
    if (count > 0 && !enabled) {
      if (row.role === "admin" && (await countActiveAdmins(tx)) === 0) {
        throw new ApiError("INVALID_TRANSITION", `${email} is the last enabled admin; make someone else an admin first, then disable this account.`);
      }
      await appendUserAudit(tx, now, row.id, "user.disabled", by, { email });
      await endAllUserSessions(tx, row.id, SessionEndReason.disabled, by);
    }
    return { user: toUserView(row), changed: count > 0 };
  });
}
