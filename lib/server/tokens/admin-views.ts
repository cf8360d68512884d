/**
 * Agent tokens as the admin desk (/admin/tokens and its JSON routes) shows them: plain JSON with
 * dates as ISO strings, never a hash. The secret appears in exactly one response, the creation's.
 * The contracts in lib/delivery/contracts/admin-people.ts parse responses with these schemas.
 */
import * as z from "zod";
import { ZIsoDate } from "@/packages/client/src/protocol/schemas/saga";
import { ZAgentTokenView, type TAgentTokenView } from "./token-fields";
import type { CreatedAgentToken } from "./create-agent-token";
import type { AgentTokenPage } from "./find-agent-tokens";
import type { RevokedAgentToken } from "./revoke-agent-token";
import { EXPIRY_WARNING_SEC } from "./token-lifetime";

/** One token (never its secret or hash): the token's public view, its times as ISO 8601 UTC. */
export const ZAdminToken = ZAgentTokenView.extend({
  /** When it was created. */
  createdAt: ZIsoDate,
  /** When it was revoked; null while it works. */
  revokedAt: ZIsoDate.nullable(),
  /** Roughly when it was last used (updated at most once a minute). */
  lastUsedAt: ZIsoDate.nullable(),
  /** When it stops working; null: never. */
  expiresAt: ZIsoDate.nullable(),
  /** Where its expiry stands: none, later, within a week (warned), or passed (refused like a revoked token). */
  expiry: z.enum(["never", "later", "soon", "expired"]),
});
/** One token. */
export type TAdminToken = z.infer<typeof ZAdminToken>;

/** One page of tokens, newest first, and the tools a new token may be scoped to. */
export const ZAdminTokenPage = z.object({
  /** The tokens. */
  items: z.array(ZAdminToken),
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: z.string().nullable(),
  /** Every tool in the tool table, by name: the choices for a new token's scope. */
  tools: z.array(z.string()),
  /** How long new tokens live unless their creator says otherwise, seconds; null: they do not expire. */
  defaultLifetimeSec: z.number().int().nullable(),
});
/** One page of tokens and the scopable tools. */
export type TAdminTokenPage = z.infer<typeof ZAdminTokenPage>;

/** A new token and its secret, shown once. */
export const ZCreatedAdminToken = z.object({
  /** The stored token. */
  token: ZAdminToken,
  /** `sgb_...`: only its sha256 is stored, so it cannot be shown again. */
  secret: z.string(),
});
/** A new token and its secret. */
export type TCreatedAdminToken = z.infer<typeof ZCreatedAdminToken>;

/** A token after revocation. */
export const ZRevokedAdminToken = z.object({
  /** The token, with `revokedAt` set. */
  token: ZAdminToken,
  /** False when it was already revoked (the first time is kept). */
  changed: z.boolean(),
});
/** A token after revocation. */
export type TRevokedAdminToken = z.infer<typeof ZRevokedAdminToken>;

/** Where a token's expiry stands at `now`. */
function expiryOf(expiresAt: Date | null, now: number): TAdminToken["expiry"] {
  if (!expiresAt) return "never";
  const left = expiresAt.getTime() - now;
  return left <= 0 ? "expired" : left <= EXPIRY_WARNING_SEC * 1000 ? "soon" : "later";
}

/** A TAgentTokenView as JSON. */
export function toAdminToken(token: TAgentTokenView, now = Date.now()): TAdminToken {
  return {
    ...token,
    createdAt: token.createdAt.toISOString(),
    revokedAt: token.revokedAt?.toISOString() ?? null,
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
    expiresAt: token.expiresAt?.toISOString() ?? null,
    expiry: expiryOf(token.expiresAt, now),
  };
}

/** A page of tokens as JSON, with the scopable tools and the default lifetime of new ones. */
export function toAdminTokenPage(page: AgentTokenPage, tools: string[], defaultLifetimeSec: number | null): TAdminTokenPage {
  return { items: page.items.map((t) => toAdminToken(t)), nextCursor: page.nextCursor, tools, defaultLifetimeSec };
}

/** A created token as JSON. */
export function toCreatedAdminToken(created: CreatedAgentToken): TCreatedAdminToken {
  return { token: toAdminToken(created.token), secret: created.secret };
}

/** A revoked token as JSON. */
export function toRevokedAdminToken(revoked: RevokedAgentToken): TRevokedAdminToken {
  return { token: toAdminToken(revoked.token), changed: revoked.changed };
}
