import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ApiError, validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { endAllUserSessions, SessionEndReason } from "@/lib/server/auth/user-sessions";
import { appendUserAudit, hashPassword, ZPassword, ZUserActor, ZUserEmail } from "./user";
import { writeTransaction } from "@/lib/core/db/transactions";

/** Whose password changes, to what, and who changes it. */
export const ZSetUserPasswordInput = z.object({
  /** The account's email. */
  email: ZUserEmail,
  /** The new password. */
  password: ZPassword,
  /** Who changes it. */
  by: ZUserActor,
});

/**
 * Sets a new password (bcrypt; never stored in clear) and ends every session of the account: a
 * browser signed in with the old password is signed out on its next request.
 */
export async function setUserPassword(prisma: PrismaClient, input: z.input<typeof ZSetUserPasswordInput>): Promise<{ sessionsEnded: number }> {
  const parsed = ZSetUserPasswordInput.safeParse(input);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The new password");
  const { email, password, by } = parsed.data;
  const passwordHash = await hashPassword(password);
  return writeTransaction(prisma, async (tx, now) => {
    const row = await tx.user.findUnique({ where: { email }, select: { id: true } });
    if (!row) throw new ApiError("NOT_FOUND", `No user has the email ${email}; list the users to see who exists.`, { details: [{ path: "email", message: "no such user" }] });
    await tx.user.update({ where: { id: row.id }, data: { passwordHash, updatedAt: now } });
    await appendUserAudit(tx, now, row.id, "user.password_changed", by, { email });
    return { sessionsEnded: await endAllUserSessions(tx, row.id, SessionEndReason.password_changed, by) };
  });
}
