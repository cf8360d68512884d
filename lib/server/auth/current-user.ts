/**
 * Who is making this request, for server code only (route handlers, server actions, server
 * components, lib functions). Never import it from a client component.
 *
 * The session cookie (a next-auth JWT) only says which user id signed in. The User row is read from
 * the database on every call, so a role change or a disabled account takes effect on the person's
 * next request. Authorization happens here and in the lib functions, never only in middleware/proxy
 * (CVE-2025-29927 bypassed Next.js middleware entirely).
 *
 * The session reader is injectable so tests can pass a fake one instead of a cookie.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { getServerSession } from "next-auth/next";
import { forbidden, redirect } from "next/navigation";
import { ApiError } from "@/packages/client/src/protocol/errors";
import type { Actor } from "@/packages/client/src/saga/store";
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { authOptions, SignInError, sessionIdentity, type SessionIdentity } from "./options";
import { pageAction } from "./page-actions";
import { signInPath } from "./return-path";
import { assertCan, can, forbiddenMessage, isRole, type Action, type Role } from "./roles";

/** The signed-in person, as the database says now. */
export interface CurrentUser {
  /** `usr_...` */
  id: string;
  /** Lower-cased email. */
  email: string;
  /** Display name. */
  name: string;
  /** What they may do (see `can`). */
  role: Role;
}

/** The audit actor of a person: their email, so the audit log reads `user:rita@example.com`. */
export function userActor(user: Pick<CurrentUser, "email">): Actor {
  return { type: "user", id: user.email };
}

/**
 * The one shape of a use case a person invokes: `verbEntity({ actor, ...input })`, the person acting
 * first and then what they ask, flat as the request carries it. Whoever invokes the use case reads
 * the person (the route wrapper from the session, a page from `requirePageUser`, a test or a script
 * from its own fixture); the use case asks `assertCan(actor, action)` before anything else, so no
 * use case reads an ambient session.
 */
export type PersonRequest<TInput = unknown> = { actor: CurrentUser } & TInput;

/**
 * Reads the session of the current request: who it names, or null when there is none. A plain user
 * id is a trusted reader's answer (tests, scripts acting as a user); the cookie reader also names the
 * UserSession, which must still be open.
 */
export type SessionReader = () => Promise<string | SessionIdentity | null>;

/** The real session reader: next-auth's getServerSession on the request's cookies. */
export const readSessionCookie: SessionReader = async () => {
  const identity = sessionIdentity(await getServerSession(authOptions));
  // A cookie from before sessions could end names no session: it cannot be ended, so it is refused.
  return identity ? { userId: identity.userId, sessionId: identity.sessionId ?? "none" } : null;
};

const sessionReaderScope = new AsyncLocalStorage<SessionReader>();

/**
 * Runs `fn` with `reader` as the session reader of every auth call inside it (including those made
 * deep in lib functions that call `requireUser(action)` without dependencies). For tests and
 * scripts that act as a given user without a request; scoped to `fn`, never process-wide.
 */
export function runWithSessionReader<T>(reader: SessionReader, fn: () => T): T {
  return sessionReaderScope.run(reader, fn);
}

/** What the auth functions use; tests pass a fake session reader and their own client. */
export interface AuthDependencies {
  /** Reads the session (default: the `runWithSessionReader` scope's reader, else the next-auth cookie). */
  readSession?: SessionReader;
  /** The database (default: the process-wide client). */
  prisma?: PrismaClient;
}

/** Where the session of a request stands once the database has been asked. */
export type SessionState =
  /** No session cookie (or an expired or tampered one). */
  | { kind: "signed-out" }
  /** A valid cookie whose account no longer exists or is disabled. */
  | { kind: "disabled"; userId: string }
  /** A valid cookie, an enabled account, but a role Sagaboard does not know (a hand-edited row). */
  | { kind: "unknown-role"; userId: string; role: string }
  /** A valid cookie and an enabled account. */
  | { kind: "signed-in"; user: CurrentUser };

/** Who the session of this request names (user and session ids), or null: the same reader `readSessionState` uses. */
export async function readSessionIdentity(deps: AuthDependencies = {}): Promise<SessionIdentity | null> {
  const read = await (deps.readSession ?? sessionReaderScope.getStore() ?? readSessionCookie)();
  if (!read) return null;
  return typeof read === "string" ? { userId: read, sessionId: null } : read;
}

