/**
 * The worker: claims tasks its tools cover, runs them through the saga engine, heartbeats the lease
 * while it works, and settles each task with the fencing token of its claim.
 *
 * Crash safety. A worker can die (or stall past its lease: a GC pause, a stopped VM) at any point.
 * Its task stays CLAIMED until the lease expires; then another worker claims it, which bumps the
 * fencing token, and runs it again from the start. That is safe because what a task runs is
 * idempotent against the saga log and the real systems:
 * - `engine.unwind` walks the log, not a transcript. Steps already COMPENSATED are skipped; a
 *   compensation left REQUESTED by the dead worker is verified by reading the real system back
 *   before anything is sent again; a compensation that is sent again carries its own
 *   compensation key (sha256(runId:stepIdx:compensate:tool)), so the provider answers a repeat
 *   with the first result instead of a second refund; every step transition is a fenced update, so
 *   two unwinds racing on one row change it once. Corrections and escalations are deduplicated by
 *   unique keys.
 * - `engine.reconcile` only looks keys up and settles INTENDED/UNKNOWN rows with fenced updates.
 * If the stalled worker wakes up and finishes too, its settle carries the old token and changes
 * nothing (`settled: false`): the log shows one completion, by the worker that holds the task.
 * Effects may be attempted twice; they happen once.
 */
import { SimulatedCrash } from "../saga/crash-points";
import { SagaError, type SagaErrorCode } from "../saga/errors";
import type { Actor } from "../saga/store";
import type { Json } from "../saga/tools";
import { taskTraceparent, withTraceparent } from "../protocol/trace-scope";
import { type TaskQueue, workerActor, type ClaimedTask, type SettleResult } from "../protocol/tasks/task";
import { describeTask, runTask, taskSummary, TaskRefused, type WorkerEngine } from "./worker-tasks";

/** What a worker's log line carries besides its sentence: the ids a log pipeline filters on, and a level. */
// A type, not an interface: it passes where a logger takes any fields (an interface has no index signature).
export type WorkerLogFields = {
  /** info (default), warn (a task failed, was handed back or lost its lease), error (the worker died). */
  level?: "info" | "warn" | "error";
  /** The task's id. */
  taskId?: string;
  /** The task's run. */
  runId?: string;
  /** The task's step, for step tasks (compensate, lookup). */
  stepId?: string;
  /** The task's kind (UNWIND, COMPENSATE, ...). */
  kind?: string;
  /** The claim's attempt. */
  attempt?: number;
  /** done, failed, retried, superseded, unsettled. */
  outcome?: string;
};

/** Where the worker says what it does: a sentence a person reads, and fields a machine reads. */
export type WorkerLog = (line: string, fields?: WorkerLogFields) => void;

/** A task's ids as log fields. */
function taskFields(task: ClaimedTask): WorkerLogFields {
  return { taskId: task.id, runId: task.runId, ...(task.stepId ? { stepId: task.stepId } : {}), kind: task.kind, attempt: task.attempt };
}


/**
 * Runs one claimed task's `work`, e.g. inside a span of its own (packages/client/src/agent/worker-spans.ts's
 * traceWorkerTask): `work` runs under the trace context it is given (the task's requests carry it)
 * and says what became of the task. A tracer passes on whatever `work` throws.
 */
export type TaskTracer = (task: ClaimedTask, work: (traceparent: string | undefined) => Promise<TaskOutcome>) => Promise<TaskOutcome>;

/** Without a tracer, a task's work runs under the trace context its payload carries. */
const untraced: TaskTracer = (task, work) => work(taskTraceparent(task.payload));

