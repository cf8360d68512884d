/**
 * Accounts as the admin desk (/admin/users and its JSON routes) shows them: plain JSON with dates as
 * ISO strings, so the server's first paint and the browser's refreshes read the same shape. The
 * contracts in lib/delivery/contracts/admin-people.ts parse responses with these schemas.
 */
import * as z from "zod";
import { ZIsoDate } from "@/packages/client/src/protocol/schemas/saga";
import { isRole } from "@/lib/server/auth/roles";
import type { CreatedUserWithPassword } from "./create-user-with-initial-password";
import type { UserPage } from "./find-users";
import type { ChangedUser } from "./set-user-role";
import type { TUserView } from "./user";

/** One account (never its password hash). */
export const ZAdminUser = z.object({
  /** `usr_...` */
  id: z.string(),
  /** Lower-cased email; the sign-in name. */
  email: z.string(),
  /** Display name. */
  name: z.string(),
  /** What the person may do: a role Sagaboard knows, or what a hand-edited row holds (shown, so an admin can fix it). */
  role: z.string(),
  /** Whether `role` is one Sagaboard knows (an unknown one grants nothing). */
  roleKnown: z.boolean(),
  /** Whether the account signs in with a password (false: SSO only). */
  hasPassword: z.boolean(),
  /** When it was disabled; null while it works. */
  disabledAt: ZIsoDate.nullable(),
  /** Why it is disabled: admin, provider (deprovisioned by the identity provider), no_mapped_group; null while it works. */
  disabledReason: z.string().nullable(),
  /** How the account came to be: local, sso, scim. */
  source: z.string(),
  /** The break-glass account (a local admin with a password while single sign-on is on). */
  breakGlass: z.boolean(),
  /** The identity provider's groups, which its role follows; null for a local account. */
  groups: z.array(z.string()).nullable(),
  /** When the person last signed in. */
  lastSignInAt: ZIsoDate.nullable(),
  /** When it was created. */
  createdAt: ZIsoDate,
  /** When it last changed. */
  updatedAt: ZIsoDate,
});
/** One account. */
export type TAdminUser = z.infer<typeof ZAdminUser>;

/** One page of accounts, by email. */
export const ZAdminUserPage = z.object({
  /** The accounts. */
  items: z.array(ZAdminUser),
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: z.string().nullable(),
  /** The signed-in admin's email, so the page can mark their own row. */
  me: z.string(),
});
/** One page of accounts. */
export type TAdminUserPage = z.infer<typeof ZAdminUserPage>;

/** A new account and its initial password, shown once. */
export const ZCreatedAdminUser = z.object({
  /** The stored account. */
  user: ZAdminUser,
  /** The password the server made up; only its bcrypt hash is stored. */
  initialPassword: z.string(),
});
/** A new account and its initial password. */
export type TCreatedAdminUser = z.infer<typeof ZCreatedAdminUser>;

/** An account after a role change, a disable or an enable. */
export const ZChangedAdminUser = z.object({
  /** The account as it is now. */
  user: ZAdminUser,
  /** False when nothing changed (it already was so). */
  changed: z.boolean(),
});
/** An account after a change. */
export type TChangedAdminUser = z.infer<typeof ZChangedAdminUser>;

/** A TUserView as JSON. */
export function toAdminUser(user: TUserView): TAdminUser {
  return {
    ...user,
    // TUserView's role is typed Role, but a hand-edited row may hold anything: say which it is.
    roleKnown: isRole(user.role),
    disabledAt: user.disabledAt?.toISOString() ?? null,
    lastSignInAt: user.lastSignInAt?.toISOString() ?? null,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

/** A page of accounts as JSON, for `me`. */
export function toAdminUserPage(page: UserPage, me: string): TAdminUserPage {
  return { items: page.items.map(toAdminUser), nextCursor: page.nextCursor, me };
}

/** A created account as JSON. */
export function toCreatedAdminUser(created: CreatedUserWithPassword): TCreatedAdminUser {
  return { user: toAdminUser(created.user), initialPassword: created.initialPassword };
}

/** A changed account as JSON. */
export function toChangedAdminUser(changed: ChangedUser): TChangedAdminUser {
  return { user: toAdminUser(changed.user), changed: changed.changed };
}
