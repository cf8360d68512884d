/** The worker-task vocabularies: one doc line per value; the WorkerTask columns hold these strings. */

/** What a worker task asks a worker to do. */
export const WorkerTaskKind = {
  /** Unwind a whole run: reconcile, then compensate in reverse step order (`engine.unwind`). */
  UNWIND: "UNWIND",
  /** Settle one INTENDED/UNKNOWN step by looking its key up in the real system (`engine.reconcile`). */
  RECONCILE: "RECONCILE",
  /** Pull back one confirmed step (a revoke trigger): its compensation under its own key, read back. */
  COMPENSATE: "COMPENSATE",
  /** Look one step's key up for a person ("check the real system"): the tool's lookup, nothing changed. */
  LOOKUP: "LOOKUP",
  /** Send a correction a person approved: its run's approved `send_email` calls, reconciled by key. */
  SEND_CORRECTION: "SEND_CORRECTION",
  /** Commit an approved plan whose agent went quiet: its items in plan order, each once whoever else tries, then complete the run. */
  COMMIT_PLAN: "COMMIT_PLAN",
} as const;
export type WorkerTaskKind = (typeof WorkerTaskKind)[keyof typeof WorkerTaskKind];
export const WORKER_TASK_KINDS = Object.values(WorkerTaskKind);

/** Where a worker task stands. */
export const WorkerTaskStatus = {
  /** Waiting for a worker whose tools cover the task's. */
  PENDING: "PENDING",
  /** Held by `claimedBy` until `leaseUntil` under fencing token `attempt`; claimable again once the lease expires. */
  CLAIMED: "CLAIMED",
  /** Finished by the holder of the current fencing token; `result` says what it did. */
  DONE: "DONE",
  /** Given up (permanent error, unsupported, or out of attempts); `error` says why. */
  FAILED: "FAILED",
} as const;
export type WorkerTaskStatus = (typeof WorkerTaskStatus)[keyof typeof WorkerTaskStatus];
export const WORKER_TASK_STATUSES = Object.values(WorkerTaskStatus);