/** Reads the session, then the User row (every call, no cache). */
export async function readSessionState(deps: AuthDependencies = {}): Promise<SessionState> {
  const read = await (deps.readSession ?? sessionReaderScope.getStore() ?? readSessionCookie)();
  if (!read) return { kind: "signed-out" };
  const { userId, sessionId } = typeof read === "string" ? { userId: read, sessionId: null } : read;
  const prisma = deps.prisma ?? (await getPrisma());
  // One read: the person, and (for a cookie) whether its session is still open.
  const row = await prisma.user.findUnique({
    where: { id: userId },
    select: { id: true, email: true, name: true, role: true, disabledAt: true, ...(sessionId !== null ? { sessions: { where: { id: sessionId, endedAt: null }, select: { id: true } } } : {}) },
  });
  if (!row || row.disabledAt !== null) return { kind: "disabled", userId };
  if (sessionId !== null && !("sessions" in row && Array.isArray(row.sessions) && row.sessions.length > 0)) return { kind: "signed-out" };
  if (!isRole(row.role)) return { kind: "unknown-role", userId, role: row.role };
  return { kind: "signed-in", user: { id: row.id, email: row.email, name: row.name, role: row.role } };
}

/** The signed-in, enabled user of this request, or null. */
export async function getCurrentUser(deps: AuthDependencies = {}): Promise<CurrentUser | null> {
  const state = await readSessionState(deps);
  return state.kind === "signed-in" ? state.user : null;
}

/** Why the signed-in person may not open the page at `pathname` (the 403 page's words). */
export async function forbiddenPageMessage(pathname: string, deps: AuthDependencies = {}): Promise<string> {
  const state = await readSessionState(deps);
  if (state.kind === "unknown-role") return `Your account has the role "${state.role}", which Sagaboard does not know. Ask an admin to set a valid role.`;
  if (state.kind === "signed-in") return forbiddenMessage(state.user.role, pageAction(pathname));
  return "Sign in with an account whose role may open this page.";
}

/**
 * The signed-in user, if they may do `action`. Throws ApiError UNAUTHORIZED when there is no
 * session or the account is disabled, FORBIDDEN when the role lacks the permission.
 */
export async function requireUser(action: Action, deps: AuthDependencies = {}): Promise<CurrentUser> {
  const state = await readSessionState(deps);
  switch (state.kind) {
    case "signed-out":
      throw new ApiError("UNAUTHORIZED", "Sign in first: this needs a Sagaboard session (sign in at /signin).");
    case "disabled":
      throw new ApiError("UNAUTHORIZED", "Your account is disabled or no longer exists; ask an admin to enable it, then sign in again.");
    case "unknown-role":
      throw new ApiError(
        "FORBIDDEN",
        `Your account has the role "${state.role}", which Sagaboard does not know; ask an admin to set a valid role (npm run user -- set-role).`,
      );
    case "signed-in":
      assertCan(state.user, action);
      return state.user;
  }
}

/**
 * What a page gets from `requirePageUser`: the user. A denial never returns: it throws Next's
 * `forbidden()` (a real 403, rendered by app/forbidden.tsx with the reason). `denied` is always null,
 * kept so every page's `if (denied) return denied;` reads the same until they are rewritten.
 */
export type PageAuth = { user: CurrentUser; denied: null };

/** Options of `requirePageUser`. */
export interface PageAuthOptions extends AuthDependencies {
  /** The page's own path (with query), to come back to after signing in. */
  returnTo?: string;
}

/**
 * For server components, first thing in every page:
 *
 *   const { user, denied } = await requirePageUser("read", { returnTo: `/runs/${runId}` });
 *   if (denied) return denied;
 *
 * Signed out (or disabled): redirects to /signin (which says why, and comes back to `returnTo`).
 * Signed in without the permission: answers 403 through Next's `forbidden()`; app/forbidden.tsx
 * says why (forbiddenPageMessage).
 */
export async function requirePageUser(action: Action, options: PageAuthOptions = {}): Promise<PageAuth> {
  const state = await readSessionState(options);
  switch (state.kind) {
    case "signed-out":
      return redirect(signInPath(options.returnTo));
    case "disabled":
      return redirect(signInPath(options.returnTo, SignInError.ACCOUNT_DISABLED));
    case "unknown-role":
      return forbidden();
    case "signed-in":
      if (!can(state.user.role, action)) {
        return forbidden();
      }
      return { user: state.user, denied: null };
  }
}
