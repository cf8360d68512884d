/** The worker API's use cases: agents ask for unwinds; worker tokens claim and settle tasks. */
import type { PrismaClient } from "@/generated/prisma";
import type { Json } from "@/lib/saga/tools";
import { enqueueTask, type EnqueueTaskResult } from "@/lib/worker/enqueue-task";
import { getTask } from "@/lib/worker/find-tasks";
import { prismaTaskQueue } from "@/lib/worker/queue";
import type { ClaimedTask, SettleResult } from "@/lib/worker/task-record";
import type { ExtendLeaseResult } from "@/lib/worker/extend-lease";
import { WorkerTaskKind } from "@/lib/worker/vocabulary";
import { agentActor, assertNotWorker, getAgentRun, harnessStore } from "./access";
import { ApiError } from "./errors";
import type { AgentPrincipal } from "./principal";

/** Enqueues the run's unwind for a worker (one task per run; asking again returns the same task). */
export async function requestUnwindForAgent(prisma: PrismaClient, principal: AgentPrincipal, runId: string, reason: string): Promise<EnqueueTaskResult> {
  assertNotWorker(principal, "ask for an unwind");
  const store = harnessStore(prisma);
  await getAgentRun(store, principal, runId);
  const tools = [...new Set((await store.listSteps(runId)).map((s) => s.tool))];
  return enqueueTask(prisma, { kind: WorkerTaskKind.UNWIND, runId, tools, payload: { reason }, dedupeKey: `unwind:${runId}`, actor: agentActor(principal) });
}

function assertWorker(principal: AgentPrincipal): void {
  if (principal.role !== "worker") {
    throw new ApiError("FORBIDDEN", `The token "${principal.name}" is an agent token; claiming and settling tasks takes a worker token (npm run token -- create --role worker ...).`);
  }
}

/** Claims tasks within the token's tool scope (and the worker's own list, if it names one). */
export async function claimForWorker(
  prisma: PrismaClient,
  principal: AgentPrincipal,
  request: { workerId: string; tools?: string[]; max: number; leaseMs: number },
): Promise<ClaimedTask[]> {
  assertWorker(principal);
  const tools = request.tools ? request.tools.filter((t) => principal.tools.includes(t)) : principal.tools;
  return prismaTaskQueue(prisma).claim({ workerId: request.workerId, tools, max: request.max, leaseMs: request.leaseMs });
}

/** The task, if it is within the worker token's scope (otherwise it does not exist for it). */
async function scopedTask(prisma: PrismaClient, principal: AgentPrincipal, taskId: string) {
  assertWorker(principal);
  const task = await getTask(prisma, taskId);
  if (!task || !task.tools.every((t) => principal.tools.includes(t))) {
    throw new ApiError("NOT_FOUND", `Task ${taskId} does not exist for this worker token.`);
  }
  return task;
}

export async function completeForWorker(
  prisma: PrismaClient,
  principal: AgentPrincipal,
  input: { taskId: string; attempt: number; workerId: string; result: Json },
): Promise<SettleResult> {
  await scopedTask(prisma, principal, input.taskId);
  return prismaTaskQueue(prisma).complete(input);
}

export async function failForWorker(
  prisma: PrismaClient,
  principal: AgentPrincipal,
  input: { taskId: string; attempt: number; workerId: string; error: Json; retry: boolean },
): Promise<SettleResult> {
  await scopedTask(prisma, principal, input.taskId);
  return prismaTaskQueue(prisma).fail(input);
}

export async function heartbeatForWorker(
  prisma: PrismaClient,
  principal: AgentPrincipal,
  input: { taskId: string; attempt: number; workerId: string; leaseMs: number },
): Promise<ExtendLeaseResult> {
  await scopedTask(prisma, principal, input.taskId);
  return prismaTaskQueue(prisma).extendLease(input);
}
