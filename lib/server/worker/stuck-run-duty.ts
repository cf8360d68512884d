/**
 * The stuck-after-pivot sweep, and the sweep of calls in flight whose agent went silent
 * (sweep-silent-steps.ts), as a background duty of every app process. It used to run only in a
 * worker that opened the database itself, so under `npm start` (whose worker talks HTTP) and in any
 * deployment whose workers are remote, an approved run whose agent died was never raised. The app
 * server is the one process every deployment has, so each instance sweeps (instrumentation.ts);
 * several instances sweeping at once raise one escalation per stuck run (the dedupe key is unique).
 * The same tick erases the subjects whose erasure waits for their runs to settle
 * (lib/server/privacy/erase-subject.ts `eraseScheduledSubjects`; an erasure is one fenced transaction,
 * so two instances erase a subject once).
 */
import { hostname } from "node:os";
import type { PrismaClient } from "@/generated/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { stuckAfterPivotMs, stuckRunSweeper, type StuckRunSweeper, type SweepStuckRunsResult } from "./sweep-stuck-runs";
import { logSink, serverLog, type LogSink } from "@/lib/core/observability/log";
import { dutyEveryMs } from "./duty-interval";
import { silentStepMs, sweepSilentSteps, type SweepSilentStepsResult } from "./sweep-silent-steps";
import { eraseScheduledSubjects, type EraseScheduledResult } from "@/lib/server/privacy/erase-subject";

/** How often an app process sweeps when nothing is configured: every 30 s. */
export const DEFAULT_STUCK_SWEEP_EVERY_MS = 30_000;

/** The environment variable that sets it (milliseconds; 0 turns the duty off in this process). */
export const STUCK_SWEEP_ENV = "SAGABOARD_STUCK_SWEEP_MS";

/** How the duty is set up. */
export interface StuckRunDutyOptions {
  /** The process's database client (the app's shared one). */
  prisma: () => Promise<PrismaClient>;
  /** Recorded as the escalation's actor (`system:<sweeperId>`); default `app-<host>-<pid>`. */
  sweeperId?: string;
  /** Silence after which an approved run is raised (default: SAGABOARD_STUCK_AFTER_PIVOT_MS or 15 min). */
  stuckAfterMs?: number;
  /** Silence after which a call in flight is reconciled without its agent (default: SAGABOARD_SILENT_STEP_MS or 5 min). */
  silentAfterMs?: number;
  /** Time between sweeps (default: SAGABOARD_STUCK_SWEEP_MS or 30 s). */
  everyMs?: number;
  /** Where to say what it raised (default: the server's structured log). */
  log?: LogSink;
}

/** A running duty. */
export interface StuckRunDuty {
  /** Sweeps now for approved runs gone quiet (tests; the timer does the same). */
  sweepNow(): Promise<SweepStuckRunsResult>;
  /** Sweeps now for calls in flight whose agent went silent (tests; the timer does the same). */
  sweepSilentNow(): Promise<SweepSilentStepsResult>;
  /** Erases now the scheduled subjects whose runs have settled (tests; the timer does the same). */
  eraseScheduledNow(): Promise<EraseScheduledResult>;
  /** Stops the timer; a sweep in progress finishes. */
  stop(): void;
}

/** The sweep interval from the environment, or null when the duty is off in this process. */
export function stuckSweepEveryMs(env: Record<string, string | undefined> = process.env): number | null {
  return dutyEveryMs(STUCK_SWEEP_ENV, DEFAULT_STUCK_SWEEP_EVERY_MS, env);
}

/**
 * Starts sweeping for approved runs gone quiet, on a timer that never keeps the process alive. A
 * sweep that fails (the database restarting) is logged and tried again on the next tick.
 */
export function startStuckRunDuty(options: StuckRunDutyOptions): StuckRunDuty {
  const everyMs = options.everyMs ?? stuckSweepEveryMs() ?? DEFAULT_STUCK_SWEEP_EVERY_MS;
  const stuckAfterMs = options.stuckAfterMs ?? stuckAfterPivotMs();
  const sweeperId = options.sweeperId ?? `app-${hostname()}-${process.pid}`;
  const log = options.log ?? logSink(serverLog());
  let running: Promise<SweepStuckRunsResult> | null = null;
  // One sweeper for the process's life, so each sweep goes on where the previous one stopped.
  let sweeper: StuckRunSweeper | null = null;

  const sweepNow = async (): Promise<SweepStuckRunsResult> => {
    if (running) return running; // one sweep at a time per process
    running = (async () => {
      const prisma = await options.prisma();
      // intervalMs 0: the timer paces; maybeSweep always sweeps when asked.
      sweeper ??= stuckRunSweeper({ prisma, store: sharedSagaStore(prisma), workerId: sweeperId, stuckAfterMs, intervalMs: 0, log });
      return (await sweeper.maybeSweep())!;
    })();
    try {
      return await running;
    } finally {
      running = null;
    }
  };

  const silentAfterMs = options.silentAfterMs ?? silentStepMs();
  let silent: Promise<SweepSilentStepsResult> | null = null;
  const sweepSilentNow = async (): Promise<SweepSilentStepsResult> => {
    if (silent) return silent;
    silent = (async () => {
      const result = await sweepSilentSteps(await options.prisma(), { sweeperId, silentAfterMs });
      if (result.reconciling.length + result.escalated.length > 0) {
        log(`${sweeperId}: calls in flight whose agent went silent: ${result.reconciling.length} given to a worker to reconcile, ${result.escalated.length} raised for a person`);
      }
      return result;
    })();
    try {
      return await silent;
    } finally {
      silent = null;
    }
  };

  let erasing: Promise<EraseScheduledResult> | null = null;
  const eraseScheduledNow = async (): Promise<EraseScheduledResult> => {
    if (erasing) return erasing;
    erasing = (async () => {
      const result = await eraseScheduledSubjects(await options.prisma());
      if (result.erased > 0) log(`${sweeperId}: erased ${result.erased} subject(s) whose erasure waited for their runs to settle`);
      return result;
    })();
    try {
      return await erasing;
    } finally {
      erasing = null;
    }
  };

  const timer = setInterval(() => {
    eraseScheduledNow().catch((e: unknown) => log(`${sweeperId}: the scheduled erasures failed (${e instanceof Error ? e.message : String(e)}); trying again in ${everyMs} ms`, { level: "warn" }));
    sweepNow().catch((e: unknown) => log(`${sweeperId}: the stuck-run sweep failed (${e instanceof Error ? e.message : String(e)}); trying again in ${everyMs} ms`, { level: "warn" }));
    sweepSilentNow().catch((e: unknown) => log(`${sweeperId}: the silent-call sweep failed (${e instanceof Error ? e.message : String(e)}); trying again in ${everyMs} ms`, { level: "warn" }));
  }, everyMs);
  timer.unref();
  return { sweepNow, sweepSilentNow, eraseScheduledNow, stop: () => clearInterval(timer) };
}
