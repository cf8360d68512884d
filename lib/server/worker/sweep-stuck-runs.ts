/**
 * Raises STUCK_AFTER_PIVOT for approved runs that stopped moving: a run in COMMITTING whose agent has
 * not written to the saga log for `stuckAfterMs` since the pivot was approved (or since its last
 * contact after that) gets an escalation, so a person hears of it instead of finding it by chance.
 *
 * Nothing is written per API call to know this: the agent's last contact is the newest audit event
 * its actor wrote to the run's chain, and time is the database clock that stamped those events.
 *
 * Claim safety. Several workers sweep at once. The escalation's dedupe key names the run and the
 * audit event the silence is measured from, and the key is unique: two workers that both see the
 * silence insert one row between them (the other gets the existing row back, and no audit event).
 * A run that moves again and then stops again is measured from a newer event, so it is raised anew.
 * Each raise is a `raise_escalation` span in the run's trace while tracing is on (only the worker
 * that inserted the row makes it).
 */
import type { PrismaClient } from "@/generated/prisma";
import { databaseNow } from "@/lib/core/db/dialect";
import { actorAttributes, traceEscalationRaised } from "@/lib/core/observability/people-spans";
import { randomIds, type IdGenerator } from "@/packages/client/src/saga/ids";
import { EscalationSource } from "@/packages/client/src/saga/observer";
import { actorLabel, runScope, type SagaStore } from "@/packages/client/src/saga/store";
import { EscalationKind, EscalationStatus, RunStatus } from "@/packages/client/src/saga/vocabulary";
import { workerActor } from "@/packages/client/src/protocol/tasks/task";
import type { WorkerSweep } from "@/packages/client/src/agent/worker";

/** How long an approved run may go without its agent before it is raised, when nothing is configured: 15 minutes. */
export const DEFAULT_STUCK_AFTER_PIVOT_MS = 15 * 60_000;

/** The environment variable that sets it, in milliseconds. */
export const STUCK_AFTER_PIVOT_ENV = "SAGABOARD_STUCK_AFTER_PIVOT_MS";

/** The smallest threshold accepted: below a second every pause between two calls would be "stuck". */
const MIN_STUCK_AFTER_PIVOT_MS = 1_000;

/** Runs looked at per sweep, oldest first; the next sweep goes on after the last one (see RunCursor). */
const DEFAULT_SWEEP_LIMIT = 200;

/**
 * Where a sweep stopped: the next one goes on after this run, and wraps to the oldest when it reaches
 * the end. Without it every sweep read the same oldest `limit` runs: once that many approved runs
 * were raised and left COMMITTING (a person resolved "done by hand"), a newer stuck run was never
 * looked at again.
 */
export interface RunCursor {
  createdAt: Date;
  id: string;
}

/**
 * The configured threshold: `SAGABOARD_STUCK_AFTER_PIVOT_MS`, or 15 minutes. Throws with what to set
 * when the value is not a whole number of at least 1000.
 */
export function stuckAfterPivotMs(env: Record<string, string | undefined> = process.env): number {
  const raw = env[STUCK_AFTER_PIVOT_ENV]?.trim();
  if (!raw) return DEFAULT_STUCK_AFTER_PIVOT_MS;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < MIN_STUCK_AFTER_PIVOT_MS) {
    throw new Error(
      `${STUCK_AFTER_PIVOT_ENV} must be a whole number of milliseconds, at least ${MIN_STUCK_AFTER_PIVOT_MS} (got "${raw}"); ` +
        `unset it for the default of ${DEFAULT_STUCK_AFTER_PIVOT_MS} (15 minutes).`,
    );
  }
  return value;
}

/** The dedupe key of a stuck run's escalation: one per run and per audit event the silence is measured from. */
export function stuckRunDedupeKey(runId: string, sinceSeq: number): string {
  return `stuck:run:${runId}:since:${sinceSeq}`;
}

/** How a sweep is set up. */
export interface SweepStuckRunsOptions {
  /** Reads runs and audit events, and reads the database clock. */
  prisma: PrismaClient;
  /** Raises the escalation (row and audit event in one transaction). Pass the worker's store on the same client. */
  store: Pick<SagaStore, "createEscalation" | "findEscalationByDedupeKey">;
  /** Recorded as the actor of the escalation (`system:<workerId>`). */
  workerId: string;
  /** Silence after which an approved run is raised (default: `stuckAfterPivotMs()`). */
  stuckAfterMs?: number;
  /** Runs looked at per sweep (default 200). */
  limit?: number;
  /** Escalation ids (default: random). */
  ids?: IdGenerator;
  /** Go on after this run (the previous sweep's `next`); from the oldest when absent. */
  after?: RunCursor | null;
}

/** One run a sweep raised (or found already raised). */
export interface StuckRun {
  /** The run. */
  runId: string;
  /** The escalation. */
  escalationId: string;
  /** True when this sweep inserted it; false when another worker (or an earlier sweep) had. */
  created: boolean;
  /** When the silence began (database clock). */
  since: Date;
}

/** What a sweep did. */
export interface SweepStuckRunsResult {
  /** The database clock the sweep judged by. */
  checkedAt: Date;
  /** Approved runs it looked at. */
  checked: number;
  /** Runs found silent for too long, each with its escalation. */
  stuck: StuckRun[];
  /** Where the next sweep goes on; null when this one reached the newest run (the next starts over). */
  next: RunCursor | null;
}

