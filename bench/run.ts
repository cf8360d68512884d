/**
 * `npm run bench`: the cost of the saga log per logged tool call, each figure next to a
 * baseline measured in the same invocation, interleaved round by round (median, min–max).
 *   1. engine dispatch per step (in-process Prisma store) vs the raw two-commit baseline, SQLite and PostgreSQL,
 *      and the raw baseline with an audit link in each commit (SQLite also: the pages each writes per step);
 *   2. the same vs DBOS Transact on the same PostgreSQL, and 200 concurrent runs × 10 steps (pool 20),
 *      after a warm-up round of each, with what limits each (CPU of this process and of the rest of the
 *      machine, the database sessions' waits, the queries waiting for the pool);
 *   3. the HTTP path (built app, HttpSagaStore) at 1, 8, 32 concurrent runs vs GET /api/health;
 *   5. durable commits per logged step (SQLite: COMMITs Prisma sends; PostgreSQL: pg_stat_wal.wal_sync),
 *      in the default mode and in relaxed durability (SAGABOARD_DURABILITY=relaxed: outcomes not flushed).
 * (4, the dashboard at scale, is `npm run bench:dashboard`.)
 * Flags: --rounds N (5) --steps N (2000 per round per durable subject: 5 × 2000 = the 10,000 steps the
 * p99 goal is stated over; relaxed subjects run half) --skip-http --skip-dbos --quick.
 * Writes bench/results/<timestamp>-bench.json. Not part of `npm test`.
 */
import { readFileSync } from "node:fs";
import pg from "pg";
import { openPrisma } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { rawDriverOf } from "@/lib/core/db/raw-driver";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { testPostgresAdminUrl } from "@/tests/support/test-database";
import {
  benchRegistry,
  declareBenchLetters,
  PLAIN_LETTER,
  SEALED_LETTER,
  flag,
  fmt,
  fmtSpread,
  hasFlag,
  interleave,
  openCountingPrisma,
  percentiles,
  performance,
  printTable,
  spread,
  throwaway,
  writeResults,
  type Percentiles,
  type Spread,
} from "./lib/common";
import { benchArgs, engineConcurrent, engineRound, RawPg, RawSqlite, STEPS_PER_RUN, type Round } from "./lib/dispatch";

