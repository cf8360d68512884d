/**
 * The saga log's hot writes on SQLite (see lib/core/db/step-log-sql.ts): one `BEGIN IMMEDIATE`
 * transaction on the adapter's own connection while the client is idle (lib/core/db/raw-driver.ts), with
 * the clock read inside it (SQLite's 'now' is this machine's clock: read in JavaScript, it costs no
 * statement) and the chain's last link cached or read inside it; all of it is synchronous, like
 * better-sqlite3. The write lock is held from BEGIN, so what the transaction reads before it writes
 * cannot change under it: the intent guard is decided in code (packages/client/src/saga/intent-guard.ts) on those
 * reads, and the step fence is the UPDATE's WHERE (lib/core/db/step-log-sql.ts `fenceConditions`).
 */
import type Database from "better-sqlite3";
import type { Run as RunRow, Step as StepRow } from "@/generated/prisma";
import { intentGuardHolds } from "@/packages/client/src/saga/intent-guard";
import { runScope, type IntentGuard } from "@/packages/client/src/saga/store";
import type { ToolTableRow } from "@/packages/client/src/saga/tool-table";
import { UNSETTLED_STATUSES } from "@/packages/client/src/saga/vocabulary";
import type { DatabaseObserver } from "./raw-driver";
import {
  activeTokenSql,
  AUDIT_COLUMNS,
  columnValue,
  DATE_COLUMNS,
  fenceConditions,
  JSON_COLUMNS,
  nextLink,
  questionMarks,
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

function sqliteDate(d: Date): string {
  return d.toISOString().replace("Z", "+00:00"); // the adapter's format
}

function sqliteValue(column: string, value: unknown): unknown {
  return columnValue(column, value, sqliteDate);
}

/** A Step row as better-sqlite3 returns it, in Prisma's shape. */
function stepFromSqlite(raw: Record<string, unknown>): StepRow {
  const out: Record<string, unknown> = { ...raw };
  for (const c of JSON_COLUMNS) out[c] = raw[c] === null ? null : JSON.parse(raw[c] as string);
  for (const c of DATE_COLUMNS) out[c] = raw[c] === null ? null : new Date(raw[c] as string);
  return out as unknown as StepRow;
}

/** The insert of a link whose seq another connection took first: the cached last link was stale. */
function isChainClash(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  return err?.code === "SQLITE_CONSTRAINT_UNIQUE" && (err.message ?? "").includes("AuditEvent.scope");
}

const RUN_INSERT = `INSERT INTO "Run" (${RUN_COLUMNS.map((c) => `"${c}"`).join(",")}) VALUES (${RUN_COLUMNS.map(() => "?").join(",")}) ON CONFLICT DO NOTHING`;
const STEP_INSERT = `INSERT INTO "Step" (${STEP_COLUMNS.map((c) => `"${c}"`).join(",")}) VALUES (${STEP_COLUMNS.map(() => "?").join(",")})`;
/**
 * The run an intent is written to, read once, with what its guard asks about (packages/client/src/saga/intent-guard.ts)
 * in the same statement: the last stepIdx and whether a step is unsettled (`appendOnly`), whether it
 * has a pivot (`noPivot`). A guard that does not ask never counts the run's steps.
 */
function runFactsSql(guard: IntentGuard | undefined): string {
  const shape = `${guard?.appendOnly ? 1 : 0}${guard?.noPivot ? 1 : 0}`;
  let sql = RUN_FACTS_SQL.get(shape);
  if (!sql) RUN_FACTS_SQL.set(shape, (sql = buildRunFactsSql(guard)));
  return sql;
}

/** The statement per guard shape (whether it asks appendOnly, noPivot): built once, not per intent. */
const RUN_FACTS_SQL = new Map<string, string>();

function buildRunFactsSql(guard: IntentGuard | undefined): string {
  const facts = [`"status"`, `"updatedAt"`, `"agent"`];
  if (guard?.appendOnly) {
    facts.push(
      `(SELECT max("stepIdx") FROM "Step" WHERE "runId" = "Run"."id") AS "last"`,
      `EXISTS (SELECT 1 FROM "Step" WHERE "runId" = "Run"."id" AND "status" IN (${UNSETTLED_STATUSES.map((s) => `'${s}'`).join(",")})) AS "open"`,
    );
  }
  if (guard?.noPivot) facts.push(`EXISTS (SELECT 1 FROM "Pivot" WHERE "runId" = "Run"."id") AS "pivot"`);
  return `SELECT ${facts.join(", ")} FROM "Run" WHERE "id" = ?`;
}

interface RunFacts {
  status: string;
  updatedAt: string;
  agent: string;
  last?: number | null;
  open?: number;
  pivot?: number;
}

/**
 * The step an intent collides with, if any, in one read: the step holding its key or its place in the
 * run (the intent already written: that row answers), else a step holding its id (another step's).
 */
const STEP_CLASH = `SELECT *, ("stepKey" = @key OR ("runId" = @runId AND "stepIdx" = @idx)) AS "sameIntent" FROM "Step"
  WHERE "stepKey" = @key OR ("runId" = @runId AND "stepIdx" = @idx) OR "id" = @id ORDER BY "sameIntent" DESC, "createdAt" LIMIT 1`;

export class SqliteStepLog implements StepLogSql {
  private readonly statements = new WeakMap<Database.Database, Map<string, Database.Statement>>();
  /** The last link of recently written chains, as this process committed them (runId to link). */
  private readonly lastLinks = new Recent<Link>(10_000);
  /** The links the open transaction appended, cached only once it commits. */
  private appended: [string, Link][] = [];

  constructor(
    private readonly exclusive: <T>(fn: (db: Database.Database) => T) => Promise<T>,
    private readonly observer: DatabaseObserver | undefined,
  ) {}

  /** The prepared statement for `sql` (each call is followed by one execution). */
  private stmt(db: Database.Database, sql: string): Database.Statement {
    this.observer?.statement?.({ sql, via: "driver" });
    let cache = this.statements.get(db);
    if (!cache) this.statements.set(db, (cache = new Map()));
    let s = cache.get(sql);
    // The adapter reads integers as BigInt on its connection; these columns (seq, stepIdx...) fit a number.
    if (!s) cache.set(sql, (s = db.prepare(sql).safeIntegers(false)));
    return s;
  }

  /** Runs `fn` in one BEGIN IMMEDIATE transaction on the adapter's connection; the links it appended are cached once it commits. */
  private transaction<T>(fn: (db: Database.Database) => T, relaxed = false): Promise<T> {
    return this.exclusive((db) => {
      if (relaxed) db.pragma("synchronous = NORMAL");
      this.appended = [];
      try {
        const result = db.transaction(() => fn(db)).immediate();
        this.observer?.commit?.();
        for (const [runId, link] of this.appended) this.lastLinks.set(runId, link);
        return result;
      } finally {
        this.appended = [];
        if (relaxed) db.pragma("synchronous = FULL");
      }
    });
  }

  toolRow(name: string): Promise<ToolTableRow | null> {
    return this.exclusive((db) => {
      const row = this.stmt(db, TOOL_ROW_SQL("?")).get(name) as (Omit<ToolTableRow, "alwaysRequireApproval"> & { alwaysRequireApproval: number }) | undefined;
      return row ? { ...row, alwaysRequireApproval: row.alwaysRequireApproval === 1 } : null;
    });
  }

  /**
   * Appends the next link of the run's chain. The last link is this process's cached one when it has
   * it; when another connection appended since, the insert fails on the (scope, seq) index (seq is
   * dense), and the link is read under this transaction's write lock and appended after it.
   */
  private appendLink(db: Database.Database, audit: HotAudit, at: Date): void {
    const insert = (last: Link | undefined) => {
      const link = nextLink(last, audit, at);
      this.stmt(db, `INSERT INTO "AuditEvent" (${AUDIT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)`).run(
        link.scope, link.seq, link.runId, link.stepId, link.type, link.actor, JSON.stringify(link.data), sqliteDate(at), link.prevHash, link.hash,
      );
      this.appended.push([audit.runId, { seq: link.seq, hash: link.hash }]);
    };
    const cached = this.lastLinks.get(audit.runId);
    if (cached) {
      try {
        return insert(cached);
      } catch (e) {
        if (!isChainClash(e)) throw e;
        this.lastLinks.delete(audit.runId);
      }
    }
    insert(this.stmt(db, `SELECT "seq", "hash" FROM "AuditEvent" WHERE "scope" = ? ORDER BY "seq" DESC LIMIT 1`).get(runScope(audit.runId)) as Link | undefined);
  }

  /** The guard on the run's facts, read in this transaction (it holds the write lock: nothing changes before the insert). */
  private guardHolds(db: Database.Database, stepIdx: number, guard: IntentGuard, run: RunFacts): boolean {
    return intentGuardHolds(guard, stepIdx, {
      run: { status: run.status, updatedAt: new Date(run.updatedAt), agent: run.agent },
      lastStepIdx: () => run.last ?? null,
      hasUnsettledStep: () => run.open === 1,
      hasPivot: () => run.pivot === 1,
      toolPolicyMatches: ({ name, toolClass, policyVersion }) =>
        this.stmt(db, `SELECT 1 FROM "ToolPolicy" WHERE "name" = ? AND "toolClass" = ? AND "policyVersion" = ?`).get(name, toolClass, policyVersion) !== undefined,
      tokenActive: (tokenId) => {
        const p = questionMarks();
        return (this.stmt(db, `SELECT ${activeTokenSql(p, tokenId)} AS ok`).get(...p.values) as { ok: number }).ok === 1;
      },
    });
  }

  createRun(build: (now: Date) => RunRow, audit: Omit<HotAudit, "runId" | "stepId">): ReturnType<StepLogSql["createRun"]> {
    return this.transaction((db) => {
      const now = new Date(); // under the write lock: the same clock SQLite's 'now' reads
      const row = build(now);
      const inserted = this.stmt(db, RUN_INSERT).run(
        row.id, row.title, row.agent, row.onBehalfOf, JSON.stringify(row.metadata), row.status, sqliteDate(row.createdAt), sqliteDate(row.updatedAt),
      );
      if (inserted.changes === 0) return { kind: "exists" as const };
      this.appendLink(db, { ...audit, runId: row.id, stepId: null }, now);
      return { kind: "created" as const, row };
    });
  }

  insertIntent(runId: string, build: (now: Date) => StepRow, audit: Omit<HotAudit, "runId">, guard: IntentGuard | undefined): Promise<HotInsertResult> {
    return this.transaction((db): HotInsertResult => {
      const now = new Date(); // under the write lock: the same clock SQLite's 'now' reads
      const row = build(now);
      const clash = this.stmt(db, STEP_CLASH).get({ key: row.stepKey, runId, idx: row.stepIdx, id: row.id }) as (Record<string, unknown> & { sameIntent: number }) | undefined;
      if (clash?.sameIntent === 1) {
        const { sameIntent: _, ...existing } = clash;
        return { kind: "exists", row: stepFromSqlite(existing) };
      }
      const run = this.stmt(db, runFactsSql(guard)).get(runId) as RunFacts | undefined;
      if (!run) return { kind: "no-run" };
      if (guard && !this.guardHolds(db, row.stepIdx, guard, run)) return { kind: "guard-failed" };
      if (clash) return { kind: "id-taken" };
      this.stmt(db, STEP_INSERT).run(...STEP_COLUMNS.map((c) => sqliteValue(c, row[c])));
      this.appendLink(db, { ...audit, runId }, now);
      return { kind: "created", row };
    });
  }

  updateStep(stepId: string, fence: HotFence, set: StepColumns, audit: Omit<HotAudit, "runId" | "stepId">, durability: Durability): Promise<StepRow | null> {
    const columns = setColumns(set);
    return this.transaction((db): StepRow | null => {
      const now = new Date(); // under the write lock: the same clock SQLite's 'now' reads
      const p = questionMarks();
      const sets = [...columns.map((c) => `"${c}" = ${p.one(sqliteValue(c, set[c as keyof StepColumns]), "")}`), `"updatedAt" = ${p.one(sqliteDate(now), "")}`];
      const where = fenceConditions(p, stepId, fence, null);
      const raw = this.stmt(db, `UPDATE "Step" SET ${sets.join(", ")} WHERE ${where.join(" AND ")} RETURNING *`).get(...p.values) as Record<string, unknown> | undefined;
      if (!raw) return null;
      const row = stepFromSqlite(raw);
      this.appendLink(db, { ...audit, runId: row.runId, stepId }, now);
      return row;
    }, durability === "relaxed");
  }

  noteLink(runId: string, link: Link): void {
    this.lastLinks.set(runId, link);
  }

  now(): Promise<Date> {
    // SQLite's 'now' is this machine's clock, read by the library in this process.
    return Promise.resolve(new Date());
  }
}
