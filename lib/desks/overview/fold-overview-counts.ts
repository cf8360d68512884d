/**
 * The overview's hourly and daily counts (OverviewCount) and the deltas the database's triggers append
 * beside every change they count (OverviewDelta; migration 20261205060000_overview_hourly_counts). The
 * triggers keep the figures exact in the writer's own transaction; this fold only keeps them cheap to
 * read: it moves deltas into the counts, so the overview reads one row per bucket (hour or day) and
 * key instead of one per delta. The invariant, for every (metric, hour, key):
 *
 *   OverviewCount.n (span hour) + sum(OverviewDelta.n) = what the log holds (e.g. the steps whose
 *   compensation was requested in that hour and whose compensation state is that key)
 *
 * and likewise for every day (span day) with the deltas of its hours. Each fold keeps it: the deltas
 * it deletes and the counts it adds commit together, and a delta is deleted (so added) by one fold
 * only, however many app processes fold at once. A reader sums the two tables in one statement, so it
 * sees the state before a fold or after it, never half of one.
 *
 * Every app process folds on a timer (instrumentation.ts; SAGABOARD_OVERVIEW_FOLD_MS, 0 turns it off
 * in that process), wherever the writers are: the deltas are the database's, not a process's.
 */
import { hostname } from "node:os";
import type { PrismaClient } from "@/generated/prisma";
import { logSink, serverLog, type LogSink } from "@/lib/core/observability/log";
import { readOnConnection, writeTransaction } from "@/lib/core/db/transactions";
import { dutyEveryMs } from "@/lib/server/worker/duty-interval";

/** The metrics the triggers count (their keys: the compensation state, or "" for duplicates). */
export const OVERVIEW_METRICS = { compensation: "compensation", duplicatePrevented: "duplicate_prevented" } as const;

/** The periods counts are kept for: the overview's buckets. */
export type OverviewSpan = "hour" | "day";

/** Deltas moved per transaction: a fold never holds the write lock for long. */
export const FOLD_BATCH = 5000;

/** Moves up to `limit` of the oldest deltas into their hour's and day's counts, in one transaction; returns how many it moved. */
export async function foldOverviewDeltas(prisma: PrismaClient, limit = FOLD_BATCH): Promise<number> {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`foldOverviewDeltas: limit must be a whole number of at least 1 (got ${limit}).`);
  return writeTransaction(prisma, async (tx) => {
    // Deleting first: a delta another fold is deleting waits for it, then is gone, so each is added once.
    const deltas = await tx.$queryRawUnsafe<{ metric: string; hour: string; key: string; n: number | bigint }[]>(
      `DELETE FROM "OverviewDelta" WHERE "id" IN (SELECT "id" FROM "OverviewDelta" ORDER BY "id" LIMIT ${limit}) RETURNING "metric", "hour", "key", "n"`,
    );
    // Each delta counts in its hour and in its day.
    const sums = new Map<string, { metric: string; span: OverviewSpan; period: string; key: string; n: number }>();
    for (const d of deltas) {
      for (const [span, period] of [["hour", d.hour], ["day", d.hour.slice(0, 10)]] as const) {
        const id = JSON.stringify([d.metric, span, period, d.key]);
        const sum = sums.get(id) ?? { metric: d.metric, span, period, key: d.key, n: 0 };
        sum.n += Number(d.n);
        sums.set(id, sum);
      }
    }
    // In key order, so two folds touching the same counts take their row locks in the same order.
    for (const id of [...sums.keys()].sort()) {
      const s = sums.get(id)!;
      if (s.n === 0) continue;
      await tx.$executeRaw`INSERT INTO "OverviewCount" ("metric", "span", "period", "key", "n") VALUES (${s.metric}, ${s.span}, ${s.period}, ${s.key}, ${s.n})
        ON CONFLICT ("metric", "span", "period", "key") DO UPDATE SET "n" = "OverviewCount"."n" + excluded."n"`;
    }
    return deltas.length;
  });
}

/** Folds until no delta is left (or `maxBatches` transactions ran); returns how many it moved. */
export async function foldAllOverviewDeltas(prisma: PrismaClient, maxBatches = 100): Promise<number> {
  // Read first: an idle fold (most ticks) takes no write lock from the saga log's writers.
  const pending = await readOnConnection(prisma, (db) => db.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM "OverviewDelta" LIMIT 1`));
  if (pending.length === 0) return 0;
  let moved = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await foldOverviewDeltas(prisma);
    moved += n;
    if (n < FOLD_BATCH) break;
  }
  return moved;
}

/** How often an app process folds when nothing is configured: every 30 s. */
export const DEFAULT_OVERVIEW_FOLD_EVERY_MS = 30_000;
/** The environment variable that sets it (milliseconds; 0 turns the fold off in this process). */
export const OVERVIEW_FOLD_ENV = "SAGABOARD_OVERVIEW_FOLD_MS";

/** The fold interval from the environment, or null when the duty is off in this process. */
export function overviewFoldEveryMs(env: Record<string, string | undefined> = process.env): number | null {
  return dutyEveryMs(OVERVIEW_FOLD_ENV, DEFAULT_OVERVIEW_FOLD_EVERY_MS, env);
}

/** A running fold duty. */
export interface OverviewFoldDuty {
  /** Folds now (tests; the timer does the same); one fold at a time per process. */
  foldNow(): Promise<number>;
  /** Stops the timer; a fold in progress finishes. */
  stop(): void;
}

/** Starts folding on a timer that never keeps the process alive; a failed fold is logged and tried again next tick. */
export function startOverviewFoldDuty(options: { prisma: () => Promise<PrismaClient>; everyMs?: number; log?: LogSink }): OverviewFoldDuty {
  const everyMs = options.everyMs ?? overviewFoldEveryMs() ?? DEFAULT_OVERVIEW_FOLD_EVERY_MS;
  const log = options.log ?? logSink(serverLog());
  const who = `app-${hostname()}-${process.pid}`;
  let running: Promise<number> | null = null;
  const foldNow = async (): Promise<number> => {
    running ??= (async () => foldAllOverviewDeltas(await options.prisma()))().finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => {
    foldNow().catch((e: unknown) => log(`${who}: folding the overview's hourly counts failed (${e instanceof Error ? e.message : String(e)}); trying again in ${everyMs} ms`, { level: "warn" }));
  }, everyMs);
  timer.unref();
  return { foldNow, stop: () => clearInterval(timer) };
}
