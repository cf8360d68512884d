/**
 * Subjects of the dispatch benches: the engine on an in-process Prisma store, the raw two-commit
 * baselines (better-sqlite3, pg) and DBOS Transact. Each "round" runs `steps` logged steps and
 * returns per-step latencies (ms).
 */
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import Database from "better-sqlite3";
import pg from "pg";
import type { PrismaClient } from "@/generated/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import type { SagaStore } from "@/packages/client/src/saga/store";
import { benchRegistry, fileOf, letterArgs, performance } from "./common";

export const STEPS_PER_RUN = 10;

export interface Round {
  /** Per-step latencies, ms. */
  latencies: number[];
  /** Wall time of the round, ms. */
  wallMs: number;
}

const id = (p: string) => `${p}_${randomBytes(8).toString("hex")}`;

/** The arguments of step `i` of `tool`: the no-op's counter, or a letter to one of ten people. */
export const benchArgs = (tool: string, i: number) => (tool === "bench_noop" ? { i } : letterArgs(i));

/** Engine over `store`: runs of STEPS_PER_RUN calls of `tool` (the no-op by default), one run after another; only the calls are timed. */
export async function engineRound(store: SagaStore, steps: number, tool = "bench_noop"): Promise<Round> {
  const engine = new SagaEngine({ store, registry: benchRegistry() });
  const latencies: number[] = [];
  const t0 = performance.now();
  for (let done = 0; done < steps; ) {
    const ctx = await engine.startRun({ title: "bench", agent: "bench" });
    for (let i = 0; i < STEPS_PER_RUN && done < steps; i++, done++) {
      const s = performance.now();
      const out = await ctx.call(tool, benchArgs(tool, done));
      latencies.push(performance.now() - s);
      if (out.status !== "ok") throw new Error(`bench step was not ok: ${JSON.stringify(out)}`);
    }
  }
  return { latencies, wallMs: performance.now() - t0 };
}

/** `runs` concurrent engine runs of `stepsPerRun` steps each (run creation included in the wall time). */
export async function engineConcurrent(store: SagaStore, runs: number, stepsPerRun: number): Promise<Round> {
  const engine = new SagaEngine({ store, registry: benchRegistry() });
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: runs }, async () => {
      const ctx = await engine.startRun({ title: "bench", agent: "bench" });
      for (let i = 0; i < stepsPerRun; i++) {
        const s = performance.now();
        await ctx.call("bench_noop", { i });
        latencies.push(performance.now() - s);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - t0 };
}

export function prismaStore(prisma: PrismaClient): PrismaSagaStore {
  return new PrismaSagaStore(prisma);
}

// ---------------------------------------------------------------------------------------------
// Raw two-commit baselines: INSERT the intent row (commit), UPDATE it to CONFIRMED (commit), on the
// real Step table (same indexes) of the same database.

const INSERT_STEP_SQL = (p: (n: number) => string) =>
  `INSERT INTO "Step" ("id","runId","stepIdx","tool","toolClass","stepKey","args","argsHash","status","phase","policyVersion","compensation","compensationKey","compensationState","audience","attempts","createdAt","updatedAt")
   VALUES (${p(1)},${p(2)},${p(3)},'bench_noop','COMPENSATABLE',${p(4)},${p(5)},${p(6)},'INTENDED','STAGING',1,${p(7)},${p(8)},'NONE',${p(9)},0,${p(10)},${p(10)})`;
const UPDATE_STEP_SQL = (p: (n: number) => string, from = "") =>
  `UPDATE "Step" SET "status"='CONFIRMED',"result"=${p(1)},"attempts"=1,"updatedAt"=${p(2)}${from} WHERE "id"=${p(3)} AND "status"='INTENDED'`;

/**
 * `write` (an INSERT or UPDATE of "Step" with `n` parameters) with an AuditEvent row appended in the
 * same statement, from the step it wrote: scope, seq, runId, type, data, prevHash, hash follow as
 * $n+1...$n+7.
 */
