/** An agent moves its run's status: only the moves that are the agent's, and to a finished status only when the log says it is. */
import { ApiError } from "@/packages/client/src/protocol/errors";
import type { RunRecord } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { assertRunSettled } from "@/packages/client/src/saga/run-settled";
import { RunStatus } from "@/packages/client/src/saga/vocabulary";
import { agentActor, getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";

/** The moves an agent may make on its run's status; pivots and people make the others. */
const AGENT_MOVES: Partial<Record<RunStatus, readonly RunStatus[]>> = {
  [RunStatus.COMPLETED]: [RunStatus.RUNNING, RunStatus.COMMITTING],
  [RunStatus.UNWINDING]: [RunStatus.RUNNING, RunStatus.AWAITING_PIVOT, RunStatus.COMMITTING, RunStatus.COMPLETED, RunStatus.UNWINDING, RunStatus.NEEDS_ATTENTION],
  [RunStatus.UNWOUND]: [RunStatus.UNWINDING],
  [RunStatus.NEEDS_ATTENTION]: [RunStatus.UNWINDING],
};

export async function setRunStatusForAgent({
  prisma,
  principal,
  runId,
  move,
}: AgentCaller & { runId: string; move: { from: RunStatus[] | null; to: RunStatus; type: string; data?: Json } }): Promise<RunRecord | null> {
  const store = agentApiStore(prisma);
  await getAgentRun(store, principal, runId);
  const allowed = AGENT_MOVES[move.to];
  if (!allowed) {
    throw new ApiError("FORBIDDEN", `An agent cannot move a run to ${move.to}; that takes a pivot decision or a person.`, { details: [{ path: "to", message: "not an agent move" }] });
  }
  if (move.to === RunStatus.COMPLETED || move.to === RunStatus.UNWOUND) await assertRunSettled(store, runId, move.to);
  const from = move.from ? move.from.filter((s) => allowed.includes(s)) : allowed;
  return store.setRunStatus(runId, from, move.to, { type: move.type, actor: agentActor(principal), data: move.data ?? {} });
}
