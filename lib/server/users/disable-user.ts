import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ApiError, validationError, zodIssuesToDetails } from "@/lib/protocol/errors";
import { appendUserAudit, countActiveAdmins, toUserView, ZUserActor, ZUserEmail } from "./user";
import type { ChangedUser } from "./set-user-role";
import { endAllUserSessions, SessionEndReason } from "@/lib/server/auth/user-sessions";
import { writeTransaction } from "@/lib/core/db/transactions";

/** Which account to disable, and who does it. */
export const ZDisableUserInput = z.object({
  /** The account's email. */
  email: ZUserEmail,
  /** Who disables it. */
  by: ZUserActor,
});
/** Which account to disable, and who does it. */
export type TDisableUserInput = z.input<typeof ZDisableUserInput>;

/**
 * Disables an account: its next request is refused (the session is checked against the database on
 * every request), and it cannot sign in again. Disabling twice keeps the first time. Refused when
 * it would leave no enabled admin. The row stays, so the audit log keeps naming the person.
 */
export async function disableUser(prisma: PrismaClient, input: TDisableUserInput): Promise<ChangedUser> {
  const parsed = ZDisableUserInput.safeParse(input);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The account to disable");
  const { email, by } = parsed.data;

  return writeTransaction(prisma, async (tx, now) => {
    // Write first (fenced on disabledAt), then read: see set-user-role.ts on SQLite snapshots.
    const { count } = await tx.user.updateMany({ where: { email, disabledAt: null }, data: { disabledAt: now, updatedAt: now } });
    const row = await tx.user.findUnique({ where: { email } });
    if (!row) {
      throw new ApiError("NOT_FOUND", `No user has the email ${email}; list the users to see who exists.`, {
        details: [{ path: "email", message: "no such user" }],
      });
    }
    if (count > 0) {
      if (row.role === "admin" && (await countActiveAdmins(tx)) === 0) {
        throw new ApiError("INVALID_TRANSITION", `${email} is the last enabled admin; make someone else an admin first, then disable this account.`);
      }
      await appendUserAudit(tx, now, row.id, "user.disabled", by, { email });
      await endAllUserSessions(tx, row.id, SessionEndReason.disabled, by);
    }
    return { user: toUserView(row), changed: count > 0 };
  });
}
