/**
 * A refused attempt by an agent token, on the token's audit chain: the agent side is untrusted, so a
 * request refused because it would cross a control (403: a tool outside its scope, a reference into
 * another namespace, a kind or key only the server raises) is something an admin must be able to see,
 * even though it changed nothing else. Best effort: failing to record it never changes the answer.
 */
import type { PrismaClient } from "@/generated/prisma";
import { serverLog } from "@/lib/core/observability/log";
import { writeTransaction } from "@/lib/core/db/transactions";
import type { Json } from "@/packages/client/src/saga/tools";
import { appendTokenAudit } from "./agent-token";
import { agentActor, type AgentPrincipal } from "./authenticate-agent";

/** What was refused: the endpoint, the answer's code and message, and the fields it names. */
export interface RefusedAttempt {
  /** The endpoint's operation id (`beginCall`, `declareTools`, ...). */
  operation: string;
  /** The error code answered. */
  code: string;
  /** The message answered. */
  message: string;
  /** The fields the refusal names. */
  fields: string[];
}

/** Appends `agent_token.refused` to the token's chain; never throws. */
export async function recordRefusedAttempt(prisma: PrismaClient, principal: AgentPrincipal, attempt: RefusedAttempt): Promise<void> {
  try {
    await writeTransaction(prisma, (tx, now) =>
      appendTokenAudit(tx, now, principal.tokenId, "agent_token.refused", agentActor(principal), {
        operation: attempt.operation,
        code: attempt.code,
        message: attempt.message.slice(0, 1000),
        fields: attempt.fields.slice(0, 20) as Json,
      }),
    );
  } catch (e) {
    serverLog().warn({ err: e, tokenId: principal.tokenId, operation: attempt.operation }, "could not record a refused attempt on the token's audit chain");
  }
}
