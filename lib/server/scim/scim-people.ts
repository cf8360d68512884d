/**
 * What the SCIM use cases share: reading people and groups the way SCIM addresses them, refusing the
 * break-glass account (kept by hand in Sagaboard, never by the provider), and applying what the
 * provider says through the one state machine of lib/server/sso/person-access.ts.
 */
import type { Prisma, PrismaClient, User } from "@/generated/prisma";
import type { Db } from "@/lib/core/db/dialect";
import type { Actor } from "@/packages/client/src/saga/store";
import { readGroupRoles, storedGroups } from "@/lib/server/sso/group-roles";
import { applyProviderState, UserSource, type AccessChange, type ProviderState } from "@/lib/server/sso/person-access";
import { ScimError } from "./scim-resources";

/** The account SCIM names by id, or 404 saying so. */
export async function scimUserOrThrow(db: Db | PrismaClient, id: string): Promise<User> {
  const row = await db.user.findUnique({ where: { id } });
  if (!row) throw new ScimError(404, `No user has the id ${id}; list /scim/v2/Users?filter=userName eq "<email>" to find the person's id.`);
  return row;
}

/** Refuses a change to the break-glass account: it is the way in when the provider fails. */
export function assertProviderMayChange(user: User): void {
  if (user.breakGlass) {
    throw new ScimError(403, `${user.email} is Sagaboard's break-glass account, kept by hand so an admin can get in when single sign-on fails; the identity provider cannot change it. Provision the person under another email, or clear break-glass on the users page first.`, "mutability");
  }
}

/** The people whose groups include `displayName` (read in JavaScript: each store filters JSON differently). */
export async function membersOf(db: Db | PrismaClient, displayName: string): Promise<User[]> {
  return (await db.user.findMany({ orderBy: { email: "asc" } })).filter((u) => storedGroups(u.groups).includes(displayName));
}

/** Applies what the provider says about `userId`, with the current mapping, in the caller's transaction. */
export async function applyForProvider(tx: Prisma.TransactionClient, now: Date, userId: string, state: ProviderState, by: Actor): Promise<AccessChange> {
  // A write before the mapping's read (lib/core/db/transactions.ts: a SQLite transaction writes first).
  await tx.user.updateMany({ where: { id: userId }, data: { updatedAt: now } });
  return applyProviderState(tx, now, userId, state, { by, mapping: await readGroupRoles(tx), source: UserSource.scim });
}

/** Adds or removes one group name on each of `userIds`. */
export async function changeMembership(tx: Prisma.TransactionClient, now: Date, displayName: string, userIds: readonly string[], add: boolean, by: Actor): Promise<void> {
  for (const id of userIds) {
    await tx.user.updateMany({ where: { id }, data: { updatedAt: now } });
    const user = await scimUserOrThrow(tx, id);
    assertProviderMayChange(user);
    const groups = storedGroups(user.groups);
    const next = add ? [...new Set([...groups, displayName])] : groups.filter((g) => g !== displayName);
    await applyForProvider(tx, now, id, { groups: next }, by);
  }
}
