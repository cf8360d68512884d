/** Lists worker tasks (the dashboard's queue view, tests, the API). */
import { z } from "zod";
import type { Prisma, PrismaClient } from "@/generated/prisma";
import { readTx, toTaskRecord } from "./task-record";
import { WorkerTaskKind, WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { type WorkerTaskRecord } from "@/packages/client/src/protocol/tasks/task";

/** The largest page a caller may ask for. */
export const MAX_TASKS_PAGE = 500;

/** Filters of `findTasks`. */
export const ZFindTasksRequest = z.object({
  /** Only tasks of this run. */
  runId: z.string().trim().min(1).optional(),
  /** Only tasks about this step. */
  stepId: z.string().trim().min(1).optional(),
  /** Only tasks in one of these statuses. */
  status: z.array(z.enum(WorkerTaskStatus)).min(1).optional(),
  /** Only tasks of this kind. */
  kind: z.enum(WorkerTaskKind).optional(),
  /** At most this many, oldest first. */
  take: z.number().int().min(1).max(MAX_TASKS_PAGE).default(100),
});

/** What callers pass to `findTasks` (every field optional). */
export type TFindTasksRequest = z.input<typeof ZFindTasksRequest>;

/** Tasks matching the filters, oldest first. Throws a ZodError when a filter is malformed. */
export async function findTasks(prisma: PrismaClient, request: TFindTasksRequest = {}): Promise<WorkerTaskRecord[]> {
  const { runId, stepId, status, kind, take } = ZFindTasksRequest.parse(request);
  const where: Prisma.WorkerTaskWhereInput = {};
  if (runId !== undefined) where.runId = runId;
  if (stepId !== undefined) where.stepId = stepId;
  if (status !== undefined) where.status = { in: [...status] };
  if (kind !== undefined) where.kind = kind;
  const rows = await readTx(prisma, (tx) => tx.workerTask.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }], take }));
  return rows.map(toTaskRecord);
}

/** One task, or null. */
export async function getTask(prisma: PrismaClient, taskId: string): Promise<WorkerTaskRecord | null> {
  if (typeof taskId !== "string" || taskId.length === 0) return null;
  const row = await readTx(prisma, (tx) => tx.workerTask.findUnique({ where: { id: taskId } }));
  return row ? toTaskRecord(row) : null;
}
