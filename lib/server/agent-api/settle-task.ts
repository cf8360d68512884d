/** A worker settles a task it claimed (done with a result, or failed: retried or given up) and, while it works, extends its lease. The queue fences each by attempt and worker. */
import type { Json } from "@/packages/client/src/saga/tools";
import { prismaTaskQueue } from "@/lib/server/worker/queue";
import { getScopedTask, type AgentCaller } from "./agent-access";
import { type ExtendLeaseResult, type SettleResult } from "@/packages/client/src/protocol/tasks/task";

/** Which claim of which task settles. */
interface TaskAttempt {
  taskId: string;
  attempt: number;
  workerId: string;
}

export async function completeTaskForWorker({ prisma, principal, task }: AgentCaller & { task: TaskAttempt & { result: Json } }): Promise<SettleResult> {
  await getScopedTask(prisma, principal, task.taskId);
  return prismaTaskQueue(prisma).complete(task);
}

export async function failTaskForWorker({ prisma, principal, task }: AgentCaller & { task: TaskAttempt & { error: Json; retry: boolean } }): Promise<SettleResult> {
  await getScopedTask(prisma, principal, task.taskId);
  return prismaTaskQueue(prisma).fail(task);
}

/** A worker still working on a task extends its lease (the heartbeat). */
export async function extendTaskLeaseForWorker({ prisma, principal, task }: AgentCaller & { task: TaskAttempt & { leaseMs: number } }): Promise<ExtendLeaseResult> {
  await getScopedTask(prisma, principal, task.taskId);
  return prismaTaskQueue(prisma).extendLease(task);
}
