/**
 * What the identity provider says about a person, applied in one place: their groups (at sign-in
 * from the groups claim, or through SCIM), whether they are active (SCIM), and the mapping an admin
 * keeps. Sign-in, every SCIM change and every mapping edit go through `applyProviderState`, so the
 * states below are kept the same way whoever changes them (lib/server/sso/ARCHITECTURE.md):
 *
 *   enabled (role = best mapped role of the groups)
 *     --provider: active=false / deleted----------> disabled "provider"        (sessions end)
 *     --groups now map to no role------------------> disabled "no_mapped_group" (sessions end)
 *     --groups map to a lower role-----------------> enabled, lower role        (sessions end)
 *   disabled "provider" --provider: active=true--> enabled again, if a group maps to a role
 *   disabled "no_mapped_group" --a mapped group---> enabled again
 *   disabled "admin" (an admin disabled it) -------> stays, whatever the provider says
 *
 * Every change is an event on the person's audit chain, in the transaction that makes it.
 */
import type { Prisma } from "@/generated/prisma";
import type { Actor } from "@/packages/client/src/saga/store";
import { endAllUserSessions, SessionEndReason } from "@/lib/server/auth/user-sessions";
import type { Role } from "@/lib/server/auth/roles";
import { appendUserAudit } from "@/lib/server/users/user";
import { isLowerRole, roleOfGroups, storedGroups, type GroupRoleMap } from "./group-roles";

/** How an account came to be. */
export const UserSource = {
  /** Made by an admin or the CLI; signs in with a password (with SSO on: only the break-glass one). */
  local: "local",
  /** Made at its first single sign-on. */
  sso: "sso",
  /** Made by the identity provider's SCIM client. */
  scim: "scim",
} as const;
export type UserSource = (typeof UserSource)[keyof typeof UserSource];

/** Why an account is disabled. */
export const UserDisabledReason = {
  /** An admin disabled it: only an admin enables it again. */
  admin: "admin",
  /** The identity provider deactivated or deleted the person (SCIM). */
  provider: "provider",
  /** None of the person's groups maps to a role. */
  no_mapped_group: "no_mapped_group",
} as const;
export type UserDisabledReason = (typeof UserDisabledReason)[keyof typeof UserDisabledReason];

/** What the provider says now; a field left out keeps what was known. */
export interface ProviderState {
  /** The person's groups, replacing the known list. */
  groups?: readonly string[];
  /** Whether the provider has the person active. */
  active?: boolean;
  /** Display name. */
  name?: string;
  /** The provider's id for the person. */
  externalId?: string | null;
}

/** What applying it did. */
export interface AccessChange {
  /** `usr_...` */
  userId: string;
  /** The account's email. */
  email: string;
  /** The role now (the last one kept while there is none). */
  role: string;
  /** The role the groups give, null when none is mapped. */
  mappedRole: Role | null;
  /** Why the account is disabled now; null when enabled. */
  disabledReason: UserDisabledReason | null;
  /** The groups now. */
  groups: string[];
  /** Sessions this change ended. */
  sessionsEnded: number;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * Applies `state` to the account `userId` in the caller's write transaction (after its first write:
 * this one starts with its own, so it can also be the first thing a transaction does). Ends the
 * person's sessions when they lose access or part of it. Throws when the account does not exist.
 */
export async function applyProviderState(
  tx: Prisma.TransactionClient,
  now: Date,
  userId: string,
  state: ProviderState,
  context: { by: Actor; mapping: GroupRoleMap; source?: UserSource },
): Promise<AccessChange> {
  // Write first (a SQLite transaction that reads first cannot write later if another process wrote).
  await tx.user.updateMany({ where: { id: userId }, data: { updatedAt: now } });
  const row = await tx.user.findUniqueOrThrow({ where: { id: userId } });
  const before = storedGroups(row.groups);
  const groups = state.groups ? [...new Set(state.groups)].sort() : before;
  const mappedRole = roleOfGroups(groups, context.mapping);
  const wasDisabled: UserDisabledReason | null = row.disabledAt ? ((row.disabledReason as UserDisabledReason | null) ?? UserDisabledReason.admin) : null;

  let disabled: UserDisabledReason | null = wasDisabled;
  if (state.active === false && disabled !== UserDisabledReason.admin) disabled = UserDisabledReason.provider;
  if (state.active === true && disabled === UserDisabledReason.provider) disabled = null;
  if (disabled === null || disabled === UserDisabledReason.no_mapped_group) disabled = mappedRole === null ? UserDisabledReason.no_mapped_group : null;
  const role = mappedRole ?? row.role;

  await tx.user.update({
    where: { id: userId },
    data: {
      groups,
      role,
      disabledAt: disabled ? (row.disabledAt ?? now) : null,
      disabledReason: disabled,
      ...(state.name !== undefined ? { name: state.name } : {}),
      ...(state.externalId !== undefined ? { externalId: state.externalId } : {}),
      ...(context.source && row.source === UserSource.local ? { source: context.source } : {}),
    },
  });

  const { by } = context;
  if (!sameList(before, groups)) await appendUserAudit(tx, now, userId, "user.groups_changed", by, { email: row.email, groups, mappedRole });
  if (role !== row.role) await appendUserAudit(tx, now, userId, "user.role_changed", by, { email: row.email, role, from: row.role, because: "groups" });
  if (disabled !== wasDisabled) {
    if (disabled === null) await appendUserAudit(tx, now, userId, "user.enabled", by, { email: row.email, because: wasDisabled ?? "" });
    else await appendUserAudit(tx, now, userId, disabled === UserDisabledReason.provider ? "user.deprovisioned" : "user.disabled", by, { email: row.email, reason: disabled });
  }
  let sessionsEnded = 0;
  if (disabled !== null && wasDisabled === null) {
    sessionsEnded = await endAllUserSessions(tx, userId, disabled === UserDisabledReason.provider ? SessionEndReason.deprovisioned : SessionEndReason.groups_changed, by);
  } else if (disabled === null && mappedRole !== null && isLowerRole(row.role, mappedRole)) {
    sessionsEnded = await endAllUserSessions(tx, userId, SessionEndReason.groups_changed, by);
  }
  return { userId, email: row.email, role, mappedRole, disabledReason: disabled, groups, sessionsEnded };
}
