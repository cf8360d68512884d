/** Everything an agent needs to resume a run, read from the log. */
import type { CorrectionRecord, EscalationRecord, PivotRecord, RunRecord, StepRecord } from "@/packages/client/src/saga/store";
import { getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";

/** Everything resume needs, read from the log. */
export interface RunLog {
  /** The run. */
  run: RunRecord;
  /** Its saga log by stepIdx. */
  steps: StepRecord[];
  /** Its pivots. */
  pivots: PivotRecord[];
  /** Its escalations. */
  escalations: EscalationRecord[];
  /** Its correction drafts. */
  corrections: CorrectionRecord[];
}

export async function getRunLogForAgent({ prisma, principal, runId }: AgentCaller & { runId: string }): Promise<RunLog> {
  const store = agentApiStore(prisma);
  const run = await getAgentRun(store, principal, runId);
  const [steps, pivots, escalations, corrections] = [
    await store.listSteps(runId),
    await store.listPivots(runId),
    await store.listEscalations({ runId }),
    await store.listCorrections(runId),
  ];
  return { run, steps, pivots, escalations, corrections };
}