const linked = (write: string, n: number) =>
  `WITH s AS (${write} RETURNING "id") INSERT INTO "AuditEvent" ("scope","seq","runId","stepId","type","actor","data","at","prevHash","hash")
   SELECT $${n + 1}, $${n + 2}::int4, $${n + 3}, s."id", $${n + 4}, 'agent:bench', $${n + 5}::jsonb, now(), $${n + 6}, $${n + 7} FROM s`;

/** UPDATE_STEP_SQL committed with synchronous_commit off for its own transaction (it joins the one-row CTE). */
const RELAXED_UPDATE_STEP_SQL = `WITH relax AS (SELECT set_config('synchronous_commit', 'off', true) AS c) ${UPDATE_STEP_SQL((n) => `$${n}`, " FROM relax")}`;

export class RawSqlite {
  readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly update: Database.Statement;
  private readonly audit: Database.Statement;
  private readonly file: string;

  constructor(url: string) {
    this.file = fileOf(url);
    this.db = new Database(this.file, { timeout: 10_000 });
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    this.db.pragma("foreign_keys = ON");
    this.insert = this.db.prepare(INSERT_STEP_SQL(() => "?"));
    this.update = this.db.prepare(UPDATE_STEP_SQL(() => "?"));
    this.audit = this.db.prepare(`INSERT INTO "AuditEvent" ("scope","seq","runId","stepId","type","actor","data","at","prevHash","hash") VALUES (?,?,?,?,?,?,?,?,?,?)`);
  }

  private newRun(): string {
    const runId = id("run");
    const now = new Date().toISOString().replace("Z", "+00:00");
    this.db.prepare(`INSERT INTO "Run" ("id","title","agent","metadata","status","createdAt","updatedAt") VALUES (?,?,?,?,?,?,?)`).run(runId, "raw", "bench", "{}", "RUNNING", now, now);
    return runId;
  }

  /**
   * Per step: one commit for the intent, one for the outcome (autocommit statements). With
   * `auditLinks`, each commit is a transaction that also appends an AuditEvent row as the saga log's
   * chain does (the same columns, a 64-hex prevHash and hash): the floor of any log that keeps an audit
   * link per transition in the same commit, with none of the engine's reads, checks or hashing.
   */
  async round(steps: number, auditLinks = false): Promise<Round> {
    const latencies: number[] = [];
    const t0 = performance.now();
    let runId = "";
    let seq = 0;
    const link = (stepId: string, type: string, data: string, now: string) =>
      this.audit.run(`run:${runId}`, ++seq, runId, stepId, type, "agent:bench", data, now, randomBytes(32).toString("hex"), randomBytes(32).toString("hex"));
    for (let i = 0; i < steps; i++) {
      if (i % STEPS_PER_RUN === 0) {
        runId = this.newRun();
        seq = 0;
      }
      const s = performance.now();
      const stepId = id("stp");
      const now = new Date().toISOString().replace("Z", "+00:00");
      const intent = () => {
        this.insert.run(stepId, runId, i % STEPS_PER_RUN, id("key"), JSON.stringify({ i }), id("h"), JSON.stringify({ tool: "bench_undo", args: {} }), id("ck"), '["agent"]', now, now);
        if (auditLinks) link(stepId, "step.intended", JSON.stringify({ stepIdx: i % STEPS_PER_RUN, tool: "bench_noop", phase: "STAGING" }), now);
      };
      const outcome = () => {
        const at = new Date().toISOString().replace("Z", "+00:00");
        this.update.run("null", at, stepId);
        if (auditLinks) link(stepId, "step.confirmed", JSON.stringify({ stepIdx: i % STEPS_PER_RUN, externalRef: null }), at);
      };
      if (auditLinks) {
        this.db.transaction(intent).immediate();
        this.db.transaction(outcome).immediate();
      } else {
        intent();
        outcome();
      }
      latencies.push(performance.now() - s);
    }
    return { latencies, wallMs: performance.now() - t0 };
  }

  /** Database pages `fn` writes to the WAL (its frames), counted from an empty WAL. */
  async pagesWritten(fn: () => Promise<unknown>): Promise<number> {
    this.db.pragma("wal_checkpoint(TRUNCATE)");
    await fn();
    const bytes = statSync(`${this.file}-wal`).size;
    return bytes <= 32 ? 0 : (bytes - 32) / (24 + (this.db.pragma("page_size", { simple: true }) as number));
  }

