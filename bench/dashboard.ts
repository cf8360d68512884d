/**
 * `npm run bench:dashboard [-- --runs N --steps N]`: the dashboard at scale (does every screen stay fast at a million steps?), on
 * SQLite and PostgreSQL. Fills a throwaway database with the generator (bench/lib/generate.ts;
 * default 10k runs / 100k steps, `--runs 100000 --steps 1000000` for the full size), then measures
 * the server time of the lib functions behind the screens, called in-process as a signed-in
 * reviewer: p50/p95 at 1 and 16 concurrent readers, the database size, and the query plan of the
 * slowest SQL statement of each (captured through Prisma's query log). Options: --store sqlite|postgresql,
 * --calls N (per reader, default 30 at 1 reader, 8 each at 16).
 * Generating the full size takes minutes, so `--keep` leaves the database behind (its URL is printed)
 * and `--reuse URL --store KIND` measures such a database again (after applying any migration added
 * since, so a new index is measured too) without generating.
 * Writes bench/results/<timestamp>-dashboard.json. Not part of `npm test`.
 */
import { statSync, existsSync } from "node:fs";
import pg from "pg";
import Database from "better-sqlite3";
import type { PrismaClient } from "@/generated/prisma";
import { requireUser, runWithSessionReader, type CurrentUser } from "@/lib/server/auth/current-user";
import { findEscalations } from "@/lib/desks/escalations/find-escalations";
import { migrateSqlite } from "@/lib/core/db/migrate";
import { migratePostgres } from "@/lib/core/db/migrate-postgres";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";
import { getPrisma, openPrisma, useProcessPrisma } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import type { DatabaseKind } from "@/lib/core/db/url";
import { getOverview, readOverview } from "@/lib/desks/overview/get-overview";
import { foldAllOverviewDeltas } from "@/lib/desks/overview/fold-overview-counts";
import { findRuns } from "@/lib/desks/runs/find-runs";
import { getRunTimeline } from "@/lib/desks/runs/get-run-timeline";
import { fileOf, flag, fmt, hasFlag, openLoggingPrisma, percentiles, performance, printTable, throwaway, writeResults, type LoggedQuery, type Percentiles } from "./lib/common";
import { BENCH_REVIEWER_ID, countGenerated, generate, type Generated } from "./lib/generate";

const RUNS = flag("runs", 10_000);
const STEPS = flag("steps", 100_000);
const CALLS = flag("calls", 30);
const storeArg = process.argv.includes("--store") ? process.argv[process.argv.indexOf("--store") + 1] : null;
const stores: DatabaseKind[] = storeArg === "sqlite" || storeArg === "postgresql" ? [storeArg] : ["sqlite", "postgresql"];
const KEEP = hasFlag("keep");
const REUSE = process.argv.includes("--reuse") ? process.argv[process.argv.indexOf("--reuse") + 1] : undefined;
if (REUSE && stores.length !== 1) throw new Error("--reuse URL measures one database: say which store it is with --store sqlite|postgresql.");


/** Points lib's process-wide client (getPrisma) at `client` for the calls that follow. */
function useClient(url: string, client: PrismaClient): void {
  process.env.DATABASE_URL = url; // databaseKind() without a client reads it
  useProcessPrisma(Promise.resolve(client));
}

/** Calls `fn` as the bench's reviewer, read from the database first as a route reads the session's person. */
const asReviewer = <T>(fn: (actor: CurrentUser) => Promise<T>) => runWithSessionReader(async () => BENCH_REVIEWER_ID, async () => fn(await requireUser("read")));

type Screen = { name: string; call: (i: number, actor: CurrentUser) => Promise<unknown> };

function screens(g: Generated, store: () => PrismaSagaStore): Screen[] {
  const run = (i: number) => g.sampleRunIds[i % g.sampleRunIds.length]!;
  const list: Screen[] = [
    { name: "runs list (first page)", call: (_, actor) => findRuns({ actor }) },
    { name: "runs list (needs attention)", call: (_, actor) => findRuns({ actor, needsAttention: true }) },
    { name: "runs list (search customer)", call: (i, actor) => findRuns({ actor, q: `cust-${(i * 7919) % RUNS}@` }) },
    { name: "run timeline", call: (i, actor) => getRunTimeline({ actor, runId: run(i) }) },
    { name: "escalation queue (open)", call: (_, actor) => findEscalations({ actor }) },
    { name: "audit events of a run", call: (i) => store().listAuditEvents(run(i)) },
    // The overview reads the whole range's figures (kept counts and partial indexes, not a scan of the
    // log). The screen shares one read among the people who open it together (getOverview); the last
    // row is each reader's own read, what one overview costs the database.
    { name: "overview (7 days)", call: (_, actor) => getOverview({ actor, range: "7d" }) },
    { name: "overview (90 days)", call: (_, actor) => getOverview({ actor, range: "90d" }) },
    { name: "overview (90 days), unshared", call: async () => readOverview(await getPrisma(), "90d") },
  ];
  if (g.pendingPivotIds.length > 0) list.splice(4, 0, { name: "pivot screen", call: (i, actor) => getPivotScreen({ actor, pivotId: g.pendingPivotIds[i % g.pendingPivotIds.length]! }) });
  return list;
}

