/** An agent finishes its run (POST /runs/{id}/complete): refused while a step is unsettled or a pivot waits. */
import { completeRun } from "@/packages/client/src/saga/calls";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { RunRecord, StepRecord } from "@/packages/client/src/saga/store";
import { reportPreviousOutcome, type PreviousOutcomeRequest } from "./report-outcome";
import { agentActor, getAgentRun, agentApiStore, verifiedPrincipal, type AgentCaller } from "./agent-access";

/**
 * Finishes the run. With `previous` (the last call's outcome) that outcome is recorded first, so a
 * run's last step and its finish are one request.
 */
export async function completeRunForAgent({ runId, previous, ...caller }: AgentCaller & { runId: string; previous?: PreviousOutcomeRequest }): Promise<{ run: RunRecord; previous?: StepRecord }> {
  const recorded = previous ? await reportPreviousOutcome({ ...caller, previous }) : undefined;
  const principal = await verifiedPrincipal(caller);
  const store = agentApiStore(caller.prisma);
  await getAgentRun(store, principal, runId);
  const run = await completeRun({ store, ids: randomIds }, runId, agentActor(principal));
  return recorded ? { run, previous: recorded } : { run };
}
