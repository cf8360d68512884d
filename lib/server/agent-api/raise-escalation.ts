/** An agent raises an escalation on its run (agents raise, people resolve), deduplicated by a key that names the run or the step. */
import { SagaError } from "@/lib/saga/errors";
import { randomIds } from "@/lib/saga/ids";
import type { CreateEscalationResult, NewEscalation } from "@/lib/saga/store";
import type { Json } from "@/lib/saga/tools";
import { agentActor, getAgentRun, getAgentStep, agentApiStore, type AgentCaller } from "./agent-access";

export async function raiseEscalationForAgent({
  prisma,
  principal,
  runId,
  escalation: input,
  event,
}: AgentCaller & { runId: string; escalation: Omit<NewEscalation, "runId" | "id"> & { id?: string }; event: { type: string; data?: Json } }): Promise<CreateEscalationResult> {
  const store = agentApiStore(prisma);
  await getAgentRun(store, principal, runId);
  if (input.stepId) {
    const { step } = await getAgentStep(store, principal, input.stepId);
    if (step.runId !== runId) throw new SagaError("STEP_NOT_FOUND", `Step ${input.stepId} is not part of run ${runId}.`);
  }
  // Dedupe keys are unique across every agent. A key that names the caller's own run or step (as
  // every key the engine makes does: hold:<run>..., compfail:<step>) cannot be another agent's, so
  // nobody can read back, or squat on, an escalation of a run they may not act on.
  if (!input.dedupeKey.includes(runId) && !(input.stepId && input.dedupeKey.includes(input.stepId))) {
    throw new SagaError("INVALID_ARGS", `dedupeKey must name the run (${runId}) or the step it is about, e.g. "compfail:<stepId>" or "hold:${runId}:...", so it can never collide with another agent's.`, [
      { path: "escalation.dedupeKey", message: "must contain the run id or the step id" },
    ]);
  }
  const result = await store.createEscalation({ ...input, id: input.id ?? randomIds.next("esc"), runId }, { type: event.type, actor: agentActor(principal), data: event.data ?? {} });
  if (result.escalation.runId !== runId) throw new SagaError("CONFLICT", "That dedupeKey belongs to another run; use one that names this run or its step.");
  return result;
}
