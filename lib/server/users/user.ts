/**
 * What the user use cases share: the input schemas, the public view of a User row (never the
 * password hash), password hashing, and the per-user audit chain.
 */
import bcrypt from "bcryptjs";
import * as z from "zod";
import type { Prisma, User } from "@/generated/prisma";
import { serializeOn } from "@/lib/core/db/dialect";
import { type Actor } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { appendAuditLink } from "@/lib/core/db/audit-chain";

/** The database clock (shared with the token use cases). */

/** bcrypt cost factor: 2^10 rounds, about 50-100 ms per hash on a laptop. */
export const BCRYPT_COST = 10;

/** An email address, trimmed and lower-cased so `Ana@Example.com` and `ana@example.com` are one account. */
export const ZUserEmail = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email("Use an email address such as ana@example.com.").max(320));

/** A person's display name. */
export const ZUserName = z.string().trim().min(1, "Give the person's name.").max(200);

/**
 * A password: at least 12 characters, at most 72 bytes (bcrypt ignores everything after byte 72,
 * so a longer one would only look stronger).
 */
export const ZPassword = z
  .string()
  .min(12, "Use at least 12 characters.")
  .refine((value) => Buffer.byteLength(value, "utf8") <= 72, "Use at most 72 bytes (bcrypt ignores the rest).");

/** Who changes an account: a signed-in admin (`user`, by email) or a component (`system`, e.g. the demo seed). */
export const ZUserActor = z.object({
  /** `user` for a person (the dashboard, the CLI), `system` for a component. */
  type: z.enum(["user", "system"]),
  /** The person's email or `cli:<os user>`, or the component's name. */
  id: z.string().trim().min(1, "Say who makes the change.").max(320),
});
/** Who changes an account. */
export type TUserActor = z.infer<typeof ZUserActor>;

/** The public view of a User row: never the password hash. */
export const ZUserView = z.object({
  /** `usr_...` */
  id: z.string(),
  /** Lower-cased email; the sign-in name. */
  email: z.string(),
  /** Display name. */
  name: z.string(),
  /**
   * What the person may do (roles.ts), as stored: a hand-edited row may hold a role Sagaboard does not
   * know, which grants nothing (readSessionState refuses it) but must still be listed so an admin can fix it.
   */
  role: z.string(),
  /** Whether the account can sign in with a password (false for SSO-only accounts). */
  hasPassword: z.boolean(),
  /** When the account was disabled; null while it works. */
  disabledAt: z.date().nullable(),
  /** Why it is disabled: admin, provider (deprovisioned), no_mapped_group; null while it works (or when an admin disabled it before reasons were kept). */
  disabledReason: z.string().nullable(),
  /** How the account came to be: local, sso, scim. */
  source: z.string(),
  /** The break-glass account: the one local admin who signs in with a password while single sign-on is on. */
  breakGlass: z.boolean(),
  /** The identity provider's groups (its role follows them); null for a local account whose role an admin sets. */
  groups: z.array(z.string()).nullable(),
  /** When the person last signed in; null if never (or not since this was kept). */
  lastSignInAt: z.date().nullable(),
  /** When it was created. */
  createdAt: z.date(),
  /** When it last changed. */
  updatedAt: z.date(),
});
/** The public view of a User row. */
export type TUserView = z.infer<typeof ZUserView>;

/** A User row without its hash (its role as stored, known or not). */
export function toUserView(row: User): TUserView {
  return ZUserView.parse({
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    hasPassword: row.passwordHash !== null,
    disabledAt: row.disabledAt,
    disabledReason: row.disabledReason,
    source: row.source,
    breakGlass: row.breakGlass,
    groups: Array.isArray(row.groups) ? row.groups.filter((g): g is string => typeof g === "string") : null,
    lastSignInAt: row.lastSignInAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  });
}

/** bcrypt hash of a password at BCRYPT_COST. */
export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, BCRYPT_COST);
}

/** The audit chain of one user account. */
export function userScope(userId: string): string {
  return `user:${userId}`;
}

/** Appends the next link of a user's audit chain, in the caller's transaction (after its write). */
export async function appendUserAudit(
  tx: Prisma.TransactionClient,
  now: Date,
  userId: string,
  type: string,
  actor: Actor,
  data: { [key: string]: Json },
): Promise<void> {
  await appendAuditLink(tx, now, { scope: userScope(userId), runId: null, stepId: null, type, actor, data });
}

/** Serialises the "is anyone else still an admin" checks (see countActiveAdmins). */
const LAST_ADMIN_LOCK = "users:enabled-admins";

/**
 * How many enabled admins there are (an account change must never leave none). Call it after the
 * transaction's own write. On PostgreSQL two transactions demoting or disabling two different admins
 * would each still see the other admin enabled (READ COMMITTED) and together leave none; the lock
 * makes the second count wait for the first to commit and see its change. (SQLite: one writer at a time.)
 */
export async function countActiveAdmins(tx: Prisma.TransactionClient): Promise<number> {
  await serializeOn(tx, [LAST_ADMIN_LOCK]);
  return tx.user.count({ where: { role: "admin", disabledAt: null } });
}
