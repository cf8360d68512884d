/**
 * The saga log's two hot writes in the drivers' own SQL: recording an intent (INSERT the INTENDED row)
 * and recording a step's transition (fenced UPDATE), each with the next link of the run's audit chain
 * in the same transaction. Every logged tool call makes exactly these two writes, so they bypass the
 * ORM (Prisma's query planning costs more CPU per statement than the commit itself); every
 * other store operation stays on Prisma (lib/db/prisma-saga-store.ts), and the tables are still the
 * ones prisma/schema.prisma defines (tests/integration/step-log-sql.test.ts writes through both paths
 * and compares the rows).
 *
 * SQLite: one `BEGIN IMMEDIATE` transaction on the adapter's own connection while the client is idle
 * (lib/db/raw-driver.ts), with the database clock and the chain's last link read inside it; all of it
 * is synchronous, like better-sqlite3.
 *
 * PostgreSQL: ONE statement per write, so one round trip and one commit: data-modifying CTEs insert
 * or update the step, then take the chain's advisory lock and append the audit link (the same lock
 * lib/db/audit-chain.ts takes, in the same order: row first, then lock, so the two paths cannot
 * deadlock; a Prisma writer of the same chain waits for this statement and then reads its link). The
 * guard of an intent is part of the statement's WHERE. Two things are known
 * before the statement instead of read in it, because the link's hash covers them:
 * - the chain's last link, cached per chain after each append this process makes; a stale entry
 *   (another process appended since) makes the insert of the link fail on the (scope, seq) unique
 *   index, which rolls the whole statement back, and the write is retried after reading the link;
 * - the time: the database clock, through an offset measured against clock_timestamp() (error under
 *   half a round trip) and measured again every minute.
 *
 * Durability "relaxed" (SAGABOARD_DURABILITY=relaxed): the outcome write (a transition out of INTENDED)
 * commits without waiting for the flush (PostgreSQL: synchronous_commit=off for that transaction;
 * SQLite: synchronous=NORMAL for it). A crash may lose that outcome: the row stays INTENDED and the next
 * call at that step reconciles it against the real system, as after any crash between call and record.
 * Intents are always durable.
 */
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import pg from "pg";
import type { Run as RunRow, Step as StepRow } from "@/generated/prisma";
import { runScope, type IntentGuard } from "@/lib/saga/store";
import type { Json } from "@/lib/saga/tools";
import { UNSETTLED_STATUSES } from "@/lib/saga/vocabulary";
import { chainLink, type ChainHead } from "./audit-chain";
import { ADVISORY_LOCK_SPACE, advisoryKey, auditChainLock } from "./dialect";
import type { RawDriver } from "./raw-driver";

/**
 * What the hot path sent, for the benchmark's durable-commit count (npm run bench): write transactions
 * it committed (each autocommit write statement is one) and statements it ran, reads included.
 * Process-wide; only ever added to.
 */
export const stepLogCounters = { transactions: 0, statements: 0 };

/** Whether outcome writes wait for the flush. */
export type Durability = "durable" | "relaxed";

/** SAGABOARD_DURABILITY: `durable` (default) or `relaxed`. */
export function durabilityFromEnv(value: string | undefined = process.env.SAGABOARD_DURABILITY): Durability {
  if (value === undefined || value === "" || value === "durable") return "durable";
  if (value === "relaxed") return "relaxed";
  throw new Error(`SAGABOARD_DURABILITY is "${value}"; use "durable" (the default: every commit is flushed) or "relaxed" (outcomes are not).`);
}

/** A Step column's value as the store writes it: JSON columns take JSON, date columns Dates. */
export type StepColumns = { [K in keyof StepRow]?: K extends JsonColumn ? Json : StepRow[K] };

