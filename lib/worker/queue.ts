/**
 * The task queue a worker talks to: the database directly (a worker beside the app) or the HTTP API
 * (a worker in its own process with the tool credentials, holding a worker token). Same fencing
 * either way: every settle and heartbeat carries the attempt of its claim.
 */
import type { PrismaClient } from "@/generated/prisma";
import { claimTasks, type TClaimTasksRequest } from "./claim-tasks";
import { completeTask, type TCompleteTaskRequest } from "./complete-task";
import { extendLease, type ExtendLeaseResult, type TExtendLeaseRequest } from "./extend-lease";
import { failTask, type TFailTaskRequest } from "./fail-task";
import type { ClaimedTask, SettleResult } from "./task-record";

/** What a worker needs of the queue. */
export interface TaskQueue {
  /** Claims up to `max` tasks the worker's tools cover, each with a fresh fencing token. */
  claim(request: TClaimTasksRequest): Promise<ClaimedTask[]>;
  /** Marks a held task DONE; a stale token settles nothing. */
  complete(request: TCompleteTaskRequest): Promise<SettleResult>;
  /** Marks a held task FAILED, or hands it back PENDING with `retry`. */
  fail(request: TFailTaskRequest): Promise<SettleResult>;
  /** Extends the lease of a held task. */
  extendLease(request: TExtendLeaseRequest): Promise<ExtendLeaseResult>;
}

/** The queue in the database, for a worker that shares the app's database. */
export function prismaTaskQueue(prisma: PrismaClient): TaskQueue {
  return {
    claim: (r) => claimTasks(prisma, r),
    complete: (r) => completeTask(prisma, r),
    fail: (r) => failTask(prisma, r),
    extendLease: (r) => extendLease(prisma, r),
  };
}
