/**
 * What an agent token is, as the screens and the contracts see it: its name, tools and role, and the
 * public view of a row. Pure zod: a client component may load it (the token desk parses its answers
 * with these), so nothing here reads the database or hashes a secret (that is agent-token.ts).
 */
import * as z from "zod";

/** Every secret starts with this, so a leaked one is recognisable (secret scanners, logs). */
export const TOKEN_SECRET_PREFIX = "sgb_";

/** How many characters of the secret are stored in clear to recognise it in lists. */
export const TOKEN_PREFIX_LENGTH = 8;

/** An agent token's name: the agent's name on runs and in the audit log. */
export const ZAgentTokenName = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9_.-]{0,63}$/,
    "Use 1-64 lower-case letters, digits, '_', '.' or '-', starting with a letter or digit (e.g. support-agent).",
  );

/** A tool name, as the tool registry spells it. */
export const ZToolName = z
  .string()
  .regex(/^[a-z][a-z0-9_.-]{0,63}$/, "A tool name is 1-64 lower-case letters, digits, '_', '.' or '-', starting with a letter.");

/** The tools a token may record steps for: at least one, duplicates dropped, sorted. */
export const ZToolScope = z
  .array(ZToolName)
  .max(200)
  .transform((tools) => [...new Set(tools)].sort());

/** What a token may do: an agent records its own runs; a worker unwinds and reconciles any run, for its tools. */
export const ZTokenRole = z.enum(["agent", "worker"]);
/** What a token may do. */
export type TTokenRole = z.infer<typeof ZTokenRole>;

/** A stored role, read back defensively: anything unknown is the narrower "agent". */
export function storedRole(value: string): TTokenRole {
  return value === "worker" ? "worker" : "agent";
}

/** The public view of a token row: never the secret, never its hash. */
export const ZAgentTokenView = z.object({
  /** `tok_...` */
  id: z.string(),
  /** The agent's name. */
  name: z.string(),
  /** First characters of the secret (`sgb_AbCd`), to recognise it. */
  prefix: z.string(),
  /** Tools the token may record steps for. */
  tools: z.array(z.string()),
  /** agent or worker. */
  role: ZTokenRole,
  /** Who created it. */
  createdBy: z.string(),
  /** When it was created. */
  createdAt: z.date(),
  /** When it was revoked; null while it works. */
  revokedAt: z.date().nullable(),
  /** Roughly when it was last used (updated at most once a minute). */
  lastUsedAt: z.date().nullable(),
  /** After this instant it is refused like a revoked token; null: it does not expire. */
  expiresAt: z.date().nullable(),
});
/** The public view of a token row. */
export type TAgentTokenView = z.infer<typeof ZAgentTokenView>;

/** The longest lifetime a token may be given: five years, in seconds. */
export const MAX_TOKEN_LIFETIME_SEC = 5 * 366 * 86_400;

/** A token's lifetime in seconds: at least a minute, at most five years. */
export const ZTokenLifetime = z
  .number({ error: "A whole number of seconds." })
  .int("A whole number of seconds.")
  .min(60, "At least a minute (60 s).")
  .max(MAX_TOKEN_LIFETIME_SEC, "At most five years.");

/** Why a worker token needs tools, shared by every place a token is created. */
export const WORKER_NEEDS_TOOLS =
  "A worker token needs the tools whose connectors it holds (workers cannot declare tools, so a worker token with none could never work).";

/** A new token's scope is empty only for an agent token: a team's token for its namespace, which declares its tools. */
export function scopeFitsRole(token: { role: string; tools: readonly string[] }): boolean {
  return token.role === "agent" || token.tools.length > 0;
}
