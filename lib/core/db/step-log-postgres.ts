/**
 * The saga log's hot writes on PostgreSQL (see lib/core/db/step-log-sql.ts): ONE statement per write, so
 * one round trip and one commit: data-modifying CTEs insert or update the step, then take the chain's
 * advisory lock and append the audit link (the same lock lib/core/db/audit-chain.ts takes, in the same
 * order: row first, then lock, so the two paths cannot deadlock; a Prisma writer of the same chain
 * waits for this statement and then reads its link). The intent guard and the step fence are part of
 * the statement's WHERE (the fence's SQL is shared with SQLite: `fenceConditions`; the same checks in
 * code, packages/client/src/saga/intent-guard.ts). Two things are known before the statement instead of read in it,
 * because the link's hash covers them:
 * - the chain's last link, cached per chain after each append this process makes; a stale entry
 *   (another process appended since) makes the insert of the link fail on the (scope, seq) unique
 *   index, which rolls the whole statement back, and the write is retried after reading the link;
 * - the time: the database clock, through an offset measured against clock_timestamp() (error under
 *   half a round trip) and measured again every minute.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import type { Run as RunRow, Step as StepRow } from "@/generated/prisma";
import { runScope, type IntentGuard } from "@/packages/client/src/saga/store";
import type { ToolTableRow } from "@/packages/client/src/saga/tool-table";
import { UNSETTLED_STATUSES } from "@/packages/client/src/saga/vocabulary";
import { ADVISORY_LOCK_SPACE, advisoryKey, auditChainLock } from "./dialect";
import type { DatabaseObserver } from "./raw-driver";
import { PG_UTC_TYPES } from "./raw-read";
import {
  activeTokenSql,
  AUDIT_COLUMNS,
  columnValue,
  DATE_COLUMNS,
  fenceConditions,
  JSON_COLUMNS,
  nextLink,
  numberedParams,
  Recent,
  RUN_COLUMNS,
  TOOL_ROW_SQL,
  setColumns,
  STEP_COLUMNS,
  type Durability,
  type HotAudit,
  type HotFence,
  type HotInsertResult,
  type Link,
  type StepColumns,
  type StepLogSql,
} from "./step-log-sql";

function pgValue(column: string, value: unknown): unknown {
  return columnValue(column, value, (d) => d.toISOString());
}

function pgCast(column: string): string {
  if (JSON_COLUMNS.has(column)) return "::jsonb";
  if (DATE_COLUMNS.has(column)) return "::timestamp(3)";
  if (column === "stepIdx" || column === "policyVersion" || column === "planItemIdx" || column === "attempts") return "::int4";
  return "::text";
}

const RUN_INSERT_SQL = prepared(`WITH run AS (
    INSERT INTO "Run" (${RUN_COLUMNS.map((c) => `"${c}"`).join(",")})
    VALUES ($1::text, $2::text, $3::text, $4::text, $5::jsonb, $6::text, $7::timestamp(3), $8::timestamp(3))
    ON CONFLICT DO NOTHING
    RETURNING "id"
  ), link AS (
    INSERT INTO "AuditEvent" (${AUDIT_COLUMNS})
    SELECT $9::text, $10::int4, $11::text, $12::text, $13::text, $14::text, $15::jsonb, $16::timestamp(3), $17::text, $18::text FROM run
  )
  SELECT count(*)::int AS "inserted" FROM run`);

const STEP_INSERT_COLUMNS = STEP_COLUMNS.map((c) => `"${c}"`).join(",");
const STEP_INSERT_PARAMS = STEP_COLUMNS.map((c, i) => `$${i + 1}${pgCast(c)}`).join(",");
const LINK_CASTS = ["::text", "::int4", "::text", "::text", "::text", "::text", "::jsonb", "::timestamp(3)", "::text", "::text"] as const;

/** A link's values in AUDIT_COLUMNS order. */
function linkValues(link: ReturnType<typeof nextLink>, at: Date): unknown[] {
  return [link.scope, link.seq, link.runId, link.stepId, link.type, link.actor, JSON.stringify(link.data), at.toISOString(), link.prevHash, link.hash];
}