/** How a worker is set up. */
export interface WorkerOptions {
  /**
   * The task queue: `prismaTaskQueue(prisma)` beside the app (pass the store's own client: two
   * clients on one SQLite file in one process can deadlock), or `HttpTaskQueue` over the API.
   */
  queue: TaskQueue;
  /** Runs the tasks. */
  engine: WorkerEngine;
  /** Recorded as the holder of claimed tasks and as the audit actor (`system:<workerId>`). */
  workerId: string;
  /** Tools this process has connectors for; only tasks needing a subset of them are claimed. */
  tools: readonly string[];
  /** Tasks claimed (and run concurrently) per round (default 4). */
  maxTasks?: number;
  /** Lease length (default 30 s). A worker silent for this long loses its tasks to another. */
  leaseMs?: number;
  /** Heartbeat interval while a task runs (default leaseMs / 3; keep it well below leaseMs). */
  heartbeatMs?: number;
  /** Pause between polls when nothing was claimable (default 1 s). */
  pollMs?: number;
  /** Claims of one task (its fencing token) after which a transient error fails it for good (default 5). */
  maxAttempts?: number;
  /** Where the worker says, in plain words, what it claims and does (default: silent). */
  log?: WorkerLog;
  /** Raises STUCK_AFTER_PIVOT for approved runs gone quiet; the polling loop offers it every round (`stuckRunSweeper`). */
  stuckRuns?: WorkerSweep;
  /** Wraps each task's work (a span per task); default: the work under the task's own trace context. */
  traceTask?: TaskTracer;
}

/**
 * A duty the polling loop offers every round (the server's `stuckRunSweeper`, which runs at most
 * once per its interval): the loop only calls it and logs a failure, so it needs nothing more.
 */
export interface WorkerSweep {
  maybeSweep(): Promise<unknown>;
}

/** What happened to one claimed task. */
export type TaskOutcomeKind =
  /** Ran and recorded DONE. */
  | "done"
  /** Recorded FAILED (permanent error, unsupported kind, or out of attempts). */
  | "failed"
  /** A transient error: handed back PENDING for another attempt. */
  | "retried"
  /** The settle was refused: the task was taken over since (stale fencing token). Not retried. */
  | "superseded"
  /** The settle itself failed (database error): the lease will expire and another worker redo it. */
  | "unsettled";

/** One claimed task's fate in a round. */
export interface TaskOutcome {
  /** The task. */
  taskId: string;
  /** Its kind. */
  kind: ClaimedTask["kind"];
  /** Its run. */
  runId: string;
  /** The fencing token this worker held. */
  attempt: number;
  /** What happened. */
  outcome: TaskOutcomeKind;
  /** In words. */
  message: string;
}

/** Running totals of a worker. */
export interface WorkerStats {
  /** Tasks claimed. */
  claimed: number;
  /** Tasks recorded DONE. */
  done: number;
  /** Tasks recorded FAILED. */
  failed: number;
  /** Tasks handed back for another attempt. */
  retried: number;
  /** Settles refused because the task was taken over (stale token). */
  superseded: number;
  /** Settles that could not be written. */
  unsettled: number;
  /** Heartbeats that found the lease taken over. */
  leasesLost: number;
}

/** SagaError codes that another attempt cannot fix: the task fails at once. */
const PERMANENT_CODES: ReadonlySet<SagaErrorCode> = new Set<SagaErrorCode>([
  "RUN_NOT_FOUND",
  "STEP_NOT_FOUND",
  "INVALID_ARGS",
  "UNKNOWN_TOOL",
  "INVALID_TOOL_DEFINITION",
  "PIVOT_NOT_FOUND",
  "PIVOT_NOT_APPROVED",
  "PLAN_ITEM_MISMATCH",
  "PLAN_ORDER",
  "RUN_CLOSED",
]);


function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}



/** Claims, runs and settles worker tasks; `runOnce` for one round, `start`/`stop` for the polling loop. */
export class Worker {
  /** This worker's id. */
  readonly workerId: string;
  /** Running totals. */
  readonly stats: WorkerStats = { claimed: 0, done: 0, failed: 0, retried: 0, superseded: 0, unsettled: 0, leasesLost: 0 };

  private readonly queue: TaskQueue;
  private readonly engine: WorkerEngine;
  private readonly tools: string[];
  private readonly actor: Actor;
  private readonly maxTasks: number;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly pollMs: number;
  private readonly maxAttempts: number;
  private readonly log: WorkerLog;
  private readonly stuckRuns: WorkerSweep | null;
  private readonly traceTask: TaskTracer;

  private loop: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  private crash: SimulatedCrash | null = null;

