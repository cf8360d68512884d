/**
 * The store contract against PrismaSagaStore on a real database (fresh per test file: a SQLite file,
 * or in the SAGABOARD_TEST_PG=1 run a throwaway PostgreSQL database), plus what only a database can
 * show: visibility to other connections and processes, writers in several processes racing, and
 * per store: SQLite's durability settings and migrations, PostgreSQL's migration bookkeeping.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSqlite } from "@/lib/core/db/migrate";
import { DEFAULT_POSTGRES_MIGRATIONS_DIR, migrationChecksum, migratePostgres } from "@/lib/core/db/migrate-postgres";
import { openPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { sqliteFilePath } from "@/lib/core/db/url";
import { stepKey } from "@/packages/client/src/saga/keys";
import type { AuditInput, NewIntent } from "@/packages/client/src/saga/store";
import { describeSagaStoreContract } from "@/tests/contract/saga-store-contract";
import { expectChainIntact } from "../support/audit-chain";
import { releasedTogether } from "../support/released-together";
import { reserveTestDatabase } from "../support/test-database";

const database = reserveTestDatabase("store");
const { kind, url } = database;
const label = kind === "postgresql" ? "PostgreSQL" : "SQLite";
// Scripts for the child processes (and, on SQLite, a second database file) live here.
const dir = mkdtempSync(path.join(os.tmpdir(), "sagaboard-store-"));
const opened: PrismaClient[] = [];

async function open(): Promise<PrismaClient> {
  const client = await openPrisma(url);
  opened.push(client);
  return client;
}

beforeAll(() => database.create());

afterAll(async () => {
  await Promise.all(opened.map((c) => c.$disconnect()));
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

describeSagaStoreContract(`PrismaSagaStore (${label})`, async () => {
  const client = await openPrisma(url);
  return { store: new PrismaSagaStore(client), cleanup: () => client.$disconnect() };
});

// Intents and outcomes go through the driver's own SQL (lib/core/db/step-log-sql.ts); the same contract
// holds for relaxed durability.
describeSagaStoreContract(`PrismaSagaStore (${label}, relaxed durability)`, async () => {
  const client = await openPrisma(url);
  return { store: new PrismaSagaStore(client, { durability: "relaxed" }), cleanup: () => client.$disconnect() };
});

// Cross-connection concurrency runs in separate processes, as the app, the worker and agents do.
// (Two connections to one SQLite file inside one process would deadlock: better-sqlite3 waits for a
// lock synchronously, so the connection holding it can never reach its COMMIT.)
const WORKER_SOURCE = `
import { createInterface } from "node:readline";
import { openPrisma } from ${JSON.stringify(path.join(process.cwd(), "lib/core/db/prisma.ts"))};
import { PrismaSagaStore } from ${JSON.stringify(path.join(process.cwd(), "lib/core/db/prisma-saga-store.ts"))};
import { stepKey } from ${JSON.stringify(path.join(process.cwd(), "packages/client/src/saga/keys.ts"))};
const [url, worker, mode, runId, count] = process.argv.slice(2);
const client = await openPrisma(url);
const store = new PrismaSagaStore(client);
const audit = { type: "test." + mode, actor: { type: "system", id: "worker-" + worker } };
const rl = createInterface({ input: process.stdin });
process.stdout.write("ready\\n");
await new Promise((resolve) => rl.once("line", resolve));
rl.close();
const jobs = Array.from({ length: Number(count) }, (_, i) => {
  if (mode === "insert") {
    return store
      .insertIntent({
        id: "stp_" + runId + "_w" + worker + "_" + i, runId, stepIdx: 0, tool: "create_ticket", toolClass: "COMPENSATABLE",
        stepKey: stepKey(runId, 0, "create_ticket"), args: { worker, i }, argsHash: "h", phase: "STAGING", policyVersion: 1,
        approvalId: null, planItemIdx: null, compensation: null, compensationKey: null, correction: null, audience: [],
      }, audit)
      .then((r) => ({ created: r.created, id: r.step.id }));
  }
  return store.setRunStatus(runId, null, i % 2 ? "RUNNING" : "UNWINDING", { ...audit, data: { worker, i } }).then((r) => r?.status);
});
const results = await Promise.all(jobs);
await client.$disconnect();
process.stdout.write(JSON.stringify(results) + "\\n");
`;

/** Starts `count` worker processes, releases them together once all are ready, returns their JSON outputs. */
async function inWorkers(count: number, args: string[]): Promise<unknown[]> {
  const script = path.join(dir, "store-worker.mts");
  writeFileSync(script, WORKER_SOURCE);
  return releasedTogether<unknown>("store worker", script, (i) => [url, String(i), ...args], count);
}

