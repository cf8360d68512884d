/**
 * Who may do what in the dashboard: the four roles (packages/client/src/saga/ARCHITECTURE.md, "People and what they do") and one
 * permission map. Every route handler, server action, page and lib function asks `can` (through
 * `requireUser` / `requirePageUser`), never a role name, so the map is the one place to change.
 * Agents are not users: they hold API tokens (lib/server/tokens) and can never approve anything.
 */
import * as z from "zod";
import { ApiError } from "@/packages/client/src/protocol/errors";

/** A person's role; stored in User.role. */
export const Role = {
  /** Maintains the per-tool reversibility table, users, roles and agent tokens; may do everything. */
  ADMIN: "admin",
  /** Approves or rejects pivots, works the escalation queue, pulls revoke triggers. */
  REVIEWER: "reviewer",
  /** Handles correction messages: edits the draft, approves and sends, or dismisses it. */
  SUPPORT: "support",
  /** Reads everything, changes nothing. */
  VIEWER: "viewer",
} as const;
export type Role = (typeof Role)[keyof typeof Role];
/** Every role, most powerful first. */
export const ROLES: readonly Role[] = Object.values(Role);
/** A role name, as stored and as typed on the command line. */
export const ZRole = z.enum(Role, { error: `Use one of: ${Object.values(Role).join(", ")}.` });

/** Something a person may be allowed to do. */
export const Action = {
  /** Approve or reject a run's pivot. */
  PIVOT_DECIDE: "pivot.decide",
  /** Claim an escalation so nobody else works it. */
  ESCALATION_CLAIM: "escalation.claim",
  /** Resolve a claimed escalation (approve a held step, settle an UNKNOWN, record a repair). */
  ESCALATION_RESOLVE: "escalation.resolve",
  /** Pull a revoke trigger on a confirmed step or a whole run. */
  REVOKE_PULL: "revoke.pull",
  /** Edit, send or dismiss a correction message. */
  CORRECTION_HANDLE: "correction.handle",
  /** Edit the per-tool reversibility table. */
  TOOLS_EDIT: "tools.edit",
  /** Create users, change their roles, disable them. */
  USERS_MANAGE: "users.manage",
  /** Create and revoke agent tokens. */
  TOKENS_MANAGE: "tokens.manage",
  /** See runs, steps, queues and the audit log. */
  READ: "read",
} as const;
export type Action = (typeof Action)[keyof typeof Action];
/** Every action. */
export const ACTIONS: readonly Action[] = Object.values(Action);

/** What each action means to a person, for messages ("... cannot decide pivots"). */
export const ACTION_PHRASES = {
  "pivot.decide": "decide pivots",
  "escalation.claim": "claim escalations",
  "escalation.resolve": "resolve escalations",
  "revoke.pull": "pull revoke triggers",
  "correction.handle": "handle correction messages",
  "tools.edit": "edit the tool table",
  "users.manage": "manage users",
  "tokens.manage": "manage agent tokens",
  read: "read the dashboard",
} as const satisfies Record<Action, string>;

/** The permission map; `satisfies` makes a missing role a compile error. */
const PERMISSIONS = {
  admin: ACTIONS,
  reviewer: [Action.PIVOT_DECIDE, Action.ESCALATION_CLAIM, Action.ESCALATION_RESOLVE, Action.REVOKE_PULL, Action.READ],
  support: [Action.CORRECTION_HANDLE, Action.READ],
  viewer: [Action.READ],
} as const satisfies Record<Role, readonly Action[]>;

/** Whether `role` may do `action`. */
export function can(role: Role, action: Action): boolean {
  return (PERMISSIONS[role] as readonly Action[]).includes(action);
}

/** The roles that may do `action`, most powerful first (for "it needs reviewer or admin"). */
export function rolesThatCan(action: Action): Role[] {
  return ROLES.filter((role) => can(role, action));
}

/** Why `role` may not do `action`, and who could. */
export function forbiddenMessage(role: string, action: Action): string {
  const who = rolesThatCan(action);
  return `Your role (${role}) cannot ${ACTION_PHRASES[action]}; that needs the ${who.join(" or ")} role. Ask an admin if you should have it.`;
}

/**
 * Refuses (ApiError FORBIDDEN, saying which roles could) unless `person`'s role may do `action`.
 * Every use case a person invokes asks it first, whoever read the person (a route, a page, a test).
 */
export function assertCan(person: { role: Role }, action: Action): void {
  if (!can(person.role, action)) throw new ApiError("FORBIDDEN", forbiddenMessage(person.role, action));
}

/** Whether a stored string is a known role (a hand-edited row must not grant anything). */
export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