const quick = hasFlag("quick");
const ROUNDS = flag("rounds", quick ? 3 : 5);
const STEPS = flag("steps", quick ? 300 : 2000);
const COUNT_STEPS = 300;
const results: Record<string, unknown> = { startedAt: new Date().toISOString(), rounds: ROUNDS, stepsPerRound: STEPS, stepsPerRun: STEPS_PER_RUN };
const tables: string[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

const msPerStep = (r: Round) => r.latencies.reduce((a, b) => a + b, 0) / r.latencies.length;
const stepsPerSec = (r: Round) => r.latencies.length / (r.wallMs / 1000);
const all = (rs: Round[]) => rs.flatMap((r) => r.latencies);
/** A latency row's p50, p95, p99, p99.9 and p99/p50 cells. */
const tailCells = (t: Percentiles) => [fmt(t.p50), fmt(t.p95), fmt(t.p99), fmt(t.p999), fmt(t.p99 / t.p50, 2)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `n` engine steps and counts what they sent (run creation excluded), through the observer the
 * bench passes to openPrisma: Prisma's statements from its query log, the saga log's own SQL
 * (lib/core/db/step-log-sql.ts) as it sends it. Commits = Prisma's COMMITs + the saga log's write
 * transactions (each autocommit statement is one).
 */
async function statementsPerStep(url: string, n: number, tool = "bench_noop"): Promise<{ commits: number; statements: number; prismaStatements: number; sample: string[] }> {
  const { prisma, sent } = await openCountingPrisma(url);
  try {
    const engine = new SagaEngine({ store: new PrismaSagaStore(prisma), registry: benchRegistry() });
    const contexts = [];
    for (let r = 0; r < Math.ceil(n / STEPS_PER_RUN); r++) contexts.push(await engine.startRun({ title: "count", agent: "bench" }));
    const start = { prisma: sent.prisma.length, driver: sent.driverStatements, commits: sent.commits };
    let sample: string[] = [];
    for (const ctx of contexts) {
      for (let i = 0; i < STEPS_PER_RUN; i++) {
        const before = sent.prisma.length;
        await ctx.call(tool, benchArgs(tool, i));
        if (sample.length === 0 && i === 1) sample = sent.prisma.slice(before).map((q) => q.query.replace(/\s+/g, " ").slice(0, 140));
      }
    }
    const steps = contexts.length * STEPS_PER_RUN;
    const prismaStatements = sent.prisma.length - start.prisma;
    const driverStatements = sent.driverStatements - start.driver;
    return { commits: (sent.commits - start.commits) / steps, statements: (prismaStatements + driverStatements) / steps, prismaStatements: prismaStatements / steps, sample };
  } finally {
    await prisma.$disconnect();
  }
}

/**
 * The two letter subjects' rows: a step with two personal fields stored in clear (the tool declares
 * none) and sealed (it declares both), and the sealed one's cost over the clear one's, round by round.
 */
function personalRows(r: Record<string, Round[]>): { rows: string[][]; results: Record<string, unknown> } {
  const plain = spread(r.letterPlain!.map(msPerStep));
  const sealed = spread(r.letterSealed!.map(msPerStep));
  const over = spread(r.letterSealed!.map((x, i) => msPerStep(x) / msPerStep(r.letterPlain![i]!)));
  const cells = (rs: Round[]) => tailCells(percentiles(all(rs)));
  return {
    rows: [
      ["engine, 2 personal fields in clear", fmtSpread(plain), ...cells(r.letterPlain!), "", "", ""],
      ["engine, 2 personal fields sealed", fmtSpread(sealed), ...cells(r.letterSealed!), "", "", `≤ 1.10× in clear: ${fmtSpread(over, 3)}`],
    ],
    results: { plainMsPerStep: plain, sealedMsPerStep: sealed, sealedOverPlain: over },
  };
}

// ---------------------------------------------------------------------------------------------
// 1 + 5: SQLite.

async function sqliteSection(): Promise<number> {
  const db = await throwaway("sqlite", "sqlite");
  cleanups.push(() => db.drop());
  const prisma = await openPrisma(db.url);
  const store = new PrismaSagaStore(prisma);
  const relaxedStore = new PrismaSagaStore(prisma, { durability: "relaxed" });
  const raw = new RawSqlite(db.url);
  try {
    await declareBenchLetters(prisma);
    await engineRound(store, 50);
    await engineRound(store, 50, SEALED_LETTER);
    await engineRound(store, 50, PLAIN_LETTER);
    await raw.round(50);
    const r = await interleave(ROUNDS, {
      engine: () => engineRound(store, STEPS),
      letterPlain: () => engineRound(store, STEPS, PLAIN_LETTER),
      letterSealed: () => engineRound(store, STEPS, SEALED_LETTER),
      engineRelaxed: () => engineRound(relaxedStore, Math.ceil(STEPS / 2)),
      raw: () => raw.round(STEPS),
      rawAudit: () => raw.round(STEPS, true),
    });
    const eng = spread(r.engine!.map(msPerStep));
    const relaxed = spread(r.engineRelaxed!.map(msPerStep));
    const relaxedRatio = spread(r.engineRelaxed!.map((e, i) => msPerStep(e) / msPerStep(r.raw![i]!)));
    const relaxedTail = percentiles(all(r.engineRelaxed!));
    const base = spread(r.raw!.map(msPerStep));
    const ratio = spread(r.engine!.map((e, i) => msPerStep(e) / msPerStep(r.raw![i]!)));
    const tail = percentiles(all(r.engine!));
    const rawTail = percentiles(all(r.raw!));
    const rawAudit = spread(r.rawAudit!.map(msPerStep));
    const rawAuditRatio = spread(r.rawAudit!.map((e, i) => msPerStep(e) / msPerStep(r.raw![i]!)));
    const rawAuditTail = percentiles(all(r.rawAudit!));
    const counted = await statementsPerStep(db.url, COUNT_STEPS);
    const countedSealed = await statementsPerStep(db.url, COUNT_STEPS, SEALED_LETTER);
    const letters = personalRows(r);
    // Pages each subject writes per step (WAL frames over a short round from an empty WAL, below the auto-checkpoint).
    const PAGE_STEPS = 50;
    const pages = {
      raw: (await raw.pagesWritten(() => raw.round(PAGE_STEPS))) / PAGE_STEPS,
      rawAudit: (await raw.pagesWritten(() => raw.round(PAGE_STEPS, true))) / PAGE_STEPS,
      engine: (await raw.pagesWritten(() => engineRound(store, PAGE_STEPS))) / PAGE_STEPS,
    };
    results.sqlite = {
      engineMsPerStep: eng, relaxedMsPerStep: relaxed, relaxedRatio, relaxedLatency: relaxedTail, rawMsPerStep: base, ratio, engineLatency: tail, rawLatency: rawTail,
      rawAuditMsPerStep: rawAudit, rawAuditRatio, rawAuditLatency: rawAuditTail, pagesPerStep: pages,
      commitsPerStep: counted.commits, statementsPerStep: counted.statements, sampleStep: counted.sample,
      sealedLetter: { ...letters.results, commitsPerStep: countedSealed.commits, statementsPerStep: countedSealed.statements },
    };
    tables.push(
      printTable("1. SQLite (WAL, synchronous=FULL): ms per logged step, median (min–max) over rounds", [
        ["subject", "ms/step", "p50", "p95", "p99", "p99.9", "p99/p50", "vs raw", "pages/step", "goal"],
        ["raw better-sqlite3, 2 commits", fmtSpread(base), ...tailCells(rawTail), "1", fmt(pages.raw, 1), ""],
        ["raw + an audit link in each commit", fmtSpread(rawAudit), ...tailCells(rawAuditTail), fmtSpread(rawAuditRatio, 2), fmt(pages.rawAudit, 1), "the floor of a log with an audit chain"],
        ["engine + PrismaSagaStore", fmtSpread(eng), ...tailCells(tail), fmtSpread(ratio, 2), fmt(pages.engine, 1), "≤ 3× raw; p99 ≤ 3× p50"],
        ["engine, relaxed outcome", fmtSpread(relaxed), ...tailCells(relaxedTail), fmtSpread(relaxedRatio, 2), "", ""],
        ...letters.rows,
      ]),
    );
    return eng.median;
  } finally {
    raw.close();
    await prisma.$disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// 1, 2, 5: PostgreSQL (+ DBOS).

/** CPU time all cores spent busy since boot, ms (/proc/stat; null where there is none). */
function machineCpuMs(): number | null {
  try {
    const ticks = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = ticks[3]! + (ticks[4] ?? 0);
    return (ticks.reduce((a, b) => a + b, 0) - idle) * 10; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/**
 * Samples what the database's active sessions (other than `monitor`'s) wait on, every 10 ms until
 * stopped: the mean number of sessions per wait ("CPU" when running, else type:event).
 */
function sessionWaits(monitor: pg.Client): { stop: () => Promise<Record<string, number>> } {
  const totals: Record<string, number> = {};
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await monitor.query<{ w: string; n: number }>(
        `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS w, count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active' GROUP BY 1`,
      );
      samples++;
      for (const { w, n } of rows) totals[w] = (totals[w] ?? 0) + n;
      await sleep(10);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return Object.fromEntries(Object.entries(totals).map(([w, n]) => [w, n / Math.max(1, samples)]));
    },
  };
}

/** The three waits with the most sessions, averaged over rounds: "LWLock:WALWrite 6.1, CPU 0.4, ...". */
function topWaits(rounds: Record<string, number>[]): string {
  const sum: Record<string, number> = {};
  for (const r of rounds) for (const [w, n] of Object.entries(r)) sum[w] = (sum[w] ?? 0) + n / rounds.length;
  const top = Object.entries(sum).sort((a, b) => b[1] - a[1]).slice(0, 3);
  return top.length ? top.map(([w, n]) => `${w} ${fmt(n, 1)}`).join(", ") : "none active";
}

/** Runs `fn` on a new connection to the admin database, closed afterwards. */
async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: testPostgresAdminUrl() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function walSyncs(): Promise<number> {
  return withAdmin(async (c) => Number((await c.query<{ wal_sync: string }>("SELECT wal_sync FROM pg_stat_wal")).rows[0]!.wal_sync));
}

/**
 * Waits (up to 60 s) until no autovacuum worker runs: wal_sync is cluster-wide, and a vacuum set off
 * by the rounds above flushes WAL of its own into whichever count is open.
 */
async function autovacuumQuiet(): Promise<void> {
  await withAdmin(async (c) => {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(500)) {
      const { rows } = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'");
      if (rows[0]!.n === 0) return;
    }
  });
}

/** wal_sync delta over `work` (connections opened inside are closed before reading, which flushes their stats). */
async function walSyncDelta(work: () => Promise<number>): Promise<{ syncs: number; steps: number; perStep: number }> {
  await autovacuumQuiet();
  await sleep(300);
  const before = await walSyncs();
  const steps = await work();
  await sleep(500);
  const syncs = (await walSyncs()) - before;
  return { syncs, steps, perStep: syncs / steps };
}

async function pgEngineSteps(url: string, durability: "durable" | "relaxed", n: number, tool = "bench_noop"): Promise<{ run: () => Promise<number> }> {
  // The runs are created (and their clients closed) first, so only the steps' commits are counted.
  const setup = await openPrisma(url);
  const engine0 = new SagaEngine({ store: new PrismaSagaStore(setup), registry: benchRegistry() });
  const runIds: string[] = [];
  for (let r = 0; r < Math.ceil(n / STEPS_PER_RUN); r++) runIds.push((await engine0.startRun({ title: "count", agent: "bench" })).runId);
  await setup.$disconnect();
  return {
    run: async () => {
      const prisma = await openPrisma(url);
      try {
        const engine = new SagaEngine({ store: new PrismaSagaStore(prisma, { durability }), registry: benchRegistry() });
        for (const id of runIds) {
          const ctx = await engine.resume(id);
          for (let i = 0; i < STEPS_PER_RUN; i++) await ctx.call(tool, benchArgs(tool, i));
        }
        return runIds.length * STEPS_PER_RUN;
      } finally {
        await prisma.$disconnect();
      }
    },
  };
}

async function postgresSection(): Promise<void> {
  process.env.DATABASE_POOL_SIZE = "20";
  const db = await throwaway("postgresql", "pg");
  cleanups.push(() => db.drop());
  const prisma = await openPrisma(db.url);
  const store = new PrismaSagaStore(prisma);
  const relaxedStore = new PrismaSagaStore(prisma, { durability: "relaxed" });
  const raw = new RawPg(db.url, 20);
  let dbos: typeof import("./lib/dbos") | null = null;
  let dbosError: string | null = null;
  if (!hasFlag("skip-dbos")) {
    try {
      dbos = await import("./lib/dbos");
      await dbos.launchDbos(db.url, 20);
    } catch (e) {
      dbosError = e instanceof Error ? e.message : String(e);
      dbos = null;
      console.warn(`[bench] DBOS skipped: ${dbosError}`);
    }
  }
  results.dbos = dbos ? { package: "@dbos-inc/dbos-sdk", version: "5.3.0" } : { skipped: dbosError ?? "--skip-dbos" };
  try {
    await declareBenchLetters(prisma);
    await engineRound(store, 50);
    await engineRound(store, 50, SEALED_LETTER);
    await engineRound(store, 50, PLAIN_LETTER);
    await raw.round(50);
    if (dbos) await dbos.dbosRound(50);
    const subjects: Record<string, () => Promise<Round>> = {
      engine: () => engineRound(store, STEPS),
      letterPlain: () => engineRound(store, STEPS, PLAIN_LETTER),
      letterSealed: () => engineRound(store, STEPS, SEALED_LETTER),
      engineRelaxed: () => engineRound(relaxedStore, Math.ceil(STEPS / 2)),
      raw: () => raw.round(STEPS),
      rawRelaxed: () => raw.round(Math.ceil(STEPS / 2), true),
      rawAudit: () => raw.round(STEPS, false, true),
    };
    const d0 = dbos;
    if (d0) subjects.dbos = () => d0.dbosRound(STEPS);
    const r = await interleave(ROUNDS, subjects);
    const s = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, spread(v.map(msPerStep))])) as Record<string, Spread>;
    const p = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, percentiles(all(v))]));
    const ratio = (a: string, b: string) => spread(r[a]!.map((x, i) => msPerStep(x) / msPerStep(r[b]![i]!)));

    // 2: 200 concurrent runs × 10 steps, pool of 20 each.
    const RUNS = quick ? 50 : 200;
    // What limits each subject, sampled over each round:
    // - this process's CPU (a share of one core: near 1, the one JavaScript thread is the limit), and
    //   how much of the round its event loop was busy, which also counts the time its thread waited
    //   for a core inside a call (writev wakes a PostgreSQL backend that can take the core);
    // - the rest of the machine's CPU (/proc/stat less this process: PostgreSQL's backends and the
    //   kernel's loopback network); the two near the core count, the machine is the limit;
    // - what the database's active sessions wait on (pg_stat_activity, every 10 ms): "CPU" is running,
    //   LWLock:WALWrite is queueing behind another session's WAL flush (group commit), Lock:advisory
    //   is a chain lock, Client:ClientRead is waiting for this process to send;
    // - how many queries waited for a pool connection.
    const limits: Record<string, { cpu: number[]; loop: number[]; rest: number[]; waiting: number[]; waits: Record<string, number>[] }> = {};
    const monitor = new pg.Client({ connectionString: db.url });
    await monitor.connect();
    let monitorOpen = true;
    cleanups.push(() => (monitorOpen ? monitor.end() : undefined));
    const observed = (name: string, pool: pg.Pool | null, fn: () => Promise<Round>) => async () => {
      const cpu0 = process.cpuUsage();
      const loop0 = performance.eventLoopUtilization();
      const machine0 = machineCpuMs();
      let samples = 0;
      let waiting = 0;
      const timer = pool
        ? setInterval(() => {
            samples++;
            waiting += pool.waitingCount;
          }, 5)
        : null;
      const waits = sessionWaits(monitor);
      const round = await fn();
      if (timer) clearInterval(timer);
      const seenWaits = await waits.stop();
      const used = process.cpuUsage(cpu0);
      const machine = machineCpuMs();
      const seen = (limits[name] ??= { cpu: [], loop: [], rest: [], waiting: [], waits: [] });
      const own = (used.user + used.system) / 1000;
      seen.cpu.push(own / round.wallMs);
      seen.loop.push(performance.eventLoopUtilization(loop0).utilization);
      if (machine0 !== null && machine !== null) seen.rest.push((machine - machine0 - own) / round.wallMs);
      if (pool) seen.waiting.push(samples ? waiting / samples : 0);
      seen.waits.push(seenWaits);
      return round;
    };
    const enginePool = (() => {
      const driver = rawDriverOf(prisma);
      return driver?.kind === "postgresql" ? driver.pool : null;
    })();
    const concurrentSubjects: Record<string, { pool: pg.Pool | null; round: () => Promise<Round> }> = {
      engine: { pool: enginePool, round: () => engineConcurrent(store, RUNS, STEPS_PER_RUN) },
      raw: { pool: raw.pool, round: () => raw.concurrent(RUNS, STEPS_PER_RUN) },
      rawAudit: { pool: raw.pool, round: () => raw.concurrent(RUNS, STEPS_PER_RUN, true) },
    };
    if (d0) concurrentSubjects.dbos = { pool: null, round: () => d0.dbosConcurrent(RUNS, STEPS_PER_RUN) };
    // One round of each first, not counted: its pool's connections open and prepare their
    // statements, and the JavaScript on the path is compiled, in every subject alike. A first round
    // measured 0.5-0.8x a later one's throughput in every subject, which made a 2-round median
    // mostly a measure of warming up.
    for (const { round } of Object.values(concurrentSubjects)) await round();
    const conc = Object.fromEntries(Object.entries(concurrentSubjects).map(([name, { pool, round }]) => [name, observed(name, pool, round)]));
    const c = await interleave(quick ? 2 : 5, conc);
    monitorOpen = false;
    await monitor.end();
    const tput = Object.fromEntries(Object.entries(c).map(([k, v]) => [k, spread(v.map(stepsPerSec))])) as Record<string, Spread>;
    const cp = Object.fromEntries(Object.entries(c).map(([k, v]) => [k, percentiles(all(v))]));

    // 5: durable commits per step. DBOS is shut down first: launched, it commits in the background,
    // and wal_sync is cluster-wide.
    if (dbos) await dbos.shutdownDbos();
    const counted = await statementsPerStep(db.url, COUNT_STEPS);
    await prisma.$disconnect();
    const wal: Record<string, { syncs: number; steps: number; perStep: number }> = {};
    const eng = await pgEngineSteps(db.url, "durable", COUNT_STEPS);
    wal.engine = await walSyncDelta(eng.run);
    const engR = await pgEngineSteps(db.url, "relaxed", COUNT_STEPS);
    wal.engineRelaxed = await walSyncDelta(engR.run);
    const engSealed = await pgEngineSteps(db.url, "durable", COUNT_STEPS, SEALED_LETTER);
    wal.sealedLetter = await walSyncDelta(engSealed.run);
    const rawCounter = (relaxed: boolean) => async () => {
      const rp = new RawPg(db.url, 1);
      await rp.round(COUNT_STEPS, relaxed);
      await rp.end();
      return COUNT_STEPS;
    };
    wal.raw = await walSyncDelta(rawCounter(false));
    wal.rawRelaxed = await walSyncDelta(rawCounter(true));
    if (dbos) {
      const d = dbos;
      // Launches stay outside the counts: with them inside, "work minus empty" swung from +4.8 to
      // -2.4 per step between runs (a launch after the rounds above writes a varying amount). Shutting
      // down is inside both (its connections' statistics reach pg_stat_wal when they close).
      await d.launchDbos(db.url, 20);
      await sleep(3000); // its launch-time background work
      const empty = await walSyncDelta(async () => {
        await d.shutdownDbos();
        return 1;
      });
      await d.launchDbos(db.url, 20);
      await sleep(3000); // its launch-time background work
      const work = await walSyncDelta(async () => {
        await d.dbosRound(COUNT_STEPS);
        await d.shutdownDbos();
        return COUNT_STEPS;
      });
      wal.dbos = { syncs: work.syncs - empty.syncs, steps: COUNT_STEPS, perStep: (work.syncs - empty.syncs) / COUNT_STEPS };
      dbos = null;
    }

    const letters = personalRows(r);
    results.postgresql = { sealedLetter: letters.results, msPerStep: s, latency: p, ratios: { engineVsRaw: ratio("engine", "raw"), ...(r.dbos ? { engineVsDbos: ratio("engine", "dbos"), rawVsDbos: ratio("raw", "dbos") } : {}) }, concurrent: { runs: RUNS, stepsPerRun: STEPS_PER_RUN, pool: 20, stepsPerSec: tput, latency: cp }, walSyncPerStep: wal, prismaStatementsPerStep: counted.statements, prismaCommitsPerStep: counted.commits, sampleStep: counted.sample };

    const row = (name: string, key: string, vsRaw: string, vsDbos: string, goal: string) =>
      r[key] ? [name, fmtSpread(s[key]!), ...tailCells(p[key]!), vsRaw, vsDbos, goal] : [name, "skipped", "", "", "", "", "", "", "", ""];
    tables.push(
      printTable("1+2. PostgreSQL 15 (synchronous_commit=on): ms per logged step, median (min–max) over rounds", [
        ["subject", "ms/step", "p50", "p95", "p99", "p99.9", "p99/p50", "vs raw", "vs DBOS", "goal"],
        row("raw pg, 2 commits", "raw", "1", r.dbos ? fmtSpread(ratio("raw", "dbos"), 2) : "", ""),
        row("raw pg, relaxed outcome", "rawRelaxed", fmtSpread(ratio("rawRelaxed", "raw"), 2), "", ""),
        row("raw + an audit link in each commit", "rawAudit", fmtSpread(ratio("rawAudit", "raw"), 2), r.dbos ? fmtSpread(ratio("rawAudit", "dbos"), 2) : "", "the floor of a log with an audit chain"),
        row("DBOS 5.3 runStep", "dbos", r.dbos ? fmtSpread(ratio("dbos", "raw"), 2) : "", "1", ""),
        row("engine + PrismaSagaStore", "engine", fmtSpread(ratio("engine", "raw"), 2), r.dbos ? fmtSpread(ratio("engine", "dbos"), 2) : "", "≤ 1× DBOS (stretch 0.75×); p99 ≤ 3× p50"),
        row("engine, relaxed outcome", "engineRelaxed", fmtSpread(ratio("engineRelaxed", "raw"), 2), r.dbos ? fmtSpread(ratio("engineRelaxed", "dbos"), 2) : "", ""),
        ...letters.rows,
      ]),
    );
    const limitCells = (key: string) => {
      const l = limits[key];
      if (!l) return ["", "", "", "", "", ""];
      const perStep = (share: number[]) => fmt(spread(share.map((x, i) => x * (c[key]![i]!.wallMs / c[key]![i]!.latencies.length))).median, 2);
      return [
        fmtSpread(spread(l.cpu), 2),
        `${fmt(spread(l.loop).median * 100, 0)}%`,
        l.rest.length ? fmtSpread(spread(l.rest), 2) : "not visible",
        l.rest.length ? `${perStep(l.cpu)} + ${perStep(l.rest)}` : perStep(l.cpu),
        topWaits(l.waits),
        l.waiting.length ? fmtSpread(spread(l.waiting), 1) : "not visible",
      ];
    };
    const trow = (name: string, key: string, goal: string) =>
      c[key]
        ? [name, fmtSpread(tput[key]!, 0), fmt(cp[key]!.p50), fmt(cp[key]!.p99), c.dbos ? fmtSpread(spread(c[key]!.map((x, i) => stepsPerSec(x) / stepsPerSec(c.dbos![i]!))), 2) : "", ...limitCells(key), goal]
        : [name, "skipped", "", "", "", "", "", "", "", "", "", ""];
    results.postgresqlConcurrentLimits = limits;
    tables.push(
      printTable(`2. PostgreSQL, ${RUNS} concurrent runs × ${STEPS_PER_RUN} steps, pool 20: throughput, and what limits it`, [
        ["subject", "steps/s", "p50 ms", "p99 ms", "vs DBOS", "bench process CPU (cores)", "event loop busy", "rest of the machine (cores)", "CPU ms a step (bench + rest)", "database sessions, mean active: what they wait on", "queries waiting for the pool", "goal"],
        trow("raw pg, 2 commits", "raw", ""),
        trow("raw + an audit link in each commit", "rawAudit", ""),
        trow("DBOS 5.3", "dbos", ""),
        trow("engine + PrismaSagaStore", "engine", "≥ 1.5× DBOS"),
      ]),
    );
  } finally {
    await raw.end().catch(() => undefined);
    if (dbos) await dbos.shutdownDbos().catch(() => undefined);
    await prisma.$disconnect().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// 3: HTTP.

async function httpSection(inProcessSqliteMs: number): Promise<void> {
  const http = await import("./lib/http");
  let built: string | null;
  try {
    built = http.buildIfStale();
  } catch (e) {
    const skipped = e instanceof Error ? e.message : String(e);
    results.http = { skipped };
    console.warn(`[bench] HTTP section skipped: ${skipped}`);
    return;
  }
  const db = await throwaway("sqlite", "http");
  cleanups.push(() => db.drop());
  const app = await http.startApp(db.url, 3000 + Math.floor(Math.random() * 2000) + 3000);
  cleanups.push(() => app.stop());
  try {
    // Warm the server's JIT on every route measured (a few hundred requests each), so the rounds see
    // steady state rather than the first requests' compilation.
    await http.httpEngineLoad(app, 2, 150, http.PIPELINED_LINGER_MS);
    await http.httpEngineLoad(app, 2, 150, 0);
    await http.httpBareLoad(app, 2, 150);
    await http.healthLoad(app.url, 2, 300);
    const levels = quick ? [{ c: 1, steps: 40 }, { c: 8, steps: 10 }, { c: 32, steps: 10 }] : [{ c: 1, steps: 80 }, { c: 8, steps: 20 }, { c: 32, steps: 8 }];
    const rows: string[][] = [["runs", "subject", "steps/s (req/s)", "p50", "p95", "p99", "p50 vs (2×health p50 + in-proc)", "goal"]];
    const out: Record<string, unknown> = { built, inProcessSqliteMsPerStep: inProcessSqliteMs };
    for (const { c, steps } of levels) {
      const r = await interleave(3, {
        health: () => http.healthLoad(app.url, c, steps * 2),
        bare: () => http.httpBareLoad(app, c, steps),
        engine: () => http.httpEngineLoad(app, c, steps, 0),
        pipelined: () => http.httpEngineLoad(app, c, steps, http.PIPELINED_LINGER_MS),
      });
      const hp = percentiles(all(r.health!));
      const floor = 2 * hp.p50 + inProcessSqliteMs;
      const line = (name: string, key: string, reqPerStep: number, goal: string) => {
        const pp = percentiles(all(r[key]!));
        const sps = spread(r[key]!.map(stepsPerSec));
        return [String(c), name, `${fmt(sps.median, 0)} (${fmt(sps.median * reqPerStep, 0)})`, fmt(pp.p50), fmt(pp.p95), fmt(pp.p99), key === "health" ? "" : fmt(pp.p50 / floor, 2), goal];
      };
      rows.push(line("GET /api/health", "health", 1, ""));
      rows.push(line("intent + outcome (2 req)", "bare", 2, ""));
      rows.push(line("engine, outcome alone (2 req)", "engine", 2, "≤ 1.5×"));
      rows.push(line("engine, outcome with next call (1 req)", "pipelined", 1, "≤ 1.5×"));
      out[`c${c}`] = {
        health: { latency: hp, reqPerSec: spread(r.health!.map(stepsPerSec)) },
        bare: { latency: percentiles(all(r.bare!)), stepsPerSec: spread(r.bare!.map(stepsPerSec)), ratioToFloor: percentiles(all(r.bare!)).p50 / floor },
        engine: { latency: percentiles(all(r.engine!)), stepsPerSec: spread(r.engine!.map(stepsPerSec)), ratioToFloor: percentiles(all(r.engine!)).p50 / floor },
        pipelined: { latency: percentiles(all(r.pipelined!)), stepsPerSec: spread(r.pipelined!.map(stepsPerSec)), ratioToFloor: percentiles(all(r.pipelined!)).p50 / floor },
        floorMs: floor,
      };
    }
    results.http = out;
    tables.push(printTable(`3. HTTP path (next start, SQLite), in-process dispatch ${fmt(inProcessSqliteMs)} ms/step; engine = 2 requests per step (intent, outcome), or 1 with the outcome sent with the next call (the client's default)`, rows));
  } finally {
    app.stop();
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const t0 = Date.now();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      void (async () => {
        for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
        process.exit(130);
      })();
    });
  }
  try {
    const sqliteMs = await sqliteSection();
    if (hasFlag("http-first") && !hasFlag("skip-http")) await httpSection(sqliteMs);
    await postgresSection();
    if (!hasFlag("http-first") && !hasFlag("skip-http")) await httpSection(sqliteMs);
    const pgr = results.postgresql as { walSyncPerStep: Record<string, { perStep: number; syncs: number; steps: number }>; prismaCommitsPerStep: number; prismaStatementsPerStep: number } | undefined;
    const sq = results.sqlite as { commitsPerStep: number; statementsPerStep: number; sealedLetter: { commitsPerStep: number; statementsPerStep: number } };
    const rows: string[][] = [["store / mode", "durable commits per step", "how counted", "statements per step", "goal"]];
    rows.push(["SQLite, engine", fmt(sq.commitsPerStep, 2), "hot-path transactions + COMMITs in Prisma's query log", fmt(sq.statementsPerStep, 1), "= 2"]);
    rows.push(["SQLite, engine, 2 personal fields sealed", fmt(sq.sealedLetter.commitsPerStep, 2), "the same (a person's new key: an unflushed write, not counted)", fmt(sq.sealedLetter.statementsPerStep, 1), "= 2"]);
    if (pgr) {
      const w = pgr.walSyncPerStep;
      rows.push(["PostgreSQL, engine", fmt(w.engine!.perStep, 2), `pg_stat_wal.wal_sync Δ ${w.engine!.syncs}/${w.engine!.steps} (Prisma COMMITs ${fmt(pgr.prismaCommitsPerStep, 2)})`, fmt(pgr.prismaStatementsPerStep, 1), "= 2"]);
      rows.push(["PostgreSQL, engine, 2 personal fields sealed", fmt(w.sealedLetter!.perStep, 2), `wal_sync Δ ${w.sealedLetter!.syncs}/${w.sealedLetter!.steps} (10 new people's keys included)`, "", "= 2"]);
      rows.push(["PostgreSQL, engine, relaxed outcome", fmt(w.engineRelaxed!.perStep, 2), `wal_sync Δ ${w.engineRelaxed!.syncs}/${w.engineRelaxed!.steps}`, "", "= 1"]);
      rows.push(["PostgreSQL, raw 2 commits", fmt(w.raw!.perStep, 2), `wal_sync Δ ${w.raw!.syncs}/${w.raw!.steps}`, "2", ""]);
      rows.push(["PostgreSQL, raw relaxed outcome", fmt(w.rawRelaxed!.perStep, 2), `wal_sync Δ ${w.rawRelaxed!.syncs}/${w.rawRelaxed!.steps}`, "", ""]);
      if (w.dbos) rows.push(["PostgreSQL, DBOS runStep", fmt(w.dbos.perStep, 2), `wal_sync Δ ${w.dbos.syncs}/${w.dbos.steps} (shutdown subtracted; incl. workflow start/end)`, "", ""]);
    }
    tables.push(printTable("5. Durable commits per logged step (wal_sync is cluster-wide: other activity on the server adds to it)", rows));
  } finally {
    for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
  }
  results.finishedAt = new Date().toISOString();
  results.seconds = (Date.now() - t0) / 1000;
  results.tables = tables;
  console.log(`\nwrote ${writeResults("bench", results)} (${results.seconds} s)`);
}

await main();
process.exit(0);