  constructor(options: WorkerOptions) {
    if (!options.workerId.trim()) throw new Error("A worker needs a non-empty workerId.");
    this.queue = options.queue;
    this.engine = options.engine;
    this.workerId = options.workerId;
    this.tools = [...new Set(options.tools)];
    this.actor = workerActor(options.workerId);
    this.maxTasks = options.maxTasks ?? 4;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.heartbeatMs = options.heartbeatMs ?? Math.max(1, Math.floor(this.leaseMs / 3));
    this.pollMs = options.pollMs ?? 1_000;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.log = options.log ?? (() => {});
    this.stuckRuns = options.stuckRuns ?? null;
    this.traceTask = options.traceTask ?? untraced;
  }

  /** True while the polling loop runs. */
  get running(): boolean {
    return this.loop !== null;
  }

  /** The simulated crash that ended the loop, if one did (tests). */
  get crashed(): SimulatedCrash | null {
    return this.crash;
  }

  /**
   * One round: claims up to `maxTasks` tasks, runs them concurrently (each heartbeating its lease),
   * settles each with its fencing token, and says what happened to each. A SimulatedCrash (the
   * tests' stand-in for the process dying) leaves its task CLAIMED, unsettled, and is rethrown once
   * the round's other tasks are done.
   */
  async runOnce(): Promise<TaskOutcome[]> {
    const tasks = await this.queue.claim({ workerId: this.workerId, tools: this.tools, max: this.maxTasks, leaseMs: this.leaseMs });
    this.stats.claimed += tasks.length;
    for (const task of tasks) {
      const previous = task.attempt > 1 ? `, attempt ${task.attempt}: an earlier holder gave it back or let its lease expire` : "";
      this.log(`${this.workerId}: claimed task ${task.id} to ${describeTask(task)} (lease until ${task.leaseUntil.toISOString()}${previous})`, taskFields(task));
    }
    const results = await Promise.allSettled(tasks.map((task) => this.handle(task)));
    const outcomes: TaskOutcome[] = [];
    let thrown: { error: unknown } | null = null;
    for (const r of results) {
      if (r.status === "fulfilled") outcomes.push(r.value);
      else thrown ??= { error: r.reason };
    }
    if (thrown) throw thrown.error;
    return outcomes;
  }