/**
 * The statement that inserts an intent if its run holds the guard, with the chain's next link, and
 * its values. The statement has one text per guard shape (which checks it makes; whether the step is
 * the run's first), with no "param IS NULL OR ..." branches, so one plan is right for every call of a
 * shape: a custom plan is no cheaper than the generic one, and PostgreSQL keeps the generic plan after
 * its five trial plans (tests/integration/step-log-sql.test.ts checks it does). A single text for all
 * shapes was re-planned at every call: in a custom plan its unused checks fold away, so the generic
 * plan always looked dearer (measured with npm run bench). Every check names the run by its id parameter, never by the
 * row, so each subquery is a one-time lookup (an InitPlan), never a hashed SubPlan over a whole table.
 */
function intentInsert(row: StepRow, runId: string, link: ReturnType<typeof nextLink>, at: Date, lockKey: number, guard: IntentGuard | undefined): { sql: Prepared; values: unknown[] } {
  const p = numberedParams();
  p.values.push(...STEP_COLUMNS.map((c) => pgValue(c, row[c]))); // $1.. in STEP_INSERT_PARAMS
  const run = p.one(runId, "::text");
  const checks = [`r."id" = ${run}`];
  if (guard) {
    checks.push(p.anyOf(`r."status"`, guard.runStatus, "::text"));
    if (guard.runUpdatedAt) checks.push(`r."updatedAt" = ${p.one(guard.runUpdatedAt.toISOString(), "::timestamp(3)")}`);
    if (guard.appendOnly) {
      const idx = p.one(row.stepIdx, "::int4");
      checks.push(`NOT EXISTS (SELECT 1 FROM "Step" s WHERE s."runId" = ${run} AND (s."stepIdx" >= ${idx} OR ${p.anyOf(`s."status"`, UNSETTLED_STATUSES, "::text")}))`);
      if (row.stepIdx !== 0) checks.push(`EXISTS (SELECT 1 FROM "Step" s WHERE s."runId" = ${run} AND s."stepIdx" = ${idx} - 1)`);
    }
    if (guard.noPivot) checks.push(`NOT EXISTS (SELECT 1 FROM "Pivot" v WHERE v."runId" = ${run})`);
    if (guard.runAgent !== undefined) checks.push(`r."agent" = ${p.one(guard.runAgent, "::text")}`);
    if (guard.toolPolicy) {
      const { name, toolClass, policyVersion } = guard.toolPolicy;
      checks.push(`EXISTS (SELECT 1 FROM "ToolPolicy" t WHERE t."name" = ${p.one(name, "::text")} AND t."toolClass" = ${p.one(toolClass, "::text")} AND t."policyVersion" = ${p.one(policyVersion, "::int4")})`);
    }
    if (guard.activeToken !== undefined) checks.push(activeTokenSql(p, guard.activeToken));
  }
  const lock = p.one(lockKey, "::int4");
  const linkParams = linkValues(link, at).map((v, i) => p.one(v, LINK_CASTS[i]!));
  const text = `WITH run AS (
      SELECT r."id" FROM "Run" r WHERE ${checks.join("\n        AND ")}
    ), step AS (
      INSERT INTO "Step" (${STEP_INSERT_COLUMNS})
      SELECT ${STEP_INSERT_PARAMS} FROM run
      ON CONFLICT DO NOTHING
      RETURNING "id"
    ), lock AS (
      SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_SPACE}::int4, ${lock}) AS locked FROM step
    ), link AS (
      INSERT INTO "AuditEvent" (${AUDIT_COLUMNS})
      SELECT ${linkParams.join(", ")} FROM lock
    )
    SELECT (SELECT count(*) FROM run)::int AS "runOk", (SELECT count(*) FROM step)::int AS "inserted"`;
  return { sql: preparedOnce(intentStatements, text), values: p.values };
}