type JsonColumn = "args" | "result" | "error" | "compensation" | "compensationError" | "correction" | "audience" | "manualRepair";
const JSON_COLUMNS: ReadonlySet<string> = new Set<JsonColumn>(["args", "result", "error", "compensation", "compensationError", "correction", "audience", "manualRepair"]);
/** JSON columns that are NOT NULL: a JSON null there is the JSON value `null`, elsewhere it is SQL NULL. */
const REQUIRED_JSON_COLUMNS: ReadonlySet<string> = new Set<JsonColumn>(["args", "audience"]);
const DATE_COLUMNS: ReadonlySet<string> = new Set(["compensationRequestedAt", "compensationConfirmedAt", "createdAt", "updatedAt"]);

/** Whether `column` holds JSON, and whether it is NOT NULL (for Prisma's JsonNull/DbNull choice). */
export function jsonColumnKind(column: string): "required" | "nullable" | null {
  if (!JSON_COLUMNS.has(column)) return null;
  return REQUIRED_JSON_COLUMNS.has(column) ? "required" : "nullable";
}

/** The audit link a hot write appends (the chain and the time are filled in by the write). */
export interface HotAudit {
  runId: string;
  /** Null for events about the run itself. */
  stepId: string | null;
  type: string;
  /** `agent:x`: actorLabel(actor). */
  actor: string;
  data: Json;
}

/** What recording an intent did. */
export type HotInsertResult =
  | { kind: "created"; row: StepRow }
  | { kind: "exists"; row: StepRow }
  | { kind: "guard-failed" }
  | { kind: "no-run" }
  | { kind: "id-taken" };

/** The fence of a step transition (see StepFence). */
export interface HotFence {
  status?: readonly string[] | null;
  compensationState?: readonly string[] | null;
  tools?: readonly string[] | null;
  runAgent?: string | null;
  activeToken?: string | null;
}

/** An id (or chain) cache that forgets its oldest entries past `max`. */
class Recent<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    return this.map.get(key);
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }
  delete(key: string): void {
    this.map.delete(key);
  }
}

type Link = ChainHead;

/** The next link of a run's chain whose last link is `last`, with its hash. */
function nextLink(last: Link | undefined, audit: HotAudit, at: Date) {
  return chainLink(last, { ...audit, scope: runScope(audit.runId) }, at);
}

const STEP_COLUMNS = [
  "id", "runId", "stepIdx", "tool", "toolClass", "stepKey", "args", "argsHash", "status", "phase", "policyVersion", "approvalId",
  "planItemIdx", "externalRef", "result", "error", "compensation", "compensationKey", "compensationState", "compensationRef",
  "compensationRequestedAt", "compensationConfirmedAt", "compensationError", "correction", "audience", "attempts", "createdAt", "updatedAt",
] as const satisfies readonly (keyof StepRow)[];

const AUDIT_COLUMNS = `"scope","seq","runId","stepId","type","actor","data","at","prevHash","hash"`;

/** The agent token (by id) exists and is not revoked. */
const ACTIVE_TOKEN_SQL = `SELECT 1 FROM "AgentToken" k WHERE k."id" = ? AND k."revokedAt" IS NULL`;

const RUN_COLUMNS = ["id", "title", "agent", "onBehalfOf", "metadata", "status", "createdAt", "updatedAt"] as const satisfies readonly (keyof RunRow)[];

/** Writes the saga log's hot path for one Prisma client's database. */
export interface StepLogSql {
  /**
   * Starts a run: its row built by `row(now)` and the first link of its chain, in one transaction.
   * "exists": a run with that id exists (nothing written); "chain-exists": the run's chain already
   * has links without the run (nothing written; the careful path appends under the chain lock).
   */
  createRun(row: (now: Date) => RunRow, audit: Omit<HotAudit, "runId" | "stepId">): Promise<{ kind: "created"; row: RunRow } | { kind: "exists" } | { kind: "chain-exists" }>;
  /** Records an intent built by `row(now)`; `now` is the database clock. */
  insertIntent(runId: string, row: (now: Date) => StepRow, audit: Omit<HotAudit, "runId">, guard: IntentGuard | undefined): Promise<HotInsertResult>;
  /** Applies `set` to the step if it matches `fence`; the updated row, or null when fenced out. */
  updateStep(stepId: string, fence: HotFence, set: StepColumns, audit: Omit<HotAudit, "runId" | "stepId">, durability: Durability): Promise<StepRow | null>;
  /** Tells the cache that the chain of `runId` now ends at this link (the Prisma path appended it). */
  noteLink(runId: string, link: Link): void;
  /** The database clock without a round trip (PostgreSQL: the measured offset; SQLite: the same OS clock). */
  now(): Promise<Date>;
}

