import type { PrismaClient } from "@/generated/prisma";
import type { Actor } from "@/packages/client/src/saga/store";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { hashTokenSecret, storedTools } from "./agent-token";
import { storedRole, TOKEN_SECRET_PREFIX, type TTokenRole } from "./token-fields";
import { TX_OPTIONS } from "@/lib/core/db/transactions";
import { serverLog } from "@/lib/core/observability/log";

/** An authenticated agent harness. */
export interface AgentPrincipal {
  /** Discriminates agents from people (a signed-in person is lib/server/auth/current-user.ts `CurrentUser`). */
  kind: "agent";
  /** The token's id (`tok_...`): idempotency keys are scoped to it. */
  tokenId: string;
  /** The agent's name, recorded on its runs and audit events. */
  name: string;
  /** Tools the token may record steps for. */
  tools: string[];
  /** agent: its own runs only; worker: any run, for unwinds and reconciles of its tools. */
  role: TTokenRole;
  /** When the token stops working (null: never); a remembered principal past it is read again, and refused. */
  expiresAt?: Date | null;
}

/** The audit actor of an agent token. */
export function agentActor(principal: AgentPrincipal): Actor {
  return { type: principal.role === "worker" ? "system" : "agent", id: principal.name };
}

/** `lastUsedAt` is refreshed at most this often, so authentication is not a write on every request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

const HOW_TO_GET_ONE = "Send `Authorization: Bearer sgb_...` with an agent token (an admin creates one with `npm run token -- create`).";

/**
 * One answer for every secret that does not open the API: unknown, revoked or expired read the same,
 * and name nothing about the token or its agent (whoever holds a leaked or stale secret learns nothing).
 */
function notAValidToken(): ApiError {
  return new ApiError(
    "UNAUTHORIZED",
    "This agent token is not valid (unknown, revoked or expired). Check that the whole secret (it starts with sgb_) was copied; " +
      "secrets are shown only once, so if it is lost or no longer works, ask an admin for a new token.",
  );
}

/** Whether a token's expiry has passed at `now`. */
function expired(expiresAt: Date | null | undefined, now = Date.now()): boolean {
  return expiresAt != null && expiresAt.getTime() <= now;
}

/**
 * Authenticates an agent from the Authorization header. Reads the token row on every request (no
 * cache), so a revocation or an expiry takes effect on the very next request. Throws UNAUTHORIZED
 * saying what is wrong with the header (missing, not a Bearer token), and one plain answer for a
 * secret that is unknown, revoked or expired.
 */
export async function authenticateAgent(prisma: PrismaClient, authorizationHeader: string | null | undefined): Promise<AgentPrincipal> {
  const secret = bearerSecret(authorizationHeader);
  // A plain read (every request makes it): it never runs inside another request's transaction
  // (lib/core/db/serialized-adapter.ts), so it needs no transaction of its own.
  const row = secret.startsWith(TOKEN_SECRET_PREFIX) ? await prisma.agentToken.findUnique({ where: { tokenHash: hashTokenSecret(secret) } }) : null;
  if (!row) throw notAValidToken();
  if (row.revokedAt || expired(row.expiresAt)) {
    recentPrincipals.get(prisma)?.delete(row.tokenHash);
    throw notAValidToken();
  }
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await touchLastUsed(prisma, row.id);
  }
  const principal: AgentPrincipal = { kind: "agent", tokenId: row.id, name: row.name, tools: storedTools(row.tools), role: storedRole(row.role), expiresAt: row.expiresAt };
  rememberPrincipal(prisma, row.tokenHash, principal);
  return principal;
}

/** The secret of a Bearer Authorization header, or UNAUTHORIZED saying what is wrong with the header. */
function bearerSecret(authorizationHeader: string | null | undefined): string {
  const header = authorizationHeader?.trim() ?? "";
  if (header === "") throw new ApiError("UNAUTHORIZED", `The Authorization header is missing. ${HOW_TO_GET_ONE}`);
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match?.[1]) {
    throw new ApiError("UNAUTHORIZED", `The Authorization header is not a Bearer token. ${HOW_TO_GET_ONE}`);
  }
  return match[1];
}

// ---------------------------------------------------------------------------------------------
// Write routes whose one statement can check the token themselves (an intent, an outcome) skip the
// token read: they use the principal this process authenticated in the last LAST_USED_RESOLUTION_MS
// and put "this token exists and is not revoked" into the write's own guard (IntentGuard.activeToken,
// StepFence.activeToken). A revoked token's write fails that guard, writes nothing, and the route
// authenticates again, which answers 401: a revocation still takes effect on the very next request.

/** Per client (one database each), by token hash: the principal and when its row was last read. */
const recentPrincipals = new WeakMap<PrismaClient, Map<string, { principal: AgentPrincipal; readAt: number }>>();
const RECENT_PRINCIPALS_MAX = 1000;

function rememberPrincipal(prisma: PrismaClient, tokenHash: string, principal: AgentPrincipal): void {
  let byHash = recentPrincipals.get(prisma);
  if (!byHash) recentPrincipals.set(prisma, (byHash = new Map()));
  byHash.delete(tokenHash);
  byHash.set(tokenHash, { principal, readAt: Date.now() });
  if (byHash.size > RECENT_PRINCIPALS_MAX) byHash.delete(byHash.keys().next().value as string);
}

/** An agent authenticated for a write that can prove its token itself. */
export interface GuardedAgent {
  principal: AgentPrincipal;
  /** Set when the token row was not read for this request: the write must carry it as `activeToken`. */
  activeToken?: string;
  /** Reads the token row (UNAUTHORIZED if revoked): call it before any path that does not carry `activeToken`. */
  verified(): Promise<AgentPrincipal>;
}

/** A principal whose token was read for this request, as a GuardedAgent (nothing left to prove). */
export function verifiedAgent(principal: AgentPrincipal): GuardedAgent {
  return { principal, verified: async () => principal };
}

/** Authenticates without a read when this process read the token recently; see GuardedAgent. */
export async function authenticateAgentForGuardedWrite(prisma: PrismaClient, authorizationHeader: string | null | undefined): Promise<GuardedAgent> {
  const secret = bearerSecret(authorizationHeader);
  const recent = secret.startsWith(TOKEN_SECRET_PREFIX) ? recentPrincipals.get(prisma)?.get(hashTokenSecret(secret)) : undefined;
  if (recent && Date.now() - recent.readAt < LAST_USED_RESOLUTION_MS && !expired(recent.principal.expiresAt)) {
    let verified: Promise<AgentPrincipal> | null = null;
    return { principal: recent.principal, activeToken: recent.principal.tokenId, verified: () => (verified ??= authenticateAgent(prisma, authorizationHeader)) };
  }
  return verifiedAgent(await authenticateAgent(prisma, authorizationHeader));
}

/** Best effort: a failed bookkeeping write must not refuse a valid token. */
async function touchLastUsed(prisma: PrismaClient, tokenId: string): Promise<void> {
  try {
    await prisma.$transaction((tx) => tx.agentToken.updateMany({ where: { id: tokenId }, data: { lastUsedAt: new Date() } }), TX_OPTIONS);
  } catch (e) {
    serverLog().warn({ err: e, tokenId }, "could not record a token's lastUsedAt");
  }
}