const system: AuditInput = { type: "test", actor: { type: "system", id: "integration" } };
let n = 0;

async function newRun(store: PrismaSagaStore): Promise<string> {
  n += 1;
  const runId = `run_it_${Date.now().toString(36)}_${n}`;
  await store.createRun({ id: runId, title: "integration", agent: "it", onBehalfOf: null, metadata: {} }, system);
  return runId;
}

function intent(runId: string, stepIdx: number, suffix: string): NewIntent {
  return {
    id: `stp_${runId}_${stepIdx}_${suffix}`,
    runId,
    stepIdx,
    tool: "create_ticket",
    toolClass: "COMPENSATABLE",
    stepKey: stepKey(runId, stepIdx, "create_ticket"),
    args: { subject: "Printer on fire", tags: ["p1"] },
    argsHash: "h",
    phase: "STAGING",
    policyVersion: 1,
    approvalId: null,
    planItemIdx: null,
    compensation: { tool: "close_ticket", args: { reason: "opened in error" } },
    compensationKey: null,
    correction: null,
    audience: ["support"],
  };
}

/**
 * Reads a step's status and key in a separate OS process through the raw driver (no Prisma), as the
 * worker or a crashed-and-restarted agent would see it.
 */
function readStepElsewhere(stepId: string): unknown {
  const require = createRequire(import.meta.url);
  const script =
    kind === "postgresql"
      ? "const pg = require(process.argv[1]); const c = new pg.Client({ connectionString: process.argv[2] });" +
        "c.connect().then(() => c.query('SELECT status, \"stepKey\" FROM \"Step\" WHERE id = $1', [process.argv[3]]))" +
        ".then((r) => { process.stdout.write(JSON.stringify(r.rows[0] ?? null)); return c.end(); });"
      : "const D = require(process.argv[1]); const db = new D(process.argv[2], { readonly: true });" +
        "const r = db.prepare('SELECT status, stepKey FROM Step WHERE id = ?').get(process.argv[3]);" +
        "process.stdout.write(JSON.stringify(r ?? null));";
  const driver = require.resolve(kind === "postgresql" ? "pg" : "better-sqlite3");
  const target = kind === "postgresql" ? url : sqliteFilePath(url);
  return JSON.parse(execFileSync(process.execPath, ["-e", script, driver, target, stepId], { encoding: "utf8" }));
}