export function stepLogSql(driver: RawDriver): StepLogSql {
  return driver.kind === "sqlite" ? new SqliteStepLog(driver.exclusive) : new PostgresStepLog(driver.pool);
}

// ---------------------------------------------------------------------------------------------
// SQLite

function sqliteDate(d: Date): string {
  return d.toISOString().replace("Z", "+00:00"); // the adapter's format
}

function sqliteValue(column: string, value: unknown): unknown {
  if (value === undefined) throw new Error(`Step column ${column} has no value.`);
  if (JSON_COLUMNS.has(column)) return value === null && !REQUIRED_JSON_COLUMNS.has(column) ? null : JSON.stringify(value);
  if (DATE_COLUMNS.has(column)) return value === null ? null : sqliteDate(value as Date);
  return value;
}

/** A Step row as better-sqlite3 returns it, in Prisma's shape. */
function stepFromSqlite(raw: Record<string, unknown>): StepRow {
  const out: Record<string, unknown> = { ...raw };
  for (const c of JSON_COLUMNS) out[c] = raw[c] === null ? null : JSON.parse(raw[c] as string);
  for (const c of DATE_COLUMNS) out[c] = raw[c] === null ? null : new Date(raw[c] as string);
  return out as unknown as StepRow;
}

const SQLITE_RUN_INSERT = `INSERT INTO "Run" (${RUN_COLUMNS.map((c) => `"${c}"`).join(",")}) VALUES (${RUN_COLUMNS.map(() => "?").join(",")}) ON CONFLICT DO NOTHING`;

class SqliteStepLog implements StepLogSql {
  private readonly statements = new WeakMap<Database.Database, Map<string, Database.Statement>>();

  constructor(private readonly exclusive: <T>(fn: (db: Database.Database) => T) => Promise<T>) {}

  /** The prepared statement for `sql` (each call is followed by one execution). */
  private stmt(db: Database.Database, sql: string): Database.Statement {
    stepLogCounters.statements++;
    let cache = this.statements.get(db);
    if (!cache) this.statements.set(db, (cache = new Map()));
    let s = cache.get(sql);
    // The adapter reads integers as BigInt on its connection; these columns (seq, stepIdx...) fit a number.
    if (!s) cache.set(sql, (s = db.prepare(sql).safeIntegers(false)));
    return s;
  }

  private dbNow(db: Database.Database): Date {
    const { now } = this.stmt(db, `SELECT strftime('%Y-%m-%dT%H:%M:%fZ','now') AS now`).get() as { now: string };
    return new Date(now);
  }

  private appendLink(db: Database.Database, audit: HotAudit, at: Date): void {
    const last = this.stmt(db, `SELECT "seq", "hash" FROM "AuditEvent" WHERE "scope" = ? ORDER BY "seq" DESC LIMIT 1`).get(runScope(audit.runId)) as Link | undefined;
    const link = nextLink(last, audit, at);
    this.stmt(db, `INSERT INTO "AuditEvent" (${AUDIT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)`).run(
      link.scope, link.seq, link.runId, link.stepId, link.type, link.actor, JSON.stringify(link.data), sqliteDate(at), link.prevHash, link.hash,
    );
  }

