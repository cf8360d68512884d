import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ApiError, validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { ZRole } from "@/lib/server/auth/roles";
import { randomIds } from "@/packages/client/src/saga/ids";
import { appendUserAudit, hashPassword, ZPassword, toUserView, ZUserActor, ZUserEmail, ZUserName, type TUserView } from "./user";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { writeTransaction } from "@/lib/core/db/transactions";

/** What an admin supplies to create an account. */
export const ZCreateUserInput = z.object({
  /** The sign-in email (stored lower-cased; unique). */
  email: ZUserEmail,
  /** Display name. */
  name: ZUserName,
  /** What the person may do. */
  role: ZRole,
  /** The password; omit for an account that only signs in through SSO (OIDC, matched by email). */
  password: ZPassword.optional(),
  /** Who creates the account. */
  by: ZUserActor,
});
/** What an admin supplies to create an account. */
export type TCreateUserInput = z.input<typeof ZCreateUserInput>;

/**
 * Creates an account. Stores a bcrypt hash of the password (never the password); the row and its
 * audit event commit together. A taken email is a CONFLICT naming it.
 */
export async function createUser(prisma: PrismaClient, input: TCreateUserInput): Promise<TUserView> {
  const parsed = ZCreateUserInput.safeParse(input);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The new user");
  const { email, name, role, password, by } = parsed.data;

  // Hash outside the transaction: bcrypt takes tens of milliseconds and the write lock is shared.
  const passwordHash = password === undefined ? null : await hashPassword(password);
  const id = randomIds.next("usr");
  try {
    const row = await writeTransaction(prisma, async (tx, now) => {
      const created = await tx.user.create({ data: { id, email, name, role, passwordHash, createdAt: now, updatedAt: now } });
      await appendUserAudit(tx, now, id, "user.created", by, { email, name, role, password: passwordHash !== null });
      return created;
    });
    return toUserView(row);
  } catch (e) {
    if (isUniqueViolation(e)) {
      throw new ApiError("CONFLICT", `A user with the email ${email} already exists; change their role or name instead of creating them again.`, {
        details: [{ path: "email", message: "already taken" }],
      });
    }
    throw e;
  }
}
