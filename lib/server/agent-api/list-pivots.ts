/** The pivots of an agent's run, oldest first. */
import type { PivotRecord } from "@/packages/client/src/saga/store";
import { getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";

export async function listPivotsForAgent({ prisma, principal, runId }: AgentCaller & { runId: string }): Promise<PivotRecord[]> {
  const store = agentApiStore(prisma);
  await getAgentRun(store, principal, runId);
  return store.listPivots(runId);
}
