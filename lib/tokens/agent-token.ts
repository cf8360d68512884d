/**
 * What the token use cases share: the input schemas, the public view of a token row (never the hash),
 * the secret's format and hash, and the token audit chain.
 */
import { createHash } from "node:crypto";
import * as z from "zod";
import type { AgentToken, Prisma } from "@/generated/prisma";
import { databaseNow as readDatabaseClock } from "@/lib/db/dialect";
import { type Actor } from "@/lib/saga/store";
import type { Json } from "@/lib/saga/tools";
import { appendAuditLink } from "@/lib/db/audit-chain";

/** Every secret starts with this, so a leaked one is recognisable (secret scanners, logs). */
export const TOKEN_SECRET_PREFIX = "sgb_";

/** How many characters of the secret are stored in clear to recognise it in lists. */
export const TOKEN_PREFIX_LENGTH = 8;

/** An agent token's name: the agent's name on runs and in the audit log. */
export const AgentTokenNameSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9_.-]{0,63}$/,
    "Use 1-64 lower-case letters, digits, '_', '.' or '-', starting with a letter or digit (e.g. support-agent).",
  );

/** A tool name, as the tool registry spells it. */
export const ToolNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_.-]{0,63}$/, "A tool name is 1-64 lower-case letters, digits, '_', '.' or '-', starting with a letter.");

/** The tools a token may record steps for: at least one, duplicates dropped, sorted. */
export const ToolScopeSchema = z
  .array(ToolNameSchema)
  .min(1, "Name at least one tool the token may use.")
  .max(200)
  .transform((tools) => [...new Set(tools)].sort());

/** What a token may do: an agent records its own runs; a worker unwinds and reconciles any run, for its tools. */
export const TokenRoleSchema = z.enum(["agent", "worker"]);
/** What a token may do. */
export type TokenRole = z.infer<typeof TokenRoleSchema>;

/** A stored role, read back defensively: anything unknown is the narrower "agent". */
export function storedRole(value: string): TokenRole {
  return value === "worker" ? "worker" : "agent";
}

/** The public view of a token row: never the secret, never its hash. */
export const AgentTokenViewSchema = z.object({
  /** `tok_...` */
  id: z.string(),
  /** The agent's name. */
  name: z.string(),
  /** First characters of the secret (`sgb_AbCd`), to recognise it. */
  prefix: z.string(),
  /** Tools the token may record steps for. */
  tools: z.array(z.string()),
  /** agent or worker. */
  role: TokenRoleSchema,
  /** Who created it. */
  createdBy: z.string(),
  /** When it was created. */
  createdAt: z.date(),
  /** When it was revoked; null while it works. */
  revokedAt: z.date().nullable(),
  /** Roughly when it was last used (updated at most once a minute). */
  lastUsedAt: z.date().nullable(),
});
/** The public view of a token row. */
export type AgentTokenView = z.infer<typeof AgentTokenViewSchema>;

/** sha256 hex of a secret: tokens are 256-bit random values, so a fast hash is the right one. */
export function hashTokenSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** The tool list stored as JSON, read back defensively (a hand-edited row must not widen a scope). */
export function storedTools(value: Prisma.JsonValue): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** A token row without its hash. */
export function toAgentTokenView(row: AgentToken): AgentTokenView {
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
  };
}

/** The audit chain of one token. */
export function tokenScope(tokenId: string): string {
  return `agent-token:${tokenId}`;
}

/** The database clock (lib/db/dialect.ts): on SQLite a table-less SELECT, so it takes no WAL snapshot before the first write. */
export function databaseNow(tx: Prisma.TransactionClient): Promise<Date> {
  return readDatabaseClock(tx);
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