  private existing(db: Database.Database, runId: string, row: StepRow): StepRow | null {
    const raw = this.stmt(db, `SELECT * FROM "Step" WHERE "stepKey" = ? OR ("runId" = ? AND "stepIdx" = ?) ORDER BY "createdAt" LIMIT 1`).get(row.stepKey, runId, row.stepIdx) as
      | Record<string, unknown>
      | undefined;
    return raw ? stepFromSqlite(raw) : null;
  }

  private guardHolds(db: Database.Database, runId: string, stepIdx: number, guard: IntentGuard, run: { status: string; updatedAt: string; agent: string }): boolean {
    if (!guard.runStatus.includes(run.status as never)) return false;
    if (guard.runAgent !== undefined && guard.runAgent !== run.agent) return false;
    if (guard.toolPolicy) {
      const { name, toolClass, policyVersion } = guard.toolPolicy;
      if (!this.stmt(db, `SELECT 1 FROM "ToolPolicy" WHERE "name" = ? AND "toolClass" = ? AND "policyVersion" = ?`).get(name, toolClass, policyVersion)) return false;
    }
    if (guard.runUpdatedAt && new Date(run.updatedAt).getTime() !== guard.runUpdatedAt.getTime()) return false;
    if (guard.activeToken !== undefined && !this.stmt(db, ACTIVE_TOKEN_SQL).get(guard.activeToken)) return false;
    if (guard.appendOnly) {
      const q = this.stmt(
        db,
        `SELECT (SELECT max("stepIdx") FROM "Step" WHERE "runId" = ?) AS last, EXISTS (SELECT 1 FROM "Step" WHERE "runId" = ? AND "status" IN (${UNSETTLED_STATUSES.map(() => "?").join(",")})) AS open`,
      ).get(runId, runId, ...UNSETTLED_STATUSES) as { last: number | null; open: number };
      if (stepIdx !== (q.last ?? -1) + 1 || q.open) return false;
    }
    if (guard.noPivot && this.stmt(db, `SELECT 1 FROM "Pivot" WHERE "runId" = ? LIMIT 1`).get(runId)) return false;
    return true;
  }

  createRun(build: (now: Date) => RunRow, audit: Omit<HotAudit, "runId" | "stepId">): ReturnType<StepLogSql["createRun"]> {
    return this.exclusive((db) => {
      stepLogCounters.transactions++;
      return db
        .transaction(() => {
          const now = this.dbNow(db);
          const row = build(now);
          const inserted = this.stmt(db, SQLITE_RUN_INSERT).run(
            row.id, row.title, row.agent, row.onBehalfOf, JSON.stringify(row.metadata), row.status, sqliteDate(row.createdAt), sqliteDate(row.updatedAt),
          );
          if (inserted.changes === 0) return { kind: "exists" as const };
          this.appendLink(db, { ...audit, runId: row.id, stepId: null }, now);
          return { kind: "created" as const, row };
        })
        .immediate();
    });
  }

  insertIntent(runId: string, build: (now: Date) => StepRow, audit: Omit<HotAudit, "runId">, guard: IntentGuard | undefined): Promise<HotInsertResult> {
    return this.exclusive((db) => {
      stepLogCounters.transactions++;
      return db
        .transaction((): HotInsertResult => {
          const now = this.dbNow(db);
          const row = build(now);
          const existing = this.existing(db, runId, row);
          if (existing) return { kind: "exists", row: existing };
          const run = this.stmt(db, `SELECT "status", "updatedAt", "agent" FROM "Run" WHERE "id" = ?`).get(runId) as { status: string; updatedAt: string; agent: string } | undefined;
          if (!run) return { kind: "no-run" };
          if (guard && !this.guardHolds(db, runId, row.stepIdx, guard, run)) return { kind: "guard-failed" };
          if (this.stmt(db, `SELECT 1 FROM "Step" WHERE "id" = ?`).get(row.id)) return { kind: "id-taken" };
          this.stmt(db, `INSERT INTO "Step" (${STEP_COLUMNS.map((c) => `"${c}"`).join(",")}) VALUES (${STEP_COLUMNS.map(() => "?").join(",")})`).run(
            ...STEP_COLUMNS.map((c) => sqliteValue(c, row[c])),
          );
          this.appendLink(db, { ...audit, runId }, now);
          return { kind: "created", row };
        })
        .immediate();
    });
  }

