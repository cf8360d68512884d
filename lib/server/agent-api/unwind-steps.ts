/**
 * A worker (or the run's agent) walks an unwind over HTTP: the server decides each next action
 * (POST /runs/{id}/unwind/next, /steps/{id}/compensate/next) and records what the worker read back
 * after sending a compensation (POST /steps/{id}/compensation). The worker only looks keys up and
 * sends compensations, where the connectors are.
 */
import type { PrismaClient } from "@/generated/prisma";
import { systemClock } from "@/packages/client/src/saga/clock";
import { noCrashPoints } from "@/packages/client/src/saga/crash-points";
import type { EngineDeps } from "@/packages/client/src/saga/deps";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { StepRecord } from "@/packages/client/src/saga/store";
import { ToolRegistry } from "@/packages/client/src/saga/tools";
import { nextCompensateAction, nextUnwindAction, recordCompensation } from "@/packages/client/src/saga/unwind-commands";
import type { CompensationReport, StepCompensateAction, UnwindAction } from "@/packages/client/src/saga/messages";
import { agentActor, assertToolInScope, getAgentRun, getAgentStep, agentApiStore, type AgentCaller } from "./agent-access";

/** The server's side of an unwind: its decisions need no connector, so no tool is registered here. */
function unwindDeps(prisma: PrismaClient): EngineDeps {
  return {
    store: agentApiStore(prisma),
    registry: new ToolRegistry([], []),
    clock: systemClock,
    ids: randomIds,
    crashPoints: noCrashPoints,
    recheckAfterMs: 0,
    maxAttempts: 1,
    backoffMs: 0,
    systemActor: { type: "system", id: "api" },
  };
}

/** What the unwind walk is told: why, which steps the worker cannot compensate, who asked for the drafts. */
export interface UnwindWalk {
  reason: string;
  skipStepIds?: readonly string[] | undefined;
  draftedBy?: string | null | undefined;
}

/** The next thing the calling worker (or the run's agent) does for the run's unwind. */
export async function nextUnwindActionForAgent({ prisma, principal, runId, walk }: AgentCaller & { runId: string; walk: UnwindWalk }): Promise<UnwindAction> {
  await getAgentRun(agentApiStore(prisma), principal, runId);
  return nextUnwindAction(unwindDeps(prisma), runId, agentActor(principal), walk.reason, { skipStepIds: walk.skipStepIds, draftedBy: walk.draftedBy ?? null });
}

/** The next thing the calling worker does to pull back one step (a revoke's COMPENSATE task). */
export async function nextCompensateActionForAgent({ prisma, principal, stepId, draftedBy }: AgentCaller & { stepId: string; draftedBy: string | null }): Promise<StepCompensateAction> {
  const { step } = await getAgentStep(agentApiStore(prisma), principal, stepId);
  assertToolInScope(principal, step.tool);
  return nextCompensateAction(unwindDeps(prisma), stepId, agentActor(principal), draftedBy);
}

/** Records what the worker read back after sending a compensation. */
export async function reportCompensationForAgent({ prisma, principal, stepId, report }: AgentCaller & { stepId: string; report: CompensationReport }): Promise<StepRecord> {
  const { step } = await getAgentStep(agentApiStore(prisma), principal, stepId);
  assertToolInScope(principal, step.tool);
  return recordCompensation(unwindDeps(prisma), step, report, agentActor(principal));
}
