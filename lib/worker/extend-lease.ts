/** The heartbeat: extends the lease of a claimed task, only for the holder of the current token. */
import { z } from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ZTaskFenceSchema } from "./complete-task";
import { toTaskRecord, writeTx, type WorkerTaskRecord } from "./task-record";
import { WorkerTaskStatus } from "./vocabulary";

/** What `extendLease` takes. */
export const ZExtendLeaseSchema = ZTaskFenceSchema.extend({
  /** The new lease runs this long from now (database clock). */
  leaseMs: z.number().int().min(100).max(3_600_000),
});

/** What callers pass to `extendLease`. */
export type TExtendLeaseRequest = z.input<typeof ZExtendLeaseSchema>;

/** The outcome of a heartbeat. */
export type ExtendLeaseResult =
  | {
      /** The lease was extended. */
      extended: true;
      /** Its new end (database clock). */
      leaseUntil: Date;
    }
  | {
      /** The token is stale or the task is settled: the caller no longer holds it and should stop working on it. */
      extended: false;
      /** The task as it stands now (null if there is no such task). */
      task: WorkerTaskRecord | null;
    };

/**
 * `UPDATE ... SET leaseUntil = now + leaseMs WHERE id = ? AND attempt = ? AND status = 'CLAIMED'`.
 * A holder whose lease expired but was not taken over yet still extends it (its token is current).
 * Not audited: a lease extension is bookkeeping, not a transition. Throws a ZodError for malformed input.
 */
export async function extendLease(prisma: PrismaClient, request: TExtendLeaseRequest): Promise<ExtendLeaseResult> {
  const { taskId, attempt, leaseMs } = ZExtendLeaseSchema.parse(request);
  return writeTx(prisma, async (tx, now) => {
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const { count } = await tx.workerTask.updateMany({
      where: { id: taskId, attempt, status: WorkerTaskStatus.CLAIMED },
      data: { leaseUntil, updatedAt: now },
    });
    if (count === 1) return { extended: true, leaseUntil };
    const row = await tx.workerTask.findUnique({ where: { id: taskId } });
    return { extended: false, task: row ? toTaskRecord(row) : null };
  });
}
