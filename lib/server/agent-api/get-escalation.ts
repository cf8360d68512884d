/** One escalation by id, if it is on a run the caller may act on (otherwise not found). */
import { SagaError } from "@/packages/client/src/saga/errors";
import type { EscalationRecord } from "@/packages/client/src/saga/store";
import { getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";

export async function getEscalationForAgent({ prisma, principal, escalationId }: AgentCaller & { escalationId: string }): Promise<EscalationRecord> {
  const store = agentApiStore(prisma);
  const escalation = await store.getEscalation(escalationId);
  const run = escalation ? await getAgentRun(store, principal, escalation.runId).catch(() => null) : null;
  if (!escalation || !run) {
    throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${escalationId} does not exist for this agent token.`);
  }
  return escalation;
}
