/** The audit events of an agent's run, oldest first. */
import type { AuditEventRecord } from "@/packages/client/src/saga/store";
import { getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";

export async function getRunAuditForAgent({ prisma, principal, runId }: AgentCaller & { runId: string }): Promise<AuditEventRecord[]> {
  const store = agentApiStore(prisma);
  await getAgentRun(store, principal, runId);
  return store.listAuditEvents(runId);
}
