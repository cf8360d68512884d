/** The heartbeat: extends the lease of a claimed task, only for the holder of the current token. */
import type { PrismaClient } from "@/generated/prisma";
import { toTaskRecord } from "./task-record";
import { writeTransaction } from "@/lib/core/db/transactions";
import { WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { ZExtendLeaseRequest, type TExtendLeaseRequest, type ExtendLeaseResult } from "@/packages/client/src/protocol/tasks/task";

/**
 * `UPDATE ... SET leaseUntil = now + leaseMs WHERE id = ? AND attempt = ? AND status = 'CLAIMED'`.
 * A holder whose lease expired but was not taken over yet still extends it (its token is current).
 * Not audited: a lease extension is bookkeeping, not a transition. Throws a ZodError for malformed input.
 */
export async function extendLease(prisma: PrismaClient, request: TExtendLeaseRequest): Promise<ExtendLeaseResult> {
  const { taskId, attempt, leaseMs } = ZExtendLeaseRequest.parse(request);
  return writeTransaction(prisma, async (tx, now) => {
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
