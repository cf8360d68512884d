/**
 * The task queue a worker talks to: the database directly (a worker beside the app) or the HTTP API
 * (a worker in its own process with the tool credentials, holding a worker token). Same fencing
 * either way: every settle and heartbeat carries the attempt of its claim.
 */
import type { PrismaClient } from "@/generated/prisma";
import { claimTasks } from "./claim-tasks";
import { completeTask } from "./complete-task";
import { extendLease } from "./extend-lease";
import { failTask } from "./fail-task";
import type { TaskQueue } from "@/packages/client/src/protocol/tasks/task";

/** The queue in the database, for a worker that shares the app's database. */
export function prismaTaskQueue(prisma: PrismaClient): TaskQueue {
  return {
    claim: (r) => claimTasks(prisma, r),
    complete: (r) => completeTask(prisma, r),
    fail: (r) => failTask(prisma, r),
    extendLease: (r) => extendLease(prisma, r),
  };
}
