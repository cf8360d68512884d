/** The escalations of an agent's run, optionally only those in some statuses. */
import type { EscalationRecord } from "@/packages/client/src/saga/store";
import type { EscalationStatus } from "@/packages/client/src/saga/vocabulary";
import { getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";

export async function listEscalationsForAgent({
  prisma,
  principal,
  runId,
  status,
}: AgentCaller & { runId: string; status?: readonly EscalationStatus[] | undefined }): Promise<EscalationRecord[]> {
  const store = agentApiStore(prisma);
  await getAgentRun(store, principal, runId);
  return store.listEscalations({ runId, ...(status ? { status } : {}) });
}
