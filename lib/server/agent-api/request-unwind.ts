/** An agent asks for its run to be unwound by a worker that holds the run's tools. */
import type { EnqueueTaskResult } from "@/lib/server/worker/enqueue-task";
import { enqueueRunUnwind } from "@/lib/server/worker/enqueue-plan-commit";
import { agentActor, assertNotWorker, getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";

/** Enqueues the run's unwind for a worker (one task per run; asking again returns the same task). */
export async function requestUnwindForAgent({ prisma, principal, runId, reason }: AgentCaller & { runId: string; reason: string }): Promise<EnqueueTaskResult> {
  assertNotWorker(principal, "ask for an unwind");
  await getAgentRun(agentApiStore(prisma), principal, runId);
  return enqueueRunUnwind(prisma, { runId, actor: agentActor(principal), reason });
}