  updateStep(stepId: string, fence: HotFence, set: StepColumns, audit: Omit<HotAudit, "runId" | "stepId">, durability: Durability): Promise<StepRow | null> {
    const columns = Object.keys(set).filter((c) => c !== "updatedAt" && set[c as keyof StepColumns] !== undefined);
    let sql = `UPDATE "Step" SET ${[...columns, "updatedAt"].map((c) => `"${c}" = ?`).join(", ")} WHERE "id" = ?`;
    const where: unknown[] = [stepId];
    if (fence.status != null) {
      sql += ` AND "status" IN (${fence.status.map(() => "?").join(",") || "NULL"})`;
      where.push(...fence.status);
    }
    if (fence.compensationState != null) {
      sql += ` AND "compensationState" IN (${fence.compensationState.map(() => "?").join(",") || "NULL"})`;
      where.push(...fence.compensationState);
    }
    if (fence.tools != null) {
      sql += ` AND "tool" IN (${fence.tools.map(() => "?").join(",") || "NULL"})`;
      where.push(...fence.tools);
    }
    if (fence.runAgent != null) {
      sql += ` AND EXISTS (SELECT 1 FROM "Run" r WHERE r."id" = "Step"."runId" AND r."agent" = ?)`;
      where.push(fence.runAgent);
    }
    if (fence.activeToken != null) {
      sql += ` AND EXISTS (${ACTIVE_TOKEN_SQL})`;
      where.push(fence.activeToken);
    }
    sql += " RETURNING *";
    return this.exclusive((db) => {
      const relaxed = durability === "relaxed";
      stepLogCounters.transactions++;
      if (relaxed) db.pragma("synchronous = NORMAL");
      try {
        return db
          .transaction((): StepRow | null => {
            const now = this.dbNow(db);
            const values = columns.map((c) => sqliteValue(c, set[c as keyof StepColumns]));
            const raw = this.stmt(db, sql).get(...values, sqliteDate(now), ...where) as Record<string, unknown> | undefined;
            if (!raw) return null;
            const row = stepFromSqlite(raw);
            this.appendLink(db, { ...audit, runId: row.runId, stepId }, now);
            return row;
          })
          .immediate();
      } finally {
        if (relaxed) db.pragma("synchronous = FULL");
      }
    });
  }

  noteLink(): void {
    // SQLite reads the last link inside its write transaction; nothing to cache.
  }