  close(): void {
    this.db.close();
  }
}

export class RawPg {
  readonly pool: pg.Pool;

  constructor(url: string, max = 20) {
    this.pool = new pg.Pool({ connectionString: url, max });
  }

  private async newRun(client: pg.ClientBase | pg.Pool): Promise<string> {
    const runId = id("run");
    await client.query(`INSERT INTO "Run" ("id","title","agent","metadata","status","createdAt","updatedAt") VALUES ($1,'raw','bench','{}','RUNNING',now(),now())`, [runId]);
    return runId;
  }

  /**
   * One step: the intent commit, then the outcome commit (relaxed: `synchronous_commit = off` for the
   * outcome's transaction). With `auditLinks`, each commit's one statement also appends an AuditEvent
   * row as the saga log's chain does (a data-modifying CTE, the same columns, a 64-hex prevHash and
   * hash): the floor of any log that keeps an audit link per transition in the same commit, with none
   * of the engine's checks, lock or hashing.
   */
  async step(client: pg.ClientBase | pg.Pool, runId: string, idx: number, relaxed: boolean, auditLinks = false): Promise<void> {
    const stepId = id("stp");
    const link = (seq: number, type: string, data: string) => [`run:${runId}`, seq, runId, type, data, randomBytes(32).toString("hex"), randomBytes(32).toString("hex")];
    const insert = { name: "bench_insert", text: INSERT_STEP_SQL((n) => `$${n}`) };
    const insertValues = [stepId, runId, idx, id("key"), JSON.stringify({ i: idx }), id("h"), JSON.stringify({ tool: "bench_undo", args: {} }), id("ck"), '["agent"]', new Date()];
    if (auditLinks) {
      await client.query({ name: "bench_insert_linked", text: linked(insert.text, 10), values: [...insertValues, ...link(2 * idx + 1, "step.intended", JSON.stringify({ stepIdx: idx, tool: "bench_noop", phase: "STAGING" }))] });
      await client.query({ name: "bench_update_linked", text: linked(UPDATE_STEP_SQL((n) => `$${n}`), 3), values: ["null", new Date(), stepId, ...link(2 * idx + 2, "step.confirmed", JSON.stringify({ stepIdx: idx, externalRef: null }))] });
      return;
    }
    await client.query({ ...insert, values: insertValues });
    // Relaxed: the outcome is committed without waiting for the WAL flush (a lost outcome leaves
    // INTENDED), in the one statement as the engine does, not BEGIN/SET LOCAL/UPDATE/COMMIT.
    const update = relaxed ? { name: "bench_update_relaxed", text: RELAXED_UPDATE_STEP_SQL } : { name: "bench_update", text: UPDATE_STEP_SQL((n) => `$${n}`) };
    await client.query({ ...update, values: ["null", new Date(), stepId] });
  }

  async round(steps: number, relaxed = false, auditLinks = false): Promise<Round> {
    const client = await this.pool.connect();
    try {
      const latencies: number[] = [];
      const t0 = performance.now();
      let runId = "";
      for (let i = 0; i < steps; i++) {
        if (i % STEPS_PER_RUN === 0) runId = await this.newRun(client);
        const s = performance.now();
        await this.step(client, runId, i % STEPS_PER_RUN, relaxed, auditLinks);
        latencies.push(performance.now() - s);
      }
      return { latencies, wallMs: performance.now() - t0 };
    } finally {
      client.release();
    }
  }

  /** `runs` concurrent runs of `stepsPerRun` two-commit steps over the pool. */
  async concurrent(runs: number, stepsPerRun: number, auditLinks = false): Promise<Round> {
    const latencies: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: runs }, async () => {
        const runId = await this.newRun(this.pool);
        for (let i = 0; i < stepsPerRun; i++) {
          const s = performance.now();
          await this.step(this.pool, runId, i, false, auditLinks);
          latencies.push(performance.now() - s);
        }
      }),
    );
    return { latencies, wallMs: performance.now() - t0 };
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}
