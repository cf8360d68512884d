/** An agent finishes its run (POST /runs/{id}/complete): refused while a step is unsettled or a pivot waits. */
import { completeRun } from "@/lib/saga/calls";
import { randomIds } from "@/lib/saga/ids";
import type { RunRecord } from "@/lib/saga/store";
import { agentActor, getAgentRun, agentApiStore, verifiedPrincipal, type AgentCaller } from "./agent-access";

export async function completeRunForAgent({ runId, ...caller }: AgentCaller & { runId: string }): Promise<RunRecord> {
  const principal = await verifiedPrincipal(caller);
  const store = agentApiStore(caller.prisma);
  await getAgentRun(store, principal, runId);
  return completeRun({ store, ids: randomIds }, runId, agentActor(principal));
}