/** The intent insert's statement per guard shape (a handful in practice), by text. */
const intentStatements = new Recent<Prepared>(200);

/** The statement already prepared for `text`, or a new one (kept in `cache`). */
function preparedOnce(cache: Recent<Prepared>, text: string): Prepared {
  let sql = cache.get(text);
  if (!sql) cache.set(text, (sql = prepared(text)));
  return sql;
}

/** The fenced step updates, by text: one per shape (the columns set, which fences, relaxed or not), a handful in practice. */
const updateStatements = new Recent<Prepared>(200);

/**
 * The fenced UPDATE of a step with its link, and its values: the columns, updatedAt, the id, the
 * fences, the lock key, the link.
 */
function stepUpdate(stepId: string, runId: string, columns: readonly string[], set: StepColumns, fence: HotFence, now: Date, lockKey: number, link: ReturnType<typeof nextLink>, relaxed: boolean): { sql: Prepared; values: unknown[] } {
  const p = numberedParams();
  const sets = columns.map((c) => `"${c}" = ${p.one(pgValue(c, set[c as keyof StepColumns]), pgCast(c))}`);
  sets.push(`"updatedAt" = ${p.one(now.toISOString(), pgCast("updatedAt"))}`);
  const where = fenceConditions(p, stepId, fence, runId);
  const relax = relaxed ? `relax AS (SELECT set_config('synchronous_commit', 'off', true) AS c), ` : "";
  const lock = p.one(lockKey, "::int4");
  const linkParams = linkValues(link, now).map((v, i) => p.one(v, LINK_CASTS[i]!));
  const text = `WITH ${relax}updated AS (
      UPDATE "Step" SET ${sets.join(", ")} WHERE ${where.join(" AND ")} RETURNING *
    ), lock AS (
      SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_SPACE}::int4, ${lock}) AS locked FROM updated${relax ? ", relax" : ""}
    ), link AS (
      INSERT INTO "AuditEvent" (${AUDIT_COLUMNS})
      SELECT ${linkParams.join(", ")}
      FROM lock
    )
    SELECT * FROM updated`;
  return { sql: preparedOnce(updateStatements, text), values: p.values };
}

const LAST_LINK_SQL = prepared(`SELECT "seq", "hash" FROM "AuditEvent" WHERE "scope" = $1 ORDER BY "seq" DESC LIMIT 1`);
const EXISTING_STEP_SQL = prepared(`SELECT * FROM "Step" WHERE "stepKey" = $1 OR ("runId" = $2 AND "stepIdx" = $3::int4) ORDER BY "createdAt" LIMIT 1`);
const RUN_EXISTS_SQL = prepared(`SELECT 1 FROM "Run" WHERE "id" = $1`);
const RUN_OF_STEP_SQL = prepared(`SELECT "runId" FROM "Step" WHERE "id" = $1`);
const TOOL_ROW = prepared(TOOL_ROW_SQL("$1"));
const CLOCK_SQL = prepared(`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::text AS ms`);

/** A statement's text and the name it is prepared under (the server plans it once per connection). */
interface Prepared {
  text: string;
  name: string;
}

function prepared(text: string): Prepared {
  return { text, name: `sb_${createHash("sha256").update(text).digest("hex").slice(0, 16)}` };
}

function isUniqueViolation(e: unknown, constraint: string): boolean {
  const err = e as { code?: string; constraint?: string };
  return err?.code === "23505" && err.constraint === constraint;
}

const CLOCK_REMEASURE_MS = 60_000;

export class PostgresStepLog implements StepLogSql {
  private readonly lastLinks = new Recent<Link>(10_000);
  private readonly runOfStep = new Recent<string>(100_000);
  private readonly lockKeys = new Recent<number>(10_000);
  /** The tail of this process's pending writes per chain. */
  private readonly chainQueues = new Map<string, Promise<void>>();
  private clock: { offsetMs: number; measuredAt: number } | null = null;