describe(`PrismaSagaStore on ${label}: other connections and processes`, () => {
  it("an INTENDED row is visible to another connection and another process as soon as insertIntent resolves", async () => {
    const store = new PrismaSagaStore(await open());
    const reader = await open();
    const runId = await newRun(store);
    const { created, step } = await store.insertIntent(intent(runId, 0, "vis"), system);
    expect(created).toBe(true);

    const row = await reader.step.findUnique({ where: { id: step.id } });
    expect(row).toMatchObject({ status: "INTENDED", stepKey: step.stepKey });
    expect(readStepElsewhere(step.id)).toEqual({ status: "INTENDED", stepKey: step.stepKey });
  });

  it("concurrent inserts for one key from four processes make one row and one created:true", async () => {
    const store = new PrismaSagaStore(await open());
    const runId = await newRun(store);
    const outputs = await inWorkers(4, ["insert", runId, "5"]);
    const results = outputs.flatMap((o) => o as { created: boolean; id: string }[]);
    expect(results).toHaveLength(20);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(await store.listSteps(runId)).toHaveLength(1);
    expect((await store.listAuditEvents(runId)).map((e) => e.seq)).toEqual([1, 2]);
  });

  it("a writer whose cached chain head another connection moved past appends after the newer link", async () => {
    // Each store keeps the last link of the chains it wrote; here the other one appends in between.
    const a = new PrismaSagaStore(await open());
    const b = new PrismaSagaStore(await open());
    const runId = await newRun(a);
    for (let i = 0; i < 3; i++) {
      const { step } = await a.insertIntent(intent(runId, i, "cache"), system);
      await b.updateStep(step.id, { status: ["INTENDED"] }, { status: "CONFIRMED" }, system);
    }
    await b.updateStep(`stp_${runId}_2_cache`, { status: ["CONFIRMED"] }, { status: "COMPENSATED" }, system);
    const { step } = await a.insertIntent(intent(runId, 3, "cache"), system);
    await a.updateStep(step.id, { status: ["INTENDED"] }, { status: "CONFIRMED" }, system);
    const events = await expectChainIntact(a, runId);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
  });

  it("writers in four processes extend one audit chain without forks or snapshot conflicts", async () => {
    const store = new PrismaSagaStore(await open());
    const runId = await newRun(store);
    await inWorkers(4, ["status", runId, "10"]);
    const events = await expectChainIntact(store, runId);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
  });
});

describe(`PrismaSagaStore on ${label}: run versions`, () => {
  it("a run row whose version is ahead of the database clock still gets a later version on each change", async () => {
    const client = await open();
    const store = new PrismaSagaStore(client);
    const runId = await newRun(store);
    const ahead = new Date(Date.now() + 3_600_000); // as if another instance's clock ran an hour fast
    await client.run.update({ where: { id: runId }, data: { updatedAt: ahead } });
    const moved = await store.setRunStatus(runId, ["RUNNING"], "RUNNING", system);
    expect(moved?.updatedAt.getTime()).toBe(ahead.getTime() + 1);
    expect(await store.setRunStatus(runId, ["COMMITTING"], "COMPLETED", system)).toBeNull();
    const pivot = await store.createPivot(
      { id: `piv_${runId}`, runId, summary: "s", plan: [], planHash: "ph", stagedStepIds: [], deadline: null },
      system,
    );
    expect((await store.getRun(runId))?.updatedAt.getTime()).toBe(ahead.getTime() + 2);
    await store.decidePivot(pivot.id, { status: "REJECTED", decidedBy: "r@example.com", reason: null, expectedPlanHash: "ph" }, system);
    expect(await store.getRun(runId)).toMatchObject({ status: "RUNNING", updatedAt: new Date(ahead.getTime() + 3) });
  });
});

// What only one of the stores has.
if (kind === "sqlite") {
  describe("PrismaSagaStore on SQLite: durability and migrations", () => {
    it("runs every commit with synchronous=FULL in WAL mode", async () => {
      const client = await open();
      const [sync] = await client.$queryRawUnsafe<{ synchronous: bigint | number }[]>("PRAGMA synchronous");
      const [journal] = await client.$queryRawUnsafe<{ journal_mode: string }[]>("PRAGMA journal_mode");
      expect(Number(sync?.synchronous)).toBe(2);
      expect(journal?.journal_mode).toBe("wal");
    });

    it("migrateSqlite is idempotent and `prisma migrate deploy` sees its migrations as applied", () => {
      expect(migrateSqlite(sqliteFilePath(url)).applied).toEqual([]);
      // A file of its own: the schema engine wants the database to itself.
      const fresh = path.join(dir, "cli.db");
      const applied = migrateSqlite(fresh).applied;
      expect(applied.length).toBeGreaterThan(0);
      const prisma = path.join(process.cwd(), "node_modules", ".bin", "prisma");
      const out = execFileSync(prisma, ["migrate", "deploy"], {
        encoding: "utf8",
        env: { ...process.env, DATABASE_URL: `file:${fresh}`, CHECKPOINT_DISABLE: "1", PRISMA_HIDE_UPDATE_MESSAGE: "1" },
      });
      expect(out).toMatch(/No pending migrations to apply/);
      expect(out).toContain(`${applied.length} migration`);
    }, 60_000);
  });
}

