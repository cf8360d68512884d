/**
 * A worker task as both sides see it: the record, what a worker sends to claim, settle and extend
 * it, the queue it talks to, and each kind's payload. No database here: the worker loop and the HTTP
 * client use this module in a process that has no server in it; the database side (claim-tasks.ts,
 * complete-task.ts, ...) implements it.
 */
import { z } from "zod";
import { ZJson } from "../schemas/saga";
import type { Actor } from "../../saga/store";
import type { Json } from "../../saga/tools";
import type { WorkerTaskKind, WorkerTaskStatus } from "./vocabulary";

/** One worker task. */
export interface WorkerTaskRecord {
  /** `tsk_...` */
  id: string;
  /** What to do. */
  kind: WorkerTaskKind;
  /** The run it is about. */
  runId: string;
  /** The step (RECONCILE, COMPENSATE); null for UNWIND. */
  stepId: string | null;
  /** Tools whose connectors the worker needs; only a worker holding all of them may claim it. */
  tools: string[];
  /** Where it stands. */
  status: WorkerTaskStatus;
  /** Fencing token: bumped on every claim; a settle or heartbeat must name the current one. */
  attempt: number;
  /** The worker holding (or that last held) it. */
  claimedBy: string | null;
  /** The holder's lease ends here (database clock); past it, another worker may take the task over. */
  leaseUntil: Date | null;
  /** One task per purpose (`unwind:run_...`). */
  dedupeKey: string;
  /** Kind-specific input (UNWIND: `{ reason }`). */
  payload: Json;
  /** What the worker did (DONE). */
  result: Json | null;
  /** Why it failed, or why the last attempt failed (FAILED, or PENDING after a retry). */
  error: Json | null;
  /** Enqueued (database clock). */
  createdAt: Date;
  /** Last changed (database clock). */
  updatedAt: Date;
}

/** A task held by this worker: `attempt` is the fencing token every settle and heartbeat must carry. */
export interface ClaimedTask extends WorkerTaskRecord {
  status: "CLAIMED";
  claimedBy: string;
  leaseUntil: Date;
}

/** The system actor of the task queue when the caller names none. */
export const QUEUE_ACTOR: Actor = { type: "system", id: "task-queue" };

/** The actor a worker writes as. */
export function workerActor(workerId: string): Actor {
  return { type: "system", id: workerId };
}

/** What a settle (complete, fail) or heartbeat names: the task and the fencing token it holds. */
export interface TaskFence {
  /** The task. */
  taskId: string;
  /** The fencing token from the claim. */
  attempt: number;
  /** The holder (audit actor). */
  workerId: string;
}

/** The outcome of a settle. */
export type SettleResult =
  | {
      /** The holder of the current fencing token settled the task. */
      settled: true;
      /** The task as settled. */
      task: WorkerTaskRecord;
    }
  | {
      /**
       * Nothing changed: the token is stale (the task was taken over since) or the task is no
       * longer CLAIMED. The work was superseded; do not retry it.
       */
      settled: false;
      /** The task as it stands now (null if there is no such task). */
      task: WorkerTaskRecord | null;
    };

/** What `claimTasks` takes. */
export const ZClaimTasksRequest = z.object({
  /** The claiming worker (recorded as `claimedBy` and as the audit actor). */
  workerId: z.string().trim().min(1).max(200),
  /** Tools this worker has connectors for; only tasks whose tools are all among them are claimed. */
  tools: z.array(z.string().trim().min(1)).max(1000),
  /** At most this many tasks. */
  max: z.number().int().min(1).max(100),
  /** Lease length (database clock); heartbeat well within it (`extendLease`). */
  leaseMs: z.number().int().min(100).max(3_600_000),
});

/** What callers pass to `claimTasks`. */
export type TClaimTasksRequest = z.input<typeof ZClaimTasksRequest>;

/** The fence every settle and heartbeat carries. */
export const ZTaskFence = z.object({
  /** The task. */
  taskId: z.string().trim().min(1),
  /** The fencing token returned by the claim. */
  attempt: z.number().int().min(1),
  /** The worker holding the claim. */
  workerId: z.string().trim().min(1).max(200),
});

/** What `completeTask` takes. */
export const ZCompleteTaskRequest = ZTaskFence.extend({
  /** What the worker did (an unwind report, a reconciled step), kept on the task. */
  result: ZJson,
});

/** What callers pass to `completeTask`. */
export type TCompleteTaskRequest = z.input<typeof ZCompleteTaskRequest>;

/** What `extendLease` takes. */
export const ZExtendLeaseRequest = ZTaskFence.extend({
  /** The new lease runs this long from now (database clock). */
  leaseMs: z.number().int().min(100).max(3_600_000),
});

/** What callers pass to `extendLease`. */
export type TExtendLeaseRequest = z.input<typeof ZExtendLeaseRequest>;

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

/** What `failTask` takes. */
export const ZFailTaskRequest = ZTaskFence.extend({
  /** What went wrong (kept on the task, and in the audit event). */
  error: ZJson,
  /** True for a transient error: back to PENDING for any worker to claim; false: FAILED for good. */
  retry: z.boolean(),
});

/** What callers pass to `failTask`. */
export type TFailTaskRequest = z.input<typeof ZFailTaskRequest>;

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

/** What asked a task's work (`revoke:<rvk_...>`): recorded on the corrections it drafts. */
export const ZDraftedBy = z.string().trim().min(1).max(80);

/** The payload of an UNWIND task: the reason goes into the run's audit log. */
export const ZUnwindPayload = z.object({
  /** Why the run is unwound, in words. */
  reason: z.string().trim().min(1),
  /** Steps to leave as they are (a whole-run revoke: steps past their window, escalated instead). */
  skipStepIds: z.array(z.string().min(1)).max(10_000).optional(),
  /** What asked for the unwind, recorded on the corrections it drafts. */
  draftedBy: ZDraftedBy.optional(),
});

/** The payload of a COMPENSATE task (one step pulled back by a revoke trigger). */
export const ZCompensatePayload = z.object({
  /** Why, in words (the revoke's reason). */
  reason: z.string().trim().min(1),
  /** What asked for it: recorded on a correction the compensation drafts. */
  draftedBy: ZDraftedBy.optional(),
});

/** The payload of a COMMIT_PLAN task: the approved pivot whose plan a worker commits. */
export const ZCommitPlanPayload = z.object({
  /** The approved pivot (`piv_...`). */
  pivotId: z.string().trim().min(1).max(80),
  /** Why a worker commits it (who asked, in words). */
  reason: z.string().trim().min(1).max(1000).optional(),
});

