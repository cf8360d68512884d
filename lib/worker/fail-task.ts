/** Gives a claimed task up (FAILED) or hands it back for another attempt (PENDING), fenced by its token. */
import { z } from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { JsonSchema } from "@/lib/api/schemas/saga";
import type { Json } from "@/lib/saga/tools";
import { ZTaskFenceSchema } from "./complete-task";
import { jsonIn, settleTask, type SettleResult } from "./task-record";
import { WorkerTaskStatus } from "./vocabulary";

/** What `failTask` takes. */
export const ZFailTaskSchema = ZTaskFenceSchema.extend({
  /** What went wrong (kept on the task, and in the audit event). */
  error: JsonSchema,
  /** True for a transient error: back to PENDING for any worker to claim; false: FAILED for good. */
  retry: z.boolean(),
});

/** What callers pass to `failTask`. */
export type TFailTaskRequest = z.input<typeof ZFailTaskSchema>;

/**
 * `UPDATE ... SET status = 'PENDING' | 'FAILED', error WHERE id = ? AND attempt = ? AND status = 'CLAIMED'`.
 * With `retry` the task is released (no holder, no lease) and the next claim bumps `attempt`; without,
 * it is FAILED. A stale token returns `{ settled: false }` and changes nothing. Throws a ZodError
 * for malformed input.
 */
export async function failTask(prisma: PrismaClient, request: TFailTaskRequest): Promise<SettleResult> {
  const { error, retry, ...fence } = ZFailTaskSchema.parse(request);
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