if (kind === "postgresql") {
  describe("PrismaSagaStore on PostgreSQL: migrations", () => {
    it("migratePostgres is idempotent and records each migration in _prisma_migrations as `prisma migrate deploy` does", async () => {
      expect(await migratePostgres(database.directUrl)).toMatchObject({ applied: [] });
      const client = await open();
      const rows = await client.$queryRawUnsafe<
        { id: string; checksum: string; migration_name: string; finished_at: Date | null; rolled_back_at: Date | null; logs: string | null; applied_steps_count: number }[]
      >(`SELECT id, checksum, migration_name, finished_at, rolled_back_at, logs, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name`);
      const names = rows.map((r) => r.migration_name);
      expect(names.length).toBeGreaterThan(0);
      expect(names).toEqual(readdirSync(DEFAULT_POSTGRES_MIGRATIONS_DIR, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort());
      for (const row of rows) {
        expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(row.checksum).toBe(migrationChecksum(readFileSync(path.join(DEFAULT_POSTGRES_MIGRATIONS_DIR, row.migration_name, "migration.sql"))));
        expect(row.finished_at).toBeInstanceOf(Date);
        expect(row).toMatchObject({ rolled_back_at: null, logs: null, applied_steps_count: 1 });
      }
      // The table itself has Prisma's PostgreSQL shape (what `migrate deploy` reads and writes).
      const columns = await client.$queryRawUnsafe<{ column_name: string; data_type: string; is_nullable: string }[]>(
        // information_schema's types are domains over `name`, which Prisma's raw queries cannot read: cast.
        `SELECT column_name::text, data_type::text, is_nullable::text FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
      );
      expect(columns.map((c) => [c.column_name, c.data_type, c.is_nullable])).toEqual([
        ["id", "character varying", "NO"],
        ["checksum", "character varying", "NO"],
        ["finished_at", "timestamp with time zone", "YES"],
        ["migration_name", "character varying", "NO"],
        ["logs", "text", "YES"],
        ["rolled_back_at", "timestamp with time zone", "YES"],
        ["started_at", "timestamp with time zone", "NO"],
        ["applied_steps_count", "integer", "NO"],
      ]);
    });

    it("refuses to migrate through a pooler in transaction mode, and says to use the server's own URL", async () => {
      // Its session lock would stay on whichever server connection took it (the next migration waits forever).
      const pooled = new URL(database.directUrl);
      pooled.searchParams.set("pgbouncer", "true");
      await expect(migratePostgres(pooled.toString())).rejects.toThrow(/pooler in transaction mode \(pgbouncer=true\).*Set DATABASE_DIRECT_URL/);
    });

    it("two migrators started at once (two app instances) apply each migration once, under Prisma's migration lock", async () => {
      const fresh = reserveTestDatabase("store-migrators", "postgresql");
      await fresh.create({ migrate: false });
      try {
        const results = await Promise.all([migratePostgres(fresh.directUrl), migratePostgres(fresh.directUrl)]);
        const counts = results.map((r) => r.applied.length).sort();
        expect(counts[0]).toBe(0);
        expect(counts[1]).toBeGreaterThan(0);
        expect(results.map((r) => r.skipped.length).sort((a, b) => b - a)[0]).toBe(counts[1]);
      } finally {
        await fresh.drop();
      }
    });
  });
}
