/** Marks a claimed task DONE, fenced by its token: a holder that was taken over changes nothing. */
import type { PrismaClient } from "@/generated/prisma";
import type { Json } from "@/packages/client/src/saga/tools";
import { jsonIn, settleTask } from "./task-record";
import { WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { type SettleResult, ZCompleteTaskRequest, type TCompleteTaskRequest } from "@/packages/client/src/protocol/tasks/task";

/**
 * `UPDATE ... SET status = 'DONE', result WHERE id = ? AND attempt = ? AND status = 'CLAIMED'`.
 * A stale token (the task was re-claimed since) returns `{ settled: false }` and changes nothing;
 * it never throws for that. Throws a ZodError for malformed input.
 */
export async function completeTask(prisma: PrismaClient, request: TCompleteTaskRequest): Promise<SettleResult> {
  const { result, ...fence } = ZCompleteTaskRequest.parse(request);
  const json = result as Json;
  return settleTask(
    prisma,
    fence,
    () => ({ status: WorkerTaskStatus.DONE, result: jsonIn(json), leaseUntil: null }),
    { type: "task.completed", data: { taskId: fence.taskId, attempt: fence.attempt } },
  );
}
