/** An agent starts a run: the run's row and its run.started event, owned by the token's name. */
import { randomIds } from "@/packages/client/src/saga/ids";
import type { RunRecord } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { agentActor, assertNotWorker, agentApiStore, type AgentCaller } from "./agent-access";

/** Input of a new run. */
export interface CreateRunInput {
  /** What the run is for. */
  title: string;
  /** Who the agent acts for. */
  onBehalfOf?: string | null;
  /** Harness data. */
  metadata?: Json;
}

export async function createRunForAgent({ prisma, principal, run }: AgentCaller & { run: CreateRunInput }): Promise<RunRecord> {
  assertNotWorker(principal, "start a run");
  return agentApiStore(prisma).createRun(
    { id: randomIds.next("run"), title: run.title, agent: principal.name, onBehalfOf: run.onBehalfOf ?? null, metadata: run.metadata ?? {} },
    { type: "run.started", actor: agentActor(principal), data: { title: run.title, via: "api" } },
  );
}