  /**
   * Starts polling: a round, then (if nothing was claimable) a pause of `pollMs`, until `stop()`.
   * Errors of a round (the database was busy) are logged and the loop goes on after the pause.
   */
  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = this.pollLoop().finally(() => {
      this.loop = null;
    });
  }

  /** Stops polling: the current round finishes (its tasks run to the end and are settled), then the loop ends. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
  }

  private async pollLoop(): Promise<void> {
    this.log(`${this.workerId}: polling for tasks needing only ${this.tools.length ? this.tools.join(", ") : "no tools"} (every ${this.pollMs} ms, lease ${this.leaseMs} ms)`);
    while (!this.stopping) {
      let busy = false;
      try {
        busy = (await this.runOnce()).length > 0;
      } catch (e) {
        if (e instanceof SimulatedCrash) {
          this.crash = e;
          this.log(`${this.workerId}: died (${e.message}); its tasks stay claimed until their leases expire`, { level: "error" });
          return;
        }
        this.log(`${this.workerId}: a round failed (${errorMessage(e)}); trying again in ${this.pollMs} ms`, { level: "warn" });
      }
      // Apart from the tasks: a failed sweep is logged and tried again later, and never stops the loop.
      await this.stuckRuns?.maybeSweep().catch((e: unknown) => this.log(`${this.workerId}: the sweep for stuck runs failed (${errorMessage(e)}); trying again later`, { level: "warn" }));
      if (!busy && !this.stopping) await this.pause(this.pollMs);
    }
    this.log(`${this.workerId}: stopped`);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }

  /** Runs one claimed task under a heartbeat and settles it, as its tracer wraps it. */
  private handle(task: ClaimedTask): Promise<TaskOutcome> {
    return this.traceTask(task, (traceparent) => this.runAndSettle(task, traceparent));
  }

  private async runAndSettle(task: ClaimedTask, traceparent: string | undefined): Promise<TaskOutcome> {
    const lease = this.keepLease(task);
    let result: Json;
    try {
      // Under the task's trace context (its own span's, when traced): the HTTP client sends it with
      // the task's requests, so the server's compensate and execute_tool spans join the run's trace.
      result = await withTraceparent(traceparent, () => runTask(this.engine, this.actor, task));
    } catch (e) {
      await lease.stop();
      if (e instanceof SimulatedCrash) throw e;
      return this.settleError(task, e);
    }
    await lease.stop();
    return this.settle(task, "done", `finished: ${taskSummary(task, result)}`, () =>
      this.queue.complete({ taskId: task.id, attempt: task.attempt, workerId: this.workerId, result }),
    );
  }





  /** Permanent errors fail the task; transient ones hand it back until `maxAttempts` claims were spent. */
  private settleError(task: ClaimedTask, e: unknown): Promise<TaskOutcome> {
    const code = e instanceof SagaError || e instanceof TaskRefused ? e.code : null;
    const permanent = e instanceof TaskRefused || (e instanceof SagaError && PERMANENT_CODES.has(e.code));
    const retry = !permanent && task.attempt < this.maxAttempts;
    const error: Json = {
      name: e instanceof Error ? e.name : "Error",
      code,
      message: errorMessage(e),
      attempt: task.attempt,
      workerId: this.workerId,
      permanent,
    };
    const why = permanent ? "for good" : retry ? "for now; handed back for another attempt" : `after ${task.attempt} attempts`;
    return this.settle(task, retry ? "retried" : "failed", `failed ${why}: ${errorMessage(e)}`, () =>
      this.queue.fail({ taskId: task.id, attempt: task.attempt, workerId: this.workerId, error, retry }),
    );
  }

  private async settle(
    task: ClaimedTask,
    outcome: "done" | "failed" | "retried",
    message: string,
    write: () => Promise<SettleResult>,
  ): Promise<TaskOutcome> {
    const base = { taskId: task.id, kind: task.kind, runId: task.runId, attempt: task.attempt };
    let settled: SettleResult;
    try {
      settled = await write();
    } catch (e) {
      this.stats.unsettled++;
      const text = `${message}, but recording it failed (${errorMessage(e)}); the lease will expire and another worker will redo it safely`;
      this.log(`${this.workerId}: task ${task.id} ${text}`, { ...taskFields(task), outcome: "unsettled", level: "warn" });
      return { ...base, outcome: "unsettled", message: text };
    }
    if (!settled.settled) {
      this.stats.superseded++;
      const now = settled.task;
      const holder = now ? `it is now ${now.status}, attempt ${now.attempt}${now.claimedBy ? `, held by ${now.claimedBy}` : ""}` : "it no longer exists";
      const text = `superseded: another worker took the task over after this worker's lease expired (${holder}); this result was not recorded and will not be retried`;
      this.log(`${this.workerId}: task ${task.id} (attempt ${task.attempt}) ${text}`, { ...taskFields(task), outcome: "superseded", level: "warn" });
      return { ...base, outcome: "superseded", message: text };
    }
    this.stats[outcome]++;
    this.log(`${this.workerId}: task ${task.id} ${message}`, { ...taskFields(task), outcome, level: outcome === "done" ? "info" : "warn" });
    return { ...base, outcome, message };
  }

  /** Heartbeats the lease every `heartbeatMs` until stopped; a refused heartbeat means the task was taken over. */
  private keepLease(task: ClaimedTask): { stop: () => Promise<void> } {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let inflight: Promise<void> = Promise.resolve();
    const beat = () => {
      inflight = this.queue.extendLease({ taskId: task.id, attempt: task.attempt, workerId: this.workerId, leaseMs: this.leaseMs })
        .then(
          (r) => {
            if (r.extended) return true;
            this.stats.leasesLost++;
            this.log(
              `${this.workerId}: lost the lease on task ${task.id} (attempt ${task.attempt}): another worker took it over; ` +
                "the current work runs to its end but its result will not be recorded",
              { ...taskFields(task), level: "warn" },
            );
            return false;
          },
          (e: unknown) => {
            this.log(`${this.workerId}: heartbeat for task ${task.id} failed (${errorMessage(e)}); trying again`, { ...taskFields(task), level: "warn" });
            return true;
          },
        )
        .then((keepGoing) => {
          if (keepGoing && !stopped) timer = setTimeout(beat, this.heartbeatMs);
        });
    };
    timer = setTimeout(beat, this.heartbeatMs);
    return {
      stop: async () => {
        stopped = true;
        clearTimeout(timer);
        await inflight;
      },
    };
  }
}
