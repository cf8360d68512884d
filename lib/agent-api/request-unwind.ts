/** An agent asks for its run to be unwound by a worker that holds the run's tools. */
import { enqueueTask, type EnqueueTaskResult } from "@/lib/worker/enqueue-task";
import { WorkerTaskKind } from "@/lib/worker/vocabulary";
import { agentActor, assertNotWorker, getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";

/** Enqueues the run's unwind for a worker (one task per run; asking again returns the same task). */
export async function requestUnwindForAgent({ prisma, principal, runId, reason }: AgentCaller & { runId: string; reason: string }): Promise<EnqueueTaskResult> {
  assertNotWorker(principal, "ask for an unwind");
  const store = agentApiStore(prisma);
  await getAgentRun(store, principal, runId);
  const tools = [...new Set((await store.listSteps(runId)).map((s) => s.tool))];
  return enqueueTask(prisma, { kind: WorkerTaskKind.UNWIND, runId, tools, payload: { reason }, dedupeKey: `unwind:${runId}`, actor: agentActor(principal) });
}
