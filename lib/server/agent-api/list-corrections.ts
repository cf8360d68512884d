/** The correction drafts of an agent's run. */
import type { CorrectionRecord } from "@/packages/client/src/saga/store";
import { getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";

export async function listCorrectionsForAgent({ prisma, principal, runId }: AgentCaller & { runId: string }): Promise<CorrectionRecord[]> {
  const store = agentApiStore(prisma);
  await getAgentRun(store, principal, runId);
  return store.listCorrections(runId);
}
