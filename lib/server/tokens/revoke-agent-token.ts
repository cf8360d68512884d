import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ApiError, validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { appendTokenAudit, toAgentTokenView } from "./agent-token";
import { ZAgentTokenName, type TAgentTokenView } from "./token-fields";
import { writeTransaction } from "@/lib/core/db/transactions";

/** Which token to revoke, and who does it. */
export const ZRevokeAgentTokenInput = z.object({
  /** The token's name. */
  name: ZAgentTokenName,
  /** Who revokes it (an admin's email, or `cli:<user>`). */
  revokedBy: z.string().trim().min(1, "Say who revokes the token.").max(320),
});
/** Which token to revoke, and who does it. */
export type TRevokeAgentTokenInput = z.input<typeof ZRevokeAgentTokenInput>;

/** The token after revocation. */
export interface RevokedAgentToken {
  /** The token, with `revokedAt` set. */
  token: TAgentTokenView;
  /** False when it was already revoked (the first revocation time is kept). */
  changed: boolean;
}

/**
 * Revokes a token: its next request gets 401 (authentication reads the row on every request).
 * Revoking twice changes nothing. The revocation and its audit event commit together.
 */
export async function revokeAgentToken(prisma: PrismaClient, input: TRevokeAgentTokenInput): Promise<RevokedAgentToken> {
  const parsed = ZRevokeAgentTokenInput.safeParse(input);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The revocation");
  const { name, revokedBy } = parsed.data;

  return writeTransaction(prisma, async (tx, now) => {
    // Write first (fenced on revokedAt), then read: see lib/core/db/prisma-saga-store.ts on SQLite snapshots.
    const { count } = await tx.agentToken.updateMany({ where: { name, revokedAt: null }, data: { revokedAt: now } });
    const row = await tx.agentToken.findUnique({ where: { name } });
    if (!row) {
      throw new ApiError("NOT_FOUND", `No agent token is named "${name}"; list the tokens to see their names.`, {
        details: [{ path: "name", message: "no such token" }],
      });
    }
    if (count > 0) {
      await appendTokenAudit(tx, now, row.id, "agent_token.revoked", { type: "user", id: revokedBy }, { name });
    }
    return { token: toAgentTokenView(row), changed: count > 0 };
  });
}
