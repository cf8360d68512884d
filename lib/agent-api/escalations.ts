/** Escalations and corrections raised by agents (they can raise, never resolve). */
import type { PrismaClient } from "@/generated/prisma";
import { SagaError } from "@/lib/saga/errors";
import { randomIds } from "@/lib/saga/ids";
import type { CorrectionRecord, CreateEscalationResult, EscalationRecord, NewCorrection, NewEscalation } from "@/lib/saga/store";
import type { Json } from "@/lib/saga/tools";
import type { EscalationStatus } from "@/lib/saga/vocabulary";
import { agentActor, getAgentRun, getAgentStep, harnessStore } from "./access";
import type { AgentPrincipal } from "./principal";

export async function raiseEscalationForAgent(
  prisma: PrismaClient,
  principal: AgentPrincipal,
  runId: string,
  input: Omit<NewEscalation, "runId" | "id"> & { id?: string },
  audit: { type: string; data?: Json },
): Promise<CreateEscalationResult> {
  const store = harnessStore(prisma);
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
  const result = await store.createEscalation({ ...input, id: input.id ?? randomIds.next("esc"), runId }, { type: audit.type, actor: agentActor(principal), data: audit.data ?? {} });
  if (result.escalation.runId !== runId) throw new SagaError("CONFLICT", "That dedupeKey belongs to another run; use one that names this run or its step.");
  return result;
}

export async function findEscalationForAgent(prisma: PrismaClient, principal: AgentPrincipal, dedupeKey: string): Promise<EscalationRecord | null> {
  const store = harnessStore(prisma);
  const escalation = await store.findEscalationByDedupeKey(dedupeKey);
  if (!escalation) return null;
  // The same rule as every run read: another agent's run, or (for a worker) one it holds no task of, is not there.
  const run = await getAgentRun(store, principal, escalation.runId).catch(() => null);
  return run ? escalation : null;
}

export async function getEscalationForAgent(prisma: PrismaClient, principal: AgentPrincipal, escalationId: string): Promise<EscalationRecord> {
  const store = harnessStore(prisma);
  const escalation = await store.getEscalation(escalationId);
  const run = escalation ? await getAgentRun(store, principal, escalation.runId).catch(() => null) : null;
  if (!escalation || !run) {
    throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${escalationId} does not exist for this agent token.`);
  }
  return escalation;
}

export async function listEscalationsForAgent(
  prisma: PrismaClient,
  principal: AgentPrincipal,
  runId: string,
  status?: readonly EscalationStatus[],
): Promise<EscalationRecord[]> {
  const store = harnessStore(prisma);
  await getAgentRun(store, principal, runId);
  return store.listEscalations({ runId, ...(status ? { status } : {}) });
}

export async function draftCorrectionForAgent(
  prisma: PrismaClient,
  principal: AgentPrincipal,
  runId: string,
  input: Omit<NewCorrection, "runId" | "id"> & { id?: string },
  audit: { type: string; data?: Json },
): Promise<CorrectionRecord> {
  const store = harnessStore(prisma);
  await getAgentRun(store, principal, runId);
  const { step } = await getAgentStep(store, principal, input.stepId);
  if (step.runId !== runId) throw new SagaError("STEP_NOT_FOUND", `Step ${input.stepId} is not part of run ${runId}.`);
  return store.createCorrection({ ...input, id: input.id ?? randomIds.next("cor"), runId, draftedBy: await draftedByOf(prisma, principal, runId) }, { type: audit.type, actor: agentActor(principal), data: audit.data ?? {} });
}

/** What asked for a worker's correction draft (`revoke:<id>`), read from the task it holds: the server's word, not the client's. */
async function draftedByOf(prisma: PrismaClient, principal: AgentPrincipal, runId: string): Promise<string | null> {
  if (principal.role !== "worker") return null;
  const tasks = await prisma.workerTask.findMany({ where: { runId, status: "CLAIMED" }, select: { payload: true } });
  for (const t of tasks) {
    const draftedBy = (t.payload as { draftedBy?: unknown } | null)?.draftedBy;
    if (typeof draftedBy === "string") return draftedBy;
  }
  return null;
}

export async function listCorrectionsForAgent(prisma: PrismaClient, principal: AgentPrincipal, runId: string): Promise<CorrectionRecord[]> {
  const store = harnessStore(prisma);
  await getAgentRun(store, principal, runId);
  return store.listCorrections(runId);
}