/**
 * One sweep: every COMMITTING run (up to `limit`, oldest first after `after`) that no person is
 * already handling and whose agent has been silent since the approval for `stuckAfterMs` gets its
 * escalation.
 */
export async function sweepStuckRuns(options: SweepStuckRunsOptions): Promise<SweepStuckRunsResult> {
  const { prisma, store, workerId } = options;
  const stuckAfterMs = options.stuckAfterMs ?? stuckAfterPivotMs();
  const ids = options.ids ?? randomIds;
  const checkedAt = await databaseNow(prisma);
  const limit = options.limit ?? DEFAULT_SWEEP_LIMIT;
  const after = options.after;
  const runs = await prisma.run.findMany({
    where: {
      status: RunStatus.COMMITTING,
      // An open item means a person already has the run in front of them (a held call, an unknown outcome).
      escalations: { none: { status: { in: [EscalationStatus.OPEN, EscalationStatus.CLAIMED] } } },
      ...(after ? { OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] } : {}),
    },
    select: { id: true, title: true, agent: true, createdAt: true },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: limit,
  });
  const last = runs.at(-1);
  const next = runs.length === limit && last ? { createdAt: last.createdAt, id: last.id } : null;
  const stuck: StuckRun[] = [];
  for (const run of runs) {
    const since = await prisma.auditEvent.findFirst({
      where: { scope: runScope(run.id), OR: [{ actor: actorLabel({ type: "agent", id: run.agent }) }, { type: "pivot.approved" }] },
      orderBy: { seq: "desc" },
      select: { seq: true, type: true, at: true },
    });
    if (!since) continue;
    const silentMs = checkedAt.getTime() - since.at.getTime();
    if (silentMs < stuckAfterMs) continue;
    const dedupeKey = stuckRunDedupeKey(run.id, since.seq);
    // Read first, so a run raised (or resolved) earlier costs one read per sweep, not a refused insert.
    const existing = await store.findEscalationByDedupeKey(dedupeKey);
    if (existing) continue;
    const fromApproval = since.type === "pivot.approved";
    const minutes = Math.floor(silentMs / 60_000);
    const silence = minutes >= 1 ? `${minutes} min` : `${Math.floor(silentMs / 1000)} s`;
    const raised = await store.createEscalation(
      {
        id: ids.next("esc"),
        runId: run.id,
        stepId: null,
        kind: EscalationKind.STUCK_AFTER_PIVOT,
        title: fromApproval
          ? `“${run.title}” was approved ${silence} ago and its agent has not made a call since`
          : `“${run.title}” has not moved for ${silence}: its agent went quiet after the pivot`,
        detail: {
          reason: "no_progress_after_pivot",
          agent: run.agent,
          since: since.at.toISOString(),
          sinceEvent: since.type,
          sinceSeq: since.seq,
          stuckAfterMs,
          checkedAt: checkedAt.toISOString(),
        },
        owner: null,
        dedupeKey,
      },
      {
        type: "escalation.raised",
        actor: workerActor(workerId),
        data: { kind: EscalationKind.STUCK_AFTER_PIVOT, reason: "no_progress_after_pivot", since: since.at.toISOString(), stuckAfterMs },
      },
    );
    if (raised.created) await traceEscalationRaised(prisma, raised.escalation, EscalationSource.stuck_sweep, actorAttributes("system", EscalationSource.stuck_sweep));
    stuck.push({ runId: run.id, escalationId: raised.escalation.id, created: raised.created, since: since.at });
  }
  return { checkedAt, checked: runs.length, stuck, next };
}

/** How often a worker sweeps, at most (default: every 30 s); the sweep itself is cheap but not free. */
export const DEFAULT_SWEEP_INTERVAL_MS = 30_000;

/** A sweep the worker loop calls every round (its `WorkerSweep`); it runs at most once per `intervalMs`. */
export interface StuckRunSweeper extends WorkerSweep {
  /** Sweeps when the interval has passed since the last sweep; otherwise does nothing. */
  maybeSweep(): Promise<SweepStuckRunsResult | null>;
}

/** Wraps `sweepStuckRuns` for the worker loop: at most one sweep per `intervalMs` (app clock: it only paces). */
export function stuckRunSweeper(options: SweepStuckRunsOptions & { intervalMs?: number; log?: (line: string, fields?: { runId?: string; escalationId?: string; level?: "warn" }) => void }): StuckRunSweeper {
  const intervalMs = options.intervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  let last = -Infinity;
  let after: RunCursor | null = null; // each sweep goes on where the previous one stopped
  return {
    async maybeSweep() {
      const now = Date.now();
      if (now - last < intervalMs) return null;
      last = now;
      const result = await sweepStuckRuns({ ...options, after });
      after = result.next;
      for (const s of result.stuck.filter((r) => r.created)) {
        options.log?.(`${options.workerId}: run ${s.runId} has not moved since ${s.since.toISOString()} after its pivot; raised ${s.escalationId} (stuck after pivot)`, {
          runId: s.runId,
          escalationId: s.escalationId,
          level: "warn",
        });
      }
      return result;
    },
  };
}
