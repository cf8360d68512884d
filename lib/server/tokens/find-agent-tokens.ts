import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { toAgentTokenView } from "./agent-token";
import { type TAgentTokenView } from "./token-fields";
import { TX_OPTIONS } from "@/lib/core/db/transactions";

/** Which tokens to list. */
export const ZFindAgentTokensInput = z.object({
  /** Include revoked tokens (default true: an admin wants to see them). */
  includeRevoked: z.boolean().default(true),
  /** Page size. */
  limit: z.number().int().min(1).max(500).default(100),
  /** The `nextCursor` of the previous page. */
  cursor: z.string().min(1).optional(),
  /** oldest first (default; the CLI's list), or newest first (the admin desk: a new token on top). */
  order: z.enum(["oldest", "newest"]).default("oldest"),
});
/** Which tokens to list. */
export type TFindAgentTokensInput = z.input<typeof ZFindAgentTokensInput>;

/** One page of tokens, in the order asked for. */
export interface AgentTokenPage {
  /** The tokens (never their hashes). */
  items: TAgentTokenView[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** Lists agent tokens, oldest (or newest) first, a page at a time. */
export async function findAgentTokens(prisma: PrismaClient, input: TFindAgentTokensInput = {}): Promise<AgentTokenPage> {
  const parsed = ZFindAgentTokensInput.safeParse(input);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The token query");
  const { includeRevoked, limit, cursor, order } = parsed.data;
  const direction = order === "newest" ? "desc" : "asc";
  // In a transaction so the read never joins another request's open transaction on this connection.
  const rows = await prisma.$transaction(
    (tx) =>
      tx.agentToken.findMany({
        where: includeRevoked ? {} : { revokedAt: null },
        orderBy: [{ createdAt: direction }, { id: direction }],
        take: limit + 1,
        ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
      }),
    TX_OPTIONS,
  );
  const page = rows.slice(0, limit);
  return { items: page.map(toAgentTokenView), nextCursor: rows.length > limit ? (page.at(-1)?.id ?? null) : null };
}
