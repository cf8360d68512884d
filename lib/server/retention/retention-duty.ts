/**
 * Retention as a background duty of every app process (instrumentation.ts), like the stuck-run
 * sweep: the app server is the one process every deployment has (`npm start`, or app instances
 * with remote workers that talk HTTP), so a duty placed in a worker would never run in some of them.
 * A pass runs a minute after start and then daily; several instances are kept from archiving at once
 * by the pass's lease (archive-settled-runs.ts), and a pass with nothing due writes nothing.
 */
import { hostname } from "node:os";
import type { PrismaClient } from "@/generated/prisma";
import { logSink, serverLog, type LogSink } from "@/lib/core/observability/log";
import { dutyEveryMs } from "@/lib/server/worker/duty-interval";
import { archiveSettledRuns, DEFAULT_MAX_RUNS, type ArchivePassResult } from "./archive-settled-runs";

/** Daily. */
export const DEFAULT_RETENTION_EVERY_MS = 24 * 3600_000;
/** The environment variable that sets it (milliseconds; 0 turns the duty off in this process). */
export const RETENTION_ENV = "SAGABOARD_RETENTION_MS";
/** Passes one run of the duty makes at most (each archives up to DEFAULT_MAX_RUNS runs into its own file). */
const MAX_PASSES = 50;
/** The first pass waits this long after start (the server is busy starting). */
const FIRST_PASS_MS = 60_000;

/** The interval from the environment, or null when the duty is off in this process. */
export function retentionEveryMs(env: Record<string, string | undefined> = process.env): number | null {
  return dutyEveryMs(RETENTION_ENV, DEFAULT_RETENTION_EVERY_MS, env);
}

/** A running duty. */
export interface RetentionDuty {
  /** Runs a pass now (tests; the timer does the same). */
  runNow(): Promise<ArchivePassResult>;
  /** Stops the timers; a pass in progress finishes. */
  stop(): void;
}

/** Starts the duty on timers that never keep the process alive. A failed pass is logged and tried again next time. */
export function startRetentionDuty(options: { prisma: () => Promise<PrismaClient>; everyMs?: number; firstAfterMs?: number; log?: LogSink }): RetentionDuty {
  const everyMs = options.everyMs ?? retentionEveryMs() ?? DEFAULT_RETENTION_EVERY_MS;
  const log = options.log ?? logSink(serverLog());
  const id = `app-${hostname()}-${process.pid}`;
  let running: Promise<ArchivePassResult> | null = null;
  const runNow = async (): Promise<ArchivePassResult> => {
    if (running) return running;
    running = (async () => {
      const prisma = await options.prisma();
      // A pass takes at most DEFAULT_MAX_RUNS runs (one file); a backlog is worked off in several
      // passes, a bounded number a day, so a deployment with more runs a day than one pass never falls behind.
      for (let pass = 1; ; pass++) {
        const result = await archiveSettledRuns(prisma, {}, { type: "system", id: `retention:${id}` });
        if (result.archive || result.due > 0) log(`${id}: retention: ${result.message}`);
        if (!result.archive || result.due < DEFAULT_MAX_RUNS || pass >= MAX_PASSES) return result;
      }
    })();
    try {
      return await running;
    } finally {
      running = null;
    }
  };
  const tick = () => void runNow().catch((e: unknown) => log(`${id}: the retention pass failed (${e instanceof Error ? e.message : String(e)}); trying again in ${Math.round(everyMs / 60_000)} min`, { level: "warn" }));
  const first = setTimeout(tick, options.firstAfterMs ?? Math.min(FIRST_PASS_MS, everyMs));
  first.unref();
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return {
    runNow,
    stop: () => {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
