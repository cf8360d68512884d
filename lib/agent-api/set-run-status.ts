/** An agent moves its run's status: only the moves that are the agent's, and to a finished status only when the log says it is. */
import { ApiError } from "@/lib/api/errors";
import { SagaError } from "@/lib/saga/errors";
import type { RunRecord } from "@/lib/saga/store";
import type { Json } from "@/lib/saga/tools";
import { EscalationStatus, RunStatus, StepStatus, UNSETTLED_STATUSES } from "@/lib/saga/vocabulary";
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

/**
 * A run is finished only when its log says so: no step unsettled (COMPLETED and UNWOUND), and for
 * UNWOUND nothing left out there: no confirmed effect that was neither compensated nor answered by a
 * person, no failed compensation without a manual repair, no open item for people.
 */
async function assertRunSettled(store: ReturnType<typeof agentApiStore>, runId: string, to: RunStatus): Promise<void> {
  const steps = await store.listSteps(runId);
  const open = steps.find((s) => UNSETTLED_STATUSES.includes(s.status));
  if (open) {
    throw new SagaError("RUN_NOT_SETTLED", `Run ${runId} cannot be ${to}: step ${open.stepIdx} (${open.tool}) is ${open.status}; reconcile it first.`, [
      { path: "to", message: `step ${open.stepIdx} is unsettled` },
    ]);
  }
  if (to !== RunStatus.UNWOUND) return;
  const left = steps.find((s) => s.status === StepStatus.CONFIRMED || (s.status === StepStatus.COMPENSATION_FAILED && !s.manualRepair));
  if (left) {
    throw new SagaError("RUN_NOT_SETTLED", `Run ${runId} cannot be UNWOUND: step ${left.stepIdx} (${left.tool}) is ${left.status}, so its effect is still out there; compensate it, or leave the run NEEDS_ATTENTION for a person.`, [
      { path: "to", message: `step ${left.stepIdx} is not undone` },
    ]);
  }
  const people = await store.listEscalations({ runId, status: [EscalationStatus.OPEN, EscalationStatus.CLAIMED] });
  if (people.length > 0) {
    throw new SagaError("RUN_NOT_SETTLED", `Run ${runId} cannot be UNWOUND while ${people.length} item(s) wait for people (${people[0]!.kind}); it is NEEDS_ATTENTION until they are resolved.`, [
      { path: "to", message: "open escalations" },
    ]);
  }
}
