/** Marks a claimed task DONE, fenced by its token: a holder that was taken over changes nothing. */
import { z } from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { JsonSchema } from "@/lib/api/schemas/saga";
import type { Json } from "@/lib/saga/tools";
import { jsonIn, settleTask, type SettleResult } from "./task-record";
import { WorkerTaskStatus } from "./vocabulary";

/** The fence every settle and heartbeat carries. */
export const ZTaskFenceSchema = z.object({
  /** The task. */
  taskId: z.string().trim().min(1),
  /** The fencing token returned by the claim. */
  attempt: z.number().int().min(1),
  /** The worker holding the claim. */
  workerId: z.string().trim().min(1).max(200),
});

/** What `completeTask` takes. */
export const ZCompleteTaskSchema = ZTaskFenceSchema.extend({
  /** What the worker did (an unwind report, a reconciled step), kept on the task. */
  result: JsonSchema,
});

/** What callers pass to `completeTask`. */
export type TCompleteTaskRequest = z.input<typeof ZCompleteTaskSchema>;

/**
 * `UPDATE ... SET status = 'DONE', result WHERE id = ? AND attempt = ? AND status = 'CLAIMED'`.
 * A stale token (the task was re-claimed since) returns `{ settled: false }` and changes nothing;
 * it never throws for that. Throws a ZodError for malformed input.
 */
export async function completeTask(prisma: PrismaClient, request: TCompleteTaskRequest): Promise<SettleResult> {
  const { result, ...fence } = ZCompleteTaskSchema.parse(request);
  const json = result as Json;
  return settleTask(
    prisma,
    fence,
    () => ({ status: WorkerTaskStatus.DONE, result: jsonIn(json), leaseUntil: null }),
    { type: "task.completed", data: { taskId: fence.taskId, attempt: fence.attempt } },
  );
}