  now(): Promise<Date> {
    // SQLite's 'now' is this machine's clock, read by the library in this process.
    return Promise.resolve(new Date());
  }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/** Parses `timestamp` (without time zone) as UTC, which is how Prisma writes it; pg's default is local time. */
const PG_TYPES = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === 1114 ? (v: string) => new Date(`${v.replace(" ", "T")}Z`) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

function pgValue(column: string, value: unknown): unknown {
  if (value === undefined) throw new Error(`Step column ${column} has no value.`);
  if (JSON_COLUMNS.has(column)) return value === null && !REQUIRED_JSON_COLUMNS.has(column) ? null : JSON.stringify(value);
  if (DATE_COLUMNS.has(column)) return value === null ? null : (value as Date).toISOString();
  return value;
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
  const values: unknown[] = STEP_COLUMNS.map((c) => pgValue(c, row[c]));
  const param = (value: unknown, cast: string) => `$${values.push(value)}${cast}`;
  const run = param(runId, "::text");
  const checks = [`r."id" = ${run}`];
  if (guard) {
    checks.push(`r."status" = ANY(${param([...guard.runStatus], "::text[]")})`);
    if (guard.runUpdatedAt) checks.push(`r."updatedAt" = ${param(guard.runUpdatedAt.toISOString(), "::timestamp(3)")}`);
    if (guard.appendOnly) {
      const idx = param(row.stepIdx, "::int4");
      checks.push(`NOT EXISTS (SELECT 1 FROM "Step" s WHERE s."runId" = ${run} AND (s."stepIdx" >= ${idx} OR s."status" = ANY(${param([...UNSETTLED_STATUSES], "::text[]")})))`);
      if (row.stepIdx !== 0) checks.push(`EXISTS (SELECT 1 FROM "Step" s WHERE s."runId" = ${run} AND s."stepIdx" = ${idx} - 1)`);
    }
    if (guard.noPivot) checks.push(`NOT EXISTS (SELECT 1 FROM "Pivot" v WHERE v."runId" = ${run})`);
    if (guard.runAgent !== undefined) checks.push(`r."agent" = ${param(guard.runAgent, "::text")}`);
    if (guard.toolPolicy) {
      const { name, toolClass, policyVersion } = guard.toolPolicy;
      checks.push(`EXISTS (SELECT 1 FROM "ToolPolicy" t WHERE t."name" = ${param(name, "::text")} AND t."toolClass" = ${param(toolClass, "::text")} AND t."policyVersion" = ${param(policyVersion, "::int4")})`);
    }
    if (guard.activeToken !== undefined) checks.push(`EXISTS (SELECT 1 FROM "AgentToken" k WHERE k."id" = ${param(guard.activeToken, "::text")} AND k."revokedAt" IS NULL)`);
  }
  const lock = param(lockKey, "::int4");
  const linkParams = linkValues(link, at).map((v, i) => param(v, LINK_CASTS[i]!));
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
  let sql = intentStatements.get(text);
  if (!sql) intentStatements.set(text, (sql = prepared(text)));
  return { sql, values };
}

/** The intent insert's statement per guard shape (a handful in practice), by text. */
const intentStatements = new Recent<Prepared>(200);

/**
 * The fenced UPDATE of a step with its link, for one shape (the columns set, which fences, relaxed or
 * not); parameters in order: the columns, updatedAt, the id, the fences, the lock key, the link.
 */
function stepUpdateSql(columns: readonly string[], fence: { status: boolean; compensation: boolean; tools: boolean; runAgent: boolean; activeToken: boolean }, relaxed: boolean): Prepared {
  let n = 0;
  const param = (cast: string) => `$${++n}${cast}`;
  const sets = [...columns, "updatedAt"].map((c) => `"${c}" = ${param(pgCast(c))}`);
  let where = `"id" = ${param("::text")}`;
  if (fence.status) where += ` AND "status" = ANY(${param("::text[]")})`;
  if (fence.compensation) where += ` AND "compensationState" = ANY(${param("::text[]")})`;
  if (fence.tools) where += ` AND "tool" = ANY(${param("::text[]")})`;
  if (fence.runAgent) {
    // The run by its id (a parameter), not by the row's column: a one-time primary-key lookup that the
    // cached plan cannot turn into a hashed scan of every run.
    const run = param("::text");
    where += ` AND "runId" = ${run} AND EXISTS (SELECT 1 FROM "Run" r WHERE r."id" = ${run} AND r."agent" = ${param("::text")})`;
  }
  if (fence.activeToken) where += ` AND EXISTS (SELECT 1 FROM "AgentToken" k WHERE k."id" = ${param("::text")} AND k."revokedAt" IS NULL)`;
  const relax = relaxed ? `relax AS (SELECT set_config('synchronous_commit', 'off', true) AS c), ` : "";
  return prepared(`WITH ${relax}updated AS (
      UPDATE "Step" SET ${sets.join(", ")} WHERE ${where} RETURNING *
    ), lock AS (
      SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_SPACE}::int4, ${param("::int4")}) AS locked FROM updated${relax ? ", relax" : ""}
    ), link AS (
      INSERT INTO "AuditEvent" (${AUDIT_COLUMNS})
      SELECT ${LINK_CASTS.map(param).join(", ")}
      FROM lock
    )
    SELECT * FROM updated`);
}

const LAST_LINK_SQL = prepared(`SELECT "seq", "hash" FROM "AuditEvent" WHERE "scope" = $1 ORDER BY "seq" DESC LIMIT 1`);
const EXISTING_STEP_SQL = prepared(`SELECT * FROM "Step" WHERE "stepKey" = $1 OR ("runId" = $2 AND "stepIdx" = $3::int4) ORDER BY "createdAt" LIMIT 1`);
const RUN_EXISTS_SQL = prepared(`SELECT 1 FROM "Run" WHERE "id" = $1`);
const RUN_OF_STEP_SQL = prepared(`SELECT "runId" FROM "Step" WHERE "id" = $1`);
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

class PostgresStepLog implements StepLogSql {
  private readonly lastLinks = new Recent<Link>(10_000);
  private readonly runOfStep = new Recent<string>(100_000);
  private readonly lockKeys = new Recent<number>(10_000);
  /** The UPDATE statement per shape (columns set, fences, durability): a handful in practice. */
  private readonly updateStatements = new Recent<Prepared>(200);
  /** The tail of this process's pending writes per chain. */
  private readonly chainQueues = new Map<string, Promise<void>>();
  private clock: { offsetMs: number; measuredAt: number } | null = null;