/** Latencies of successful calls, and the failed calls (a timed-out transaction must not end the bench). */
type Timed = Percentiles & { failed: number; firstError: string | null };

async function timeCalls(screen: Screen, readers: number, perReader: number): Promise<Timed> {
  const lat: number[] = [];
  let failed = 0;
  let firstError: string | null = null;
  await Promise.all(
    Array.from({ length: readers }, async (_, r) => {
      for (let k = 0; k < perReader; k++) {
        const s = performance.now();
        try {
          await asReviewer((actor) => screen.call(r * perReader + k, actor));
          lat.push(performance.now() - s);
        } catch (e) {
          failed++;
          firstError ??= (e instanceof Error ? e.message : String(e)).replace(/\s+/g, " ").slice(-300);
        }
      }
    }),
  );
  return { ...percentiles(lat), failed, firstError };
}

/** The plan of one logged statement, with its parameters. */
async function explain(kind: DatabaseKind, url: string, q: LoggedQuery): Promise<string> {
  let params: unknown[] = [];
  try {
    params = JSON.parse(q.params) as unknown[];
  } catch {
    /* no params */
  }
  try {
    if (kind === "sqlite") {
      const db = new Database(fileOf(url), { readonly: true });
      try {
        const rows = db.prepare(`EXPLAIN QUERY PLAN ${q.query}`).all(...params.map((p) => (typeof p === "boolean" ? Number(p) : p))) as { detail: string }[];
        return rows.map((r) => r.detail).join("\n");
      } finally {
        db.close();
      }
    }
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const { rows } = await c.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${q.query}`, params);
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    } finally {
      await c.end();
    }
  } catch (e) {
    return `(EXPLAIN failed: ${e instanceof Error ? e.message : String(e)})`;
  }
}

async function sizeOf(kind: DatabaseKind, url: string): Promise<number> {
  if (kind === "sqlite") {
    const f = fileOf(url);
    return ["", "-wal"].reduce((sum, s) => sum + (existsSync(f + s) ? statSync(f + s).size : 0), 0);
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ size: string }>("SELECT pg_database_size(current_database())::text AS size");
    return Number(rows[0]!.size);
  } finally {
    await c.end();
  }
}

/** Refreshes the planner's statistics. */
async function analyze(kind: DatabaseKind, url: string): Promise<void> {
  if (kind === "sqlite") {
    const db = new Database(fileOf(url));
    try {
      db.exec("ANALYZE");
    } finally {
      db.close();
    }
    return;
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("ANALYZE");
  } finally {
    await c.end();
  }
}

/** A database generated now (dropped afterwards unless --keep), or the one --reuse names (migrated to the current schema). */
async function database(kind: DatabaseKind): Promise<{ url: string; g: Generated; drop: () => Promise<void> }> {
  if (REUSE) {
    if (kind === "sqlite") migrateSqlite(fileOf(REUSE));
    else await migratePostgres(REUSE);
    await analyze(kind, REUSE); // as after generating: the statistics cover any index just added
    console.log(`[dashboard] ${kind}: reusing ${REUSE}`);
    return { url: REUSE, g: await countGenerated(kind, REUSE), drop: async () => undefined };
  }
  const db = await throwaway(kind, "dash");
  try {
    console.log(`[dashboard] ${kind}: generating ${RUNS} runs / ~${STEPS} steps...`);
    const g = await generate(kind, db.url, RUNS, STEPS);
    if (KEEP) console.log(`[dashboard] ${kind}: keeping the database: measure it again with --reuse ${db.url} --store ${kind}`);
    return { url: db.url, g, drop: KEEP ? async () => undefined : db.drop };
  } catch (e) {
    await db.drop();
    throw e;
  }
}

async function benchStore(kind: DatabaseKind): Promise<Record<string, unknown>> {
  const db = await database(kind);
  const g = db.g;
  try {
    console.log(`[dashboard] ${kind}: ${g.runs} runs, ${g.steps} steps, ${g.pivots} pivots, ${g.escalations} escalations, ${g.corrections} corrections, ${g.auditEvents} audit events, generated in ${g.seconds} s`);
    const size = await sizeOf(kind, db.url);
    process.env.DATABASE_POOL_SIZE = "20";
    const prisma = await openPrisma(db.url);
    // The triggers counted every loaded row as a delta; the app's fold duty would have moved them by now.
    const foldStart = performance.now();
    const folded = await foldAllOverviewDeltas(prisma, Number.MAX_SAFE_INTEGER);
    if (folded > 0) console.log(`[dashboard] ${kind}: folded ${folded} overview deltas into hourly counts in ${fmt((performance.now() - foldStart) / 1000, 1)} s`);
    let log: LoggedQuery[] = [];
    const logging = await openLoggingPrisma(db.url, (q) => log.push(q));
    try {
      const store = () => new PrismaSagaStore(prisma);
      const list = screens(g, store);
      const rows: string[][] = [["screen", "1 reader p50", "p95", "16 readers p50", "p95", "goal p95 ≤ 50 / 200 ms", "slowest SQL ms", "statements"]];
      const out: Record<string, unknown> = {};
      const plans: Record<string, { sql: string; ms: number; plan: string }> = {};
      for (const screen of list) {
        // The SQL: one call on a logging client (same adapter and pragmas), after a warm-up call.
        useClient(db.url, logging);
        await asReviewer((actor) => screen.call(1, actor));
        log = [];
        const loggingStore = new PrismaSagaStore(logging);
        await asReviewer((actor) => (screen.name.startsWith("audit") ? loggingStore.listAuditEvents(g.sampleRunIds[2]!) : screen.call(2, actor)));
        const statements = log.filter((q) => !/^(COMMIT|BEGIN)/i.test(q.query));
        const slowest = [...statements].sort((a, b) => b.duration - a.duration)[0];
        // The timings: the ordinary client.
        useClient(db.url, prisma);
        await asReviewer((actor) => screen.call(0, actor));
        const one = await timeCalls(screen, 1, CALLS);
        const sixteen = await timeCalls(screen, 16, Math.max(4, Math.round(CALLS / 4)));
        const ok = one.p95 <= 50 && sixteen.p95 <= 200 && one.failed + sixteen.failed === 0;
        const failures = one.failed + sixteen.failed > 0 ? ` (${one.failed + sixteen.failed} calls failed)` : "";
        if (failures) console.log(`[dashboard] ${kind} · ${screen.name}: ${one.failed + sixteen.failed} calls failed, e.g. ${one.firstError ?? sixteen.firstError}`);
        rows.push([screen.name, fmt(one.p50, 2), fmt(one.p95, 2), fmt(sixteen.p50, 2), fmt(sixteen.p95, 2), (ok ? "met" : "NOT met") + failures, slowest ? fmt(slowest.duration, 2) : "-", String(statements.length)]);
        if (slowest) plans[screen.name] = { sql: slowest.query, ms: slowest.duration, plan: await explain(kind, db.url, slowest) };
        out[screen.name] = { oneReader: one, sixteenReaders: sixteen, met: ok, statements: statements.map((q) => ({ ms: q.duration, sql: q.query.slice(0, 400) })) };
      }
      const table = printTable(`4. Dashboard on ${kind}: ${g.runs} runs / ${g.steps} steps / ${g.auditEvents} audit events, ${(size / 1e6).toFixed(1)} MB on disk (ms, server time in-process)`, rows);
      for (const [name, p] of Object.entries(plans)) {
        console.log(`\n### ${kind} · ${name}: slowest statement (${fmt(p.ms, 2)} ms in the logged call)\n${p.sql.replace(/\s+/g, " ").slice(0, 600)}\n--- plan ---\n${p.plan}`);
      }
      return { generated: { ...g, sampleRunIds: undefined, pendingPivotIds: undefined }, sizeBytes: size, screens: out, plans, table };
    } finally {
      useProcessPrisma(undefined);
      await prisma.$disconnect();
      await logging.$disconnect();
    }
  } finally {
    await db.drop();
  }
}

const results: Record<string, unknown> = { startedAt: new Date().toISOString(), runs: RUNS, steps: STEPS, callsPerReader: CALLS, reused: REUSE ?? null };
for (const kind of stores) results[kind] = await benchStore(kind);
results.finishedAt = new Date().toISOString();
console.log(`\nwrote ${writeResults("dashboard", results)}`);
process.exit(0);
