/**
 * What the token use cases share on the server: the row-to-view mapping (never the hash),
 * the secret's format and hash, and the token audit chain.
 */
import { createHash } from "node:crypto";
import type { AgentToken, Prisma } from "@/generated/prisma";
import { type Actor } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { storedRole, type TAgentTokenView } from "./token-fields";

/** sha256 hex of a secret: tokens are 256-bit random values, so a fast hash is the right one. */
export function hashTokenSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** The tool list stored as JSON, read back defensively (a hand-edited row must not widen a scope). */
export function storedTools(value: Prisma.JsonValue): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** A token row without its hash. */
export function toAgentTokenView(row: AgentToken): TAgentTokenView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    tools: storedTools(row.tools),
    role: storedRole(row.role),
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
    lastUsedAt: row.lastUsedAt,
    expiresAt: row.expiresAt,
  };
}

/** The audit chain of one token. */
export function tokenScope(tokenId: string): string {
  return `agent-token:${tokenId}`;
}

/** Appends the next link of a token's audit chain, in the caller's transaction (after its write). */
export async function appendTokenAudit(
  tx: Prisma.TransactionClient,
  now: Date,
  tokenId: string,
  type: string,
  actor: Actor,
  data: { [key: string]: Json },
): Promise<void> {
  await appendAuditLink(tx, now, { scope: tokenScope(tokenId), runId: null, stepId: null, type, actor, data });
}
