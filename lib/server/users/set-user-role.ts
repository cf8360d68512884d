import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ApiError, validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { Role, ZRole } from "@/lib/server/auth/roles";
import { appendUserAudit, countActiveAdmins, toUserView, ZUserActor, ZUserEmail, type TUserView } from "./user";
import { writeTransaction } from "@/lib/core/db/transactions";

/** Whose role changes, to what, and who changes it. */
export const ZSetUserRoleInput = z.object({
  /** The account's email. */
  email: ZUserEmail,
  /** The new role. */
  role: ZRole,
  /** Who changes it. */
  by: ZUserActor,
});
/** Whose role changes, to what, and who changes it. */
export type TSetUserRoleInput = z.input<typeof ZSetUserRoleInput>;

/** The account after the change. */
export interface ChangedUser {
  /** The account as it is now. */
  user: TUserView;
  /** False when nothing changed (it already was so). */
  changed: boolean;
}

/**
 * Changes an account's role; it takes effect on the person's next request (the role is read from
 * the database on every request). Refused when it would leave no enabled admin.
 */
export async function setUserRole(prisma: PrismaClient, input: TSetUserRoleInput): Promise<ChangedUser> {
  const parsed = ZSetUserRoleInput.safeParse(input);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The role change");
  const { email, role, by } = parsed.data;

  return writeTransaction(prisma, async (tx, now) => {
    // Write first (fenced on the old role), then read: a read before the first write would pin an
    // older SQLite snapshot. An enabled admin losing the role is written separately so we know it.
    const demotedAdmin =
      role === Role.ADMIN
        ? 0
        : (await tx.user.updateMany({ where: { email, role: Role.ADMIN, disabledAt: null }, data: { role, updatedAt: now } })).count;
    const count =
      demotedAdmin > 0 ? demotedAdmin : (await tx.user.updateMany({ where: { email, role: { not: role } }, data: { role, updatedAt: now } })).count;
    const row = await tx.user.findUnique({ where: { email } });
    if (!row) {
      throw new ApiError("NOT_FOUND", `No user has the email ${email}; list the users to see who exists.`, {
        details: [{ path: "email", message: "no such user" }],
      });
    }
    if (count > 0) {
      if (demotedAdmin > 0 && (await countActiveAdmins(tx)) === 0) {
        throw new ApiError("INVALID_TRANSITION", `${email} is the last enabled admin; make someone else an admin first, then change this role.`);
      }
      await appendUserAudit(tx, now, row.id, "user.role_changed", by, { email, role });
    }
    return { user: toUserView(row), changed: count > 0 };
  });
}
