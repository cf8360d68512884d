import { randomBytes } from "node:crypto";
import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ApiError, validationError, zodIssuesToDetails } from "@/packages/client/src/protocol/errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import { appendTokenAudit, hashTokenSecret, toAgentTokenView } from "./agent-token";
import { ZAgentTokenName, scopeFitsRole, TOKEN_PREFIX_LENGTH, TOKEN_SECRET_PREFIX, ZTokenLifetime, ZToolScope, ZTokenRole, WORKER_NEEDS_TOOLS, type TAgentTokenView } from "./token-fields";
import { getDefaultTokenLifetime } from "./token-lifetime";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { writeTransaction } from "@/lib/core/db/transactions";

/** What an admin supplies to create an agent token. */
export const ZCreateAgentTokenInput = z
  .object({
    /** The agent's name (unique, kept after revocation so audit entries stay unambiguous); also its team's namespace. */
    name: ZAgentTokenName,
    /**
     * Tools the token may record steps for. An agent token may start with none: a team's token for
     * its namespace, made before its tools exist; declaring them (into `<name>.`) adds them to its scope.
     */
    tools: ZToolScope,
    /** agent (default) or worker. */
    role: ZTokenRole.default("agent"),
    /** Who creates it (an admin's email, or `cli:<user>`). */
    createdBy: z.string().trim().min(1, "Say who creates the token.").max(320),
    /** How long it lives, in seconds; null: it never expires; absent: the default an admin set (tokens page). */
    expiresInSec: ZTokenLifetime.nullable().optional(),
  })
  .refine(scopeFitsRole, { path: ["tools"], message: WORKER_NEEDS_TOOLS });
/** What an admin supplies to create an agent token. */
export type TCreateAgentTokenInput = z.input<typeof ZCreateAgentTokenInput>;

/** A new token: its view and the secret, which exists only here and is never stored. */
export interface CreatedAgentToken {
  /** The stored token (without hash). */
  token: TAgentTokenView;
  /** `sgb_` + 32 random bytes base64url: show it once, then forget it. */
  secret: string;
}

/**
 * Creates an agent token scoped to `tools`, which must all be in the tool table (VALIDATION_FAILED
 * naming `tools` and each unknown name otherwise). Stores the sha256 of the secret and its first 8
 * characters; the secret itself is returned once. The token row and its audit event commit together.
 */
export async function createAgentToken(prisma: PrismaClient, input: TCreateAgentTokenInput): Promise<CreatedAgentToken> {
  const parsed = ZCreateAgentTokenInput.safeParse(input);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The agent token");
  const { name, tools, createdBy, role } = parsed.data;
  await assertToolsInTable(prisma, tools);
  const lifetime = parsed.data.expiresInSec === undefined ? await getDefaultTokenLifetime(prisma) : parsed.data.expiresInSec;

  const secret = `${TOKEN_SECRET_PREFIX}${randomBytes(32).toString("base64url")}`;
  const id = randomIds.next("tok");
  try {
    const row = await writeTransaction(prisma, async (tx, now) => {
      const created = await tx.agentToken.create({
        data: {
          id,
          name,
          tokenHash: hashTokenSecret(secret),
          prefix: secret.slice(0, TOKEN_PREFIX_LENGTH),
          tools,
          role,
          createdBy,
          createdAt: now,
          expiresAt: lifetime === null ? null : new Date(now.getTime() + lifetime * 1000),
        },
      });
      await appendTokenAudit(tx, now, id, "agent_token.created", { type: "user", id: createdBy }, {
        name,
        tools,
        role,
        prefix: created.prefix,
        expiresAt: created.expiresAt?.toISOString() ?? null,
      });
      return created;
    });
    return { token: toAgentTokenView(row), secret };
  } catch (e) {
    if (isUniqueViolation(e)) {
      throw new ApiError(
        "CONFLICT",
        `An agent token named "${name}" already exists (revoked tokens keep their name, so runs stay attributable); choose another name.`,
        { details: [{ path: "name", message: "already taken" }] },
      );
    }
    throw e;
  }
}

/**
 * Refuses a scope naming a tool the tool table does not have: such a token could never record a step
 * for it (the harness refuses unknown tools), and a typo would go unnoticed until an agent hit it.
 * A plain read before the transaction, so a refused scope costs no write.
 */
async function assertToolsInTable(prisma: PrismaClient, tools: string[]): Promise<void> {
  const rows = await prisma.toolPolicy.findMany({ where: { name: { in: tools } }, select: { name: true } });
  const known = new Set(rows.map((row) => row.name));
  const unknown = tools.filter((tool) => !known.has(tool));
  if (unknown.length === 0) return;
  const list = unknown.map((tool) => `"${tool}"`).join(", ");
  throw new ApiError(
    "VALIDATION_FAILED",
    `The agent token names ${unknown.length === 1 ? "a tool" : "tools"} the tool table does not have: ${list}. ` +
      "An admin must add each tool to the tool table first (or declare it), then create the token; check the spelling against the Tools page.",
    { details: [{ path: "tools", message: `not in the tool table: ${unknown.join(", ")}` }] },
  );
}
