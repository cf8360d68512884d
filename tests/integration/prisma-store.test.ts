/**
 * The store contract against PrismaSagaStore on a real SQLite file (fresh per test file), plus what
 * only a database can show: durability settings, visibility to other connections and processes,
 * and the write lock holding across connections.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateSqlite } from "@/lib/db/migrate";
import { openPrisma, type PrismaClient } from "@/lib/db/prisma";
import { PrismaSagaStore } from "@/lib/db/prisma-saga-store";
import { auditHash, stepKey } from "@/lib/saga/keys";
import { auditHashedContent, GENESIS_HASH, type AuditInput, type NewIntent } from "@/lib/saga/store";
import { describeSagaStoreContract } from "@/tests/contract/saga-store-contract";

const dir = mkdtempSync(path.join(os.tmpdir(), "sagaboard-store-"));
const dbFile = path.join(dir, "store.db");
const url = `file:${dbFile}`;
const opened: PrismaClient[] = [];

async function open(): Promise<PrismaClient> {
  const client = await openPrisma(url);
  opened.push(client);
  return client;
}

beforeAll(() => {
  expect(migrateSqlite(dbFile).applied.length).toBeGreaterThan(0);
});

afterAll(async () => {
  await Promise.all(opened.map((c) => c.$disconnect()));
  rmSync(dir, { recursive: true, force: true });
});

describeSagaStoreContract("PrismaSagaStore (SQLite)", async () => {
  const client = await openPrisma(url);
  return { store: new PrismaSagaStore(client), cleanup: () => client.$disconnect() };
});

// Cross-connection concurrency runs in separate processes, as the app, the worker and agents do.
// (Two connections to one file inside one process would deadlock: better-sqlite3 waits for a lock
// synchronously, so the connection holding it can never reach its COMMIT.)
const WORKER_SOURCE = `
import { createInterface } from "node:readline";
import { openPrisma } from ${JSON.stringify(path.join(process.cwd(), "lib/db/prisma.ts"))};
import { PrismaSagaStore } from ${JSON.stringify(path.join(process.cwd(), "lib/db/prisma-saga-store.ts"))};
import { stepKey } from ${JSON.stringify(path.join(process.cwd(), "lib/saga/keys.ts"))};
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
  const workers = Array.from({ length: count }, (_, i) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, url, String(i), ...args], { cwd: process.cwd() });
    let out = "";
    let err = "";
    let markReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.startsWith("ready\n")) markReady();
    });
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const done = new Promise<unknown>((resolve, reject) => {
      child.on("error", reject);
      child.on("exit", (code) => {
        if (code !== 0) return reject(new Error(`store worker ${i} exited with ${code}: ${err}`));
        resolve(JSON.parse(out.trim().split("\n").at(-1) ?? "null"));
      });
    });
    return { child, ready, done };
  });
  try {
    await Promise.race([
      Promise.all(workers.map((w) => w.ready)),
      Promise.all(workers.map((w) => w.done)), // a worker that dies before "ready" fails here
    ]);
    for (const w of workers) w.child.stdin.write("go\n");
    return await Promise.all(workers.map((w) => w.done));
  } catch (e) {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill();
    throw e;
  }
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

describe("PrismaSagaStore on SQLite", () => {
  it("runs every commit with synchronous=FULL in WAL mode", async () => {
    const client = await open();
    const [sync] = await client.$queryRawUnsafe<{ synchronous: bigint | number }[]>("PRAGMA synchronous");
    const [journal] = await client.$queryRawUnsafe<{ journal_mode: string }[]>("PRAGMA journal_mode");
    expect(Number(sync?.synchronous)).toBe(2);
    expect(journal?.journal_mode).toBe("wal");
  });

  it("an INTENDED row is visible to another connection and another process as soon as insertIntent resolves", async () => {
    const store = new PrismaSagaStore(await open());
    const reader = await open();
    const runId = await newRun(store);
    const { created, step } = await store.insertIntent(intent(runId, 0, "vis"), system);
    expect(created).toBe(true);

    const row = await reader.step.findUnique({ where: { id: step.id } });
    expect(row).toMatchObject({ status: "INTENDED", stepKey: step.stepKey });

    // A separate OS process with its own SQLite connection, as the worker or a crashed-and-restarted
    // agent would be.
    const require = createRequire(import.meta.url);
    const script =
      "const D = require(process.argv[1]); const db = new D(process.argv[2], { readonly: true });" +
      "const r = db.prepare('SELECT status, stepKey FROM Step WHERE id = ?').get(process.argv[3]);" +
      "process.stdout.write(JSON.stringify(r ?? null));";
    const out = execFileSync(process.execPath, ["-e", script, require.resolve("better-sqlite3"), dbFile, step.id], {
      encoding: "utf8",
    });
    expect(JSON.parse(out)).toEqual({ status: "INTENDED", stepKey: step.stepKey });
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

  it("writers in four processes extend one audit chain without forks or snapshot conflicts", async () => {
    const store = new PrismaSagaStore(await open());
    const runId = await newRun(store);
    await inWorkers(4, ["status", runId, "10"]);
    const events = await store.listAuditEvents(runId);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    events.forEach((e, i) => {
      expect(e.prevHash).toBe(i === 0 ? GENESIS_HASH : events[i - 1]?.hash);
      expect(auditHash(e.prevHash, auditHashedContent(e))).toBe(e.hash);
    });
  });

  it("migrateSqlite is idempotent and `prisma migrate deploy` sees its migrations as applied", () => {
    expect(migrateSqlite(dbFile).applied).toEqual([]);
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