  constructor(private readonly pool: pg.Pool) {}

  /** Runs one statement; a write on the pool is its own transaction (on a PoolClient it is inside underChainLock's). */
  private async query<R extends pg.QueryResultRow>(sql: Prepared, values: unknown[], db: pg.Pool | pg.PoolClient = this.pool, write = false): Promise<pg.QueryResult<R>> {
    stepLogCounters.statements++;
    if (write && db === this.pool) stepLogCounters.transactions++;
    return db.query<R>({ name: sql.name, text: sql.text, values, types: PG_TYPES });
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
    stepLogCounters.transactions++;
    stepLogCounters.statements += 4; // BEGIN, lock, last link, COMMIT (the write itself counts in query())
    try {
      await client.query("BEGIN");
      await client.query(`SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_SPACE}::int4, $1::int4)`, [this.lockKey(runId)]);
      const { rows } = await client.query<Link>({ name: LAST_LINK_SQL.name, text: LAST_LINK_SQL.text, values: [runScope(runId)] });
      const result = await write(client, rows[0]);
      await client.query("COMMIT");
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
    const columns = Object.keys(set).filter((c) => c !== "updatedAt" && set[c as keyof StepColumns] !== undefined);
    const now = await this.now();
    return this.withLink(known, async (db, last) => {
      const link = nextLink(last, { ...audit, runId: known, stepId }, now);
      const values: unknown[] = columns.map((c) => pgValue(c, set[c as keyof StepColumns]));
      values.push(now.toISOString(), stepId);
      if (fence.status != null) values.push([...fence.status]);
      if (fence.compensationState != null) values.push([...fence.compensationState]);
      if (fence.tools != null) values.push([...fence.tools]);
      if (fence.runAgent != null) values.push(known, fence.runAgent);
      if (fence.activeToken != null) values.push(fence.activeToken);
      values.push(this.lockKey(known), ...linkValues(link, now));
      const shape = { status: fence.status != null, compensation: fence.compensationState != null, tools: fence.tools != null, runAgent: fence.runAgent != null, activeToken: fence.activeToken != null };
      const key = `${columns.join(",")}|${Object.values(shape).join(",")}|${durability}`;
      let sql = this.updateStatements.get(key);
      if (!sql) this.updateStatements.set(key, (sql = stepUpdateSql(columns, shape, durability === "relaxed")));
      const { rows } = await this.query<StepRow>(sql, values, db, true);
      const row = rows[0] ?? null;
      return { result: row, appended: row ? { seq: link.seq, hash: link.hash } : null };
    });
  }
}
