/**
 * What the worker-task use cases share: the task record, the row mapper, and the transaction rules
 * of lib/core/db/prisma-saga-store.ts applied to the WorkerTask table (database clock, write first,
 * audit event in the same transaction).
 *
 * Connection rules: every database access here, reads included, goes through lib/core/db/transactions.ts,
 * whose per-client queue the saga store shares: on SQLite a plain query issued while a transaction of
 * the same client is open would join it (the worker process shares one client between the saga store
 * and its task queue: two connections to one file in one process can deadlock, because better-sqlite3
 * waits for a lock synchronously). Each write transaction reads only the database clock (no table, no
 * snapshot) before it writes.
 *
 * PostgreSQL: transactions run concurrently on pooled connections and a plain query never joins one,
 * so the queue is skipped there; writes stay fenced (`WHERE id = ? AND attempt = ?`, re-checked on the
 * latest committed row) and audit appends are serialised per chain.
 */
import { Prisma, type PrismaClient } from "@/generated/prisma";
import type { WorkerTask as WorkerTaskRow } from "@/generated/prisma";
import { appendRunAudit, readOnConnection, writeTransaction, type Tx } from "@/lib/core/db/transactions";
import type { Actor } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { WORKER_TASK_KINDS, WORKER_TASK_STATUSES, WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { workerActor, type WorkerTaskRecord, type TaskFence, type SettleResult } from "@/packages/client/src/protocol/tasks/task";

export type { Tx };

function corrupt(what: string): Error {
  return new Error(
    `The stored ${what} of a worker task is malformed. Tasks are written only by lib/server/worker: check for manual edits or a missing migration.`,
  );
}

function oneOf<T extends string>(values: readonly T[], value: unknown, what: string): T {
  if (typeof value === "string" && (values as readonly string[]).includes(value)) return value as T;
  throw corrupt(what);
}

/** Row -> record; refuses vocabulary values lib/server/worker does not define. */
export function toTaskRecord(row: WorkerTaskRow): WorkerTaskRecord {
  const tools = row.tools;
  if (!Array.isArray(tools) || tools.some((t) => typeof t !== "string")) throw corrupt("tools list");
  return {
    id: row.id,
    kind: oneOf(WORKER_TASK_KINDS, row.kind, "kind"),
    runId: row.runId,
    stepId: row.stepId,
    tools: tools as string[],
    status: oneOf(WORKER_TASK_STATUSES, row.status, "status"),
    attempt: row.attempt,
    claimedBy: row.claimedBy,
    leaseUntil: row.leaseUntil,
    dedupeKey: row.dedupeKey,
    payload: row.payload as Json,
    result: row.result === null ? null : (row.result as Json),
    error: row.error === null ? null : (row.error as Json),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** Json for a required column (Prisma wants JsonNull for a JSON null). */
export function jsonIn(value: Json): Prisma.InputJsonValue | typeof Prisma.JsonNull {
  return value === null ? Prisma.JsonNull : value;
}

/** One read, queued behind this client's open transaction (lib/core/db/transactions.ts) so it never joins it. */
export function readTx<T>(prisma: PrismaClient, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return readOnConnection(prisma, fn);
}

/**
 * Appends a task event to its run's audit chain (the same chain, hash and `(scope, seq)` fork
 * guard as PrismaSagaStore), so the run's timeline shows who claimed, finished or gave up its tasks.
 */
export async function appendTaskAudit(
  tx: Tx,
  now: Date,
  task: Pick<WorkerTaskRecord, "runId" | "stepId">,
  type: string,
  actor: Actor,
  data: Json,
): Promise<void> {
  await appendRunAudit(tx, now, task.runId, task.stepId, { type, actor, data });
}

/**
 * The fenced settle shared by completeTask and failTask:
 * `UPDATE ... SET <data> WHERE id = ? AND attempt = ? AND status = 'CLAIMED'`, and its audit event
 * in the same transaction. A stale token changes 0 rows and returns `settled: false`.
 */
export async function settleTask(
  prisma: PrismaClient,
  fence: TaskFence,
  data: (now: Date) => Prisma.WorkerTaskUpdateManyMutationInput,
  audit: { type: string; data: Json },
): Promise<SettleResult> {
  return writeTransaction(prisma, async (tx, now) => {
    const { count } = await tx.workerTask.updateMany({
      where: { id: fence.taskId, attempt: fence.attempt, status: WorkerTaskStatus.CLAIMED },
      data: { ...data(now), updatedAt: now },
    });
    const row = await tx.workerTask.findUnique({ where: { id: fence.taskId } });
    if (count === 0 || !row) return { settled: false, task: row ? toTaskRecord(row) : null };
    const task = toTaskRecord(row);
    await appendTaskAudit(tx, now, task, audit.type, workerActor(fence.workerId), audit.data);
    return { settled: true, task };
  });
}
