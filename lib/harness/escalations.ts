/** Escalations and corrections raised by agents (they can raise, never resolve). */
import type { PrismaClient } from "@/generated/prisma";
import { SagaError } from "@/lib/saga/errors";
import { randomIds } from "@/lib/saga/ids";
import type { CorrectionRecord, CreateEscalationResult, EscalationRecord, NewCorrection, NewEscalation } from "@/lib/saga/store";
import type { Json } from "@/lib/saga/tools";
import type { EscalationStatus } from "@/lib/saga/vocabulary";
import { agentActor, getAgentRun, getAgentStep, harnessStore, mayActOn } from "./access";
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
  return store.createEscalation({ ...input, id: input.id ?? randomIds.next("esc"), runId }, { type: audit.type, actor: agentActor(principal), data: audit.data ?? {} });
}

export async function findEscalationForAgent(prisma: PrismaClient, principal: AgentPrincipal, dedupeKey: string): Promise<EscalationRecord | null> {
  const store = harnessStore(prisma);
  const escalation = await store.findEscalationByDedupeKey(dedupeKey);
  if (!escalation) return null;
  const run = await store.getRun(escalation.runId);
  return run && mayActOn(principal, run) ? escalation : null;
}

export async function getEscalationForAgent(prisma: PrismaClient, principal: AgentPrincipal, escalationId: string): Promise<EscalationRecord> {
  const store = harnessStore(prisma);
  const escalation = await store.getEscalation(escalationId);
  const run = escalation ? await store.getRun(escalation.runId) : null;
  if (!escalation || !run || !mayActOn(principal, run)) {
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
  return store.createCorrection({ ...input, id: input.id ?? randomIds.next("cor"), runId }, { type: audit.type, actor: agentActor(principal), data: audit.data ?? {} });
}

export async function listCorrectionsForAgent(prisma: PrismaClient, principal: AgentPrincipal, runId: string): Promise<CorrectionRecord[]> {
  const store = harnessStore(prisma);
  await getAgentRun(store, principal, runId);
  return store.listCorrections(runId);
}