  constructor(
    private readonly pool: pg.Pool,
    private readonly observer: DatabaseObserver | undefined,
  ) {}

  /** The statement as pg sends it, named so each connection prepares it once (behind a transaction pooler the pool's connections drop the name: lib/core/db/postgres-pool.ts). */
  private statement(sql: Prepared, values: unknown[]): pg.QueryConfig {
    return { name: sql.name, text: sql.text, values, types: PG_UTC_TYPES };
  }

  /** Runs one statement; a write on the pool is its own transaction (on a PoolClient it is inside underChainLock's). */
  private async query<R extends pg.QueryResultRow>(sql: Prepared, values: unknown[], db: pg.Pool | pg.PoolClient = this.pool, write = false): Promise<pg.QueryResult<R>> {
    this.observer?.statement?.({ sql: sql.text, via: "driver" });
    const result = await db.query<R>(this.statement(sql, values));
    if (write && db === this.pool) this.observer?.commit?.();
    return result;
  }

  async toolRow(name: string): Promise<ToolTableRow | null> {
    const { rows } = await this.query<ToolTableRow & pg.QueryResultRow>(TOOL_ROW, [name]);
    return rows[0] ?? null;
  }

  /** The database clock through a measured offset (see the module comment). */
  async now(): Promise<Date> {
    if (!this.clock || Date.now() - this.clock.measuredAt > CLOCK_REMEASURE_MS) {
      const sent = Date.now();
      const { rows } = await this.query<{ ms: string }>(CLOCK_SQL, []);
      const received = Date.now();
      this.clock = { offsetMs: Number(rows[0]!.ms) - (sent + received) / 2, measuredAt: received };
    }
    return new Date(Math.round(Date.now() + this.clock.offsetMs));
  }

  private async lastLink(runId: string): Promise<Link | undefined> {
    const cached = this.lastLinks.get(runId);
    if (cached) return cached;
    const { rows } = await this.query<Link>(LAST_LINK_SQL, [runScope(runId)]);
    return rows[0];
  }

  noteLink(runId: string, link: Link): void {
    this.lastLinks.set(runId, link);
  }

  /**
   * Runs one write statement built for the chain's last link. This process's writes to one chain go
   * one at a time (so they never race each other); when another process appended meanwhile, the
   * statement fails on the (scope, seq) index, and the write is redone in a transaction that takes the
   * chain's lock first and reads the last link under it (every appender appends under that lock, so
   * that attempt cannot be stale).
   */
  private withLink<T>(runId: string, write: (db: pg.Pool | pg.PoolClient, last: Link | undefined) => Promise<{ result: T; appended: Link | null }>): Promise<T> {
    const previous = this.chainQueues.get(runId) ?? Promise.resolve();
    const run = previous.then(async () => {
      let outcome: { result: T; appended: Link | null };
      try {
        outcome = await write(this.pool, await this.lastLink(runId));
      } catch (e) {
        if (!isUniqueViolation(e, "AuditEvent_scope_seq_key")) throw e;
        this.lastLinks.delete(runId);
        outcome = await this.underChainLock(runId, write);
      }
      if (outcome.appended) this.lastLinks.set(runId, outcome.appended);
      return outcome.result;
    });
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.chainQueues.set(runId, settled);
    void settled.then(() => {
      if (this.chainQueues.get(runId) === settled) this.chainQueues.delete(runId);
    });
    return run;
  }

  private async underChainLock<T>(runId: string, write: (db: pg.PoolClient, last: Link | undefined) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const sent = (sql: string) => this.observer?.statement?.({ sql, via: "driver" });
    try {
      sent("BEGIN");
      await client.query("BEGIN");
      const lock = `SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_SPACE}::int4, $1::int4)`;
      sent(lock);
      await client.query(lock, [this.lockKey(runId)]);
      sent(LAST_LINK_SQL.text);
      const { rows } = await client.query<Link>(this.statement(LAST_LINK_SQL, [runScope(runId)]));
      const result = await write(client, rows[0]);
      sent("COMMIT");
      await client.query("COMMIT");
      this.observer?.commit?.();
      return result;
    } catch (e) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }

