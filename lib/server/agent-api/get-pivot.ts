/** A pivot by id, long-polled: the agent waits here for the reviewer's decision. */
import { SagaError } from "@/packages/client/src/saga/errors";
import type { PivotRecord } from "@/packages/client/src/saga/store";
import { PivotStatus } from "@/packages/client/src/saga/vocabulary";
import { getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";

/** The longest a request may wait for a decision. */
export const MAX_WAIT_MS = 30_000;
const POLL_MS = 250;

/**
 * The pivot, waiting up to `waitMs` while it is PENDING. The wait polls the database, so a decision
 * taken in any app instance reaches the agent within a poll interval, and a restart of either side
 * loses nothing: the agent simply asks again.
 */
export async function getPivotForAgent({
  prisma,
  principal,
  pivotId,
  waitMs = 0,
  signal,
}: AgentCaller & { pivotId: string; waitMs?: number | undefined; signal?: AbortSignal | undefined }): Promise<PivotRecord> {
  const store = agentApiStore(prisma);
  const deadline = Date.now() + Math.min(Math.max(waitMs, 0), MAX_WAIT_MS);
  for (;;) {
    const pivot = await store.getPivot(pivotId);
    if (!pivot) throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${pivotId} does not exist for this agent token.`);
    await getAgentRun(store, principal, pivot.runId).catch(() => {
      throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${pivotId} does not exist for this agent token.`);
    });
    if (pivot.status !== PivotStatus.PENDING || Date.now() >= deadline || signal?.aborted) return pivot;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
