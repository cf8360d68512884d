import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ApiError, validationError, zodIssuesToDetails } from "@/lib/protocol/errors";
import type { ChangedUser } from "./set-user-role";
import { appendUserAudit, toUserView, ZUserActor, ZUserEmail } from "./user";
import { writeTransaction } from "@/lib/core/db/transactions";

/** Which account to enable again, and who does it. */
export const ZEnableUserInput = z.object({
  /** The account's email. */
  email: ZUserEmail,
  /** Who enables it. */
  by: ZUserActor,
});
/** Which account to enable again, and who does it. */
export type TEnableUserInput = z.input<typeof ZEnableUserInput>;

/**
 * Enables a disabled account: the person can sign in again, with the password (or SSO) they had,
 * and the role it had when it was disabled. Enabling an enabled account changes nothing. The change
 * and its audit event commit together.
 */
export async function enableUser(prisma: PrismaClient, input: TEnableUserInput): Promise<ChangedUser> {
  const parsed = ZEnableUserInput.safeParse(input);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The account to enable");
  const { email, by } = parsed.data;

  return writeTransaction(prisma, async (tx, now) => {
    // Write first (fenced on disabledAt), then read: see set-user-role.ts on SQLite snapshots.
    const { count } = await tx.user.updateMany({ where: { email, disabledAt: { not: null } }, data: { disabledAt: null, updatedAt: now } });
    const row = await tx.user.findUnique({ where: { email } });
    if (!row) {
      throw new ApiError("NOT_FOUND", `No user has the email ${email}; list the users to see who exists.`, {
        details: [{ path: "email", message: "no such user" }],
      });
    }
    if (count > 0) await appendUserAudit(tx, now, row.id, "user.enabled", by, { email });
    return { user: toUserView(row), changed: count > 0 };
  });
}
