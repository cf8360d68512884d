/** Gives a claimed task up (FAILED) or hands it back for another attempt (PENDING), fenced by its token. */
import type { PrismaClient } from "@/generated/prisma";
import type { Json } from "@/packages/client/src/saga/tools";
import { jsonIn, settleTask } from "./task-record";
import { WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { type SettleResult, ZFailTaskRequest, type TFailTaskRequest } from "@/packages/client/src/protocol/tasks/task";

/**
 * `UPDATE ... SET status = 'PENDING' | 'FAILED', error WHERE id = ? AND attempt = ? AND status = 'CLAIMED'`.
 * With `retry` the task is released (no holder, no lease) and the next claim bumps `attempt`; without,
 * it is FAILED. A stale token returns `{ settled: false }` and changes nothing. Throws a ZodError
 * for malformed input.
 */
export async function failTask(prisma: PrismaClient, request: TFailTaskRequest): Promise<SettleResult> {
  const { error, retry, ...fence } = ZFailTaskRequest.parse(request);
  const json = error as Json;
  return settleTask(
    prisma,
    fence,
    () =>
      retry
        ? { status: WorkerTaskStatus.PENDING, error: jsonIn(json), claimedBy: null, leaseUntil: null }
        : { status: WorkerTaskStatus.FAILED, error: jsonIn(json), leaseUntil: null },
    { type: retry ? "task.released" : "task.failed", data: { taskId: fence.taskId, attempt: fence.attempt, retry, error: json } },
  );
}
