import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { writeTransaction } from "@/lib/core/db/transactions";
import { ApiError, validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { appendUserAudit, toUserView, ZUserActor, ZUserEmail } from "@/lib/server/users/user";
import type { ChangedUser } from "@/lib/server/users/set-user-role";

/** Which account becomes (or stops being) the break-glass account, and who says so. */
export const ZSetBreakGlassInput = z.object({
  /** The account's email. */
  email: ZUserEmail,
  /** true: make it the break-glass account; false: no longer. */
  breakGlass: z.boolean(),
  /** Who changes it. */
  by: ZUserActor,
});
/** Which account becomes (or stops being) the break-glass account. */
export type TSetBreakGlassInput = z.input<typeof ZSetBreakGlassInput>;

/**
 * Makes a local admin with a password the break-glass account: the one account that still signs in
 * with its password while single sign-on is on (the way in when the provider is down, or before any
 * group is mapped). There is one at most: marking a second is refused naming the first. Refused for
 * an account that follows the provider's groups, has no password, is disabled or is not an admin.
 */
export async function setBreakGlass(prisma: PrismaClient, input: TSetBreakGlassInput): Promise<ChangedUser> {
  const parsed = ZSetBreakGlassInput.safeParse(input);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The break-glass change");
  const { email, breakGlass, by } = parsed.data;
  return writeTransaction(prisma, async (tx, now) => {
    const { count } = await tx.user.updateMany({ where: { email, breakGlass: !breakGlass }, data: { breakGlass, updatedAt: now } });
    const row = await tx.user.findUnique({ where: { email } });
    if (!row) throw new ApiError("NOT_FOUND", `No user has the email ${email}; list the users to see who exists.`, { details: [{ path: "email", message: "no such user" }] });
    if (count > 0 && breakGlass) {
      const refuse = (why: string) => {
        throw new ApiError("INVALID_TRANSITION", `${email} cannot be the break-glass account: ${why}`);
      };
      if (row.groups !== null) refuse("its role follows the identity provider's groups; pick a local account.");
      if (row.passwordHash === null) refuse("it has no password; set one first (npm run user -- set-password).");
      if (row.role !== "admin") refuse("it is not an admin; the break-glass account is the admin who gets in when single sign-on does not work.");
      if (row.disabledAt !== null) refuse("it is disabled; enable it first.");
      const other = await tx.user.findFirst({ where: { breakGlass: true, id: { not: row.id } }, select: { email: true } });
      if (other) refuse(`${other.email} already is; there is one break-glass account. Clear it there first.`);
    }
    if (count > 0) await appendUserAudit(tx, now, row.id, breakGlass ? "user.break_glass_set" : "user.break_glass_cleared", by, { email });
    return { user: toUserView(row), changed: count > 0 };
  });
}