  private lockKey(runId: string): number {
    let key = this.lockKeys.get(runId);
    if (key === undefined) this.lockKeys.set(runId, (key = advisoryKey(auditChainLock(runScope(runId)))));
    return key;
  }

  async createRun(build: (now: Date) => RunRow, audit: Omit<HotAudit, "runId" | "stepId">): ReturnType<StepLogSql["createRun"]> {
    const now = await this.now();
    const row = build(now);
    // A new run's chain is empty: its first link needs no lock and no read (nobody else knows the id
    // until this commits). Links already in that scope fail the (scope, seq) index.
    const link = nextLink(undefined, { ...audit, runId: row.id, stepId: null }, now);
    try {
      const { rows } = await this.query<{ inserted: number }>(RUN_INSERT_SQL, [
        row.id, row.title, row.agent, row.onBehalfOf, JSON.stringify(row.metadata), row.status, row.createdAt.toISOString(), row.updatedAt.toISOString(),
        ...linkValues(link, now),
      ], this.pool, true);
      if (rows[0]?.inserted !== 1) return { kind: "exists" };
    } catch (e) {
      if (isUniqueViolation(e, "AuditEvent_scope_seq_key")) return { kind: "chain-exists" };
      throw e;
    }
    this.lastLinks.set(row.id, { seq: link.seq, hash: link.hash });
    return { kind: "created", row };
  }

  async insertIntent(runId: string, build: (now: Date) => StepRow, audit: Omit<HotAudit, "runId">, guard: IntentGuard | undefined): Promise<HotInsertResult> {
    const now = await this.now();
    const row = build(now);
    const attempt = await this.withLink(runId, async (db, last) => {
      const link = nextLink(last, { ...audit, runId }, now);
      const { sql, values } = intentInsert(row, runId, link, now, this.lockKey(runId), guard);
      const { rows } = await this.query<{ runOk: number; inserted: number }>(sql, values, db, true);
      const inserted = rows[0]?.inserted === 1;
      return { result: { inserted, runOk: rows[0]?.runOk === 1 }, appended: inserted ? { seq: link.seq, hash: link.hash } : null };
    });
    if (attempt.inserted) {
      this.runOfStep.set(row.id, runId);
      return { kind: "created", row };
    }
    // Nothing written: the key's row exists (the answer, whatever the guard says), or the run is missing
    // or fenced, or the id is another step's.
    const { rows } = await this.query<StepRow>(EXISTING_STEP_SQL, [row.stepKey, runId, row.stepIdx]);
    if (rows[0]) return { kind: "exists", row: rows[0] };
    if (attempt.runOk) return { kind: "id-taken" };
    const run = await this.query(RUN_EXISTS_SQL, [runId]);
    return run.rowCount === 0 ? { kind: "no-run" } : { kind: "guard-failed" };
  }

  async updateStep(stepId: string, fence: HotFence, set: StepColumns, audit: Omit<HotAudit, "runId" | "stepId">, durability: Durability): Promise<StepRow | null> {
    let runId = this.runOfStep.get(stepId);
    if (!runId) {
      const { rows } = await this.query<{ runId: string }>(RUN_OF_STEP_SQL, [stepId]);
      if (!rows[0]) return null;
      runId = rows[0].runId;
      this.runOfStep.set(stepId, runId);
    }
    const known = runId;
    const columns = setColumns(set);
    const now = await this.now();
    return this.withLink(known, async (db, last) => {
      const link = nextLink(last, { ...audit, runId: known, stepId }, now);
      const { sql, values } = stepUpdate(stepId, known, columns, set, fence, now, this.lockKey(known), link, durability === "relaxed");
      const { rows } = await this.query<StepRow>(sql, values, db, true);
      const row = rows[0] ?? null;
      return { result: row, appended: row ? { seq: link.seq, hash: link.hash } : null };
    });
  }
}
