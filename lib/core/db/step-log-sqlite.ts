/**
 * The saga log's hot writes on SQLite (see lib/core/db/step-log-sql.ts): one `BEGIN IMMEDIATE`
 * transaction on the adapter's own connection while the client is idle (lib/core/db/raw-driver.ts), with
 * the database clock and the chain's last link read inside it; all of it is synchronous, like
 * better-sqlite3. The write lock is held from BEGIN, so what the transaction reads before it writes
 * cannot change under it: the intent guard is decided in code (lib/saga/intent-guard.ts) on those
 * reads, and the step fence is the UPDATE's WHERE (lib/core/db/step-log-sql.ts `fenceConditions`).
 */
import type Database from "better-sqlite3";
import type { Run as RunRow, Step as StepRow } from "@/generated/prisma";
import { intentGuardHolds } from "@/lib/saga/intent-guard";
import { runScope, type IntentGuard } from "@/lib/saga/store";
import type { ToolTableRow } from "@/lib/saga/tool-table";
import { UNSETTLED_STATUSES } from "@/lib/saga/vocabulary";
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

const RUN_INSERT = `INSERT INTO "Run" (${RUN_COLUMNS.map((c) => `"${c}"`).join(",")}) VALUES (${RUN_COLUMNS.map(() => "?").join(",")}) ON CONFLICT DO NOTHING`;
const STEP_INSERT = `INSERT INTO "Step" (${STEP_COLUMNS.map((c) => `"${c}"`).join(",")}) VALUES (${STEP_COLUMNS.map(() => "?").join(",")})`;
const RUN_TAIL = `SELECT (SELECT max("stepIdx") FROM "Step" WHERE "runId" = ?) AS last, EXISTS (SELECT 1 FROM "Step" WHERE "runId" = ? AND "status" IN (${UNSETTLED_STATUSES.map(() => "?").join(",")})) AS open`;

export class SqliteStepLog implements StepLogSql {
  private readonly statements = new WeakMap<Database.Database, Map<string, Database.Statement>>();

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

  /** Runs `fn` in one BEGIN IMMEDIATE transaction on the adapter's connection. */
  private transaction<T>(fn: (db: Database.Database) => T, relaxed = false): Promise<T> {
    return this.exclusive((db) => {
      if (relaxed) db.pragma("synchronous = NORMAL");
      try {
        const result = db.transaction(() => fn(db)).immediate();
        this.observer?.commit?.();
        return result;
      } finally {
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

  /** The guard on what this transaction reads (it holds the write lock: nothing changes before the insert). */
  private guardHolds(db: Database.Database, runId: string, stepIdx: number, guard: IntentGuard, run: { status: string; updatedAt: string; agent: string }): boolean {
    let tail: { last: number | null; open: number } | undefined;
    const readTail = () => (tail ??= this.stmt(db, RUN_TAIL).get(runId, runId, ...UNSETTLED_STATUSES) as { last: number | null; open: number });
    return intentGuardHolds(guard, stepIdx, {
      run: { status: run.status, updatedAt: new Date(run.updatedAt), agent: run.agent },
      lastStepIdx: () => readTail().last,
      hasUnsettledStep: () => readTail().open !== 0,
      hasPivot: () => this.stmt(db, `SELECT 1 FROM "Pivot" WHERE "runId" = ? LIMIT 1`).get(runId) !== undefined,
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
      const now = this.dbNow(db);
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
      const now = this.dbNow(db);
      const row = build(now);
      const existing = this.existing(db, runId, row);
      if (existing) return { kind: "exists", row: existing };
      const run = this.stmt(db, `SELECT "status", "updatedAt", "agent" FROM "Run" WHERE "id" = ?`).get(runId) as { status: string; updatedAt: string; agent: string } | undefined;
      if (!run) return { kind: "no-run" };
      if (guard && !this.guardHolds(db, runId, row.stepIdx, guard, run)) return { kind: "guard-failed" };
      if (this.stmt(db, `SELECT 1 FROM "Step" WHERE "id" = ?`).get(row.id)) return { kind: "id-taken" };
      this.stmt(db, STEP_INSERT).run(...STEP_COLUMNS.map((c) => sqliteValue(c, row[c])));
      this.appendLink(db, { ...audit, runId }, now);
      return { kind: "created", row };
    });
  }

  updateStep(stepId: string, fence: HotFence, set: StepColumns, audit: Omit<HotAudit, "runId" | "stepId">, durability: Durability): Promise<StepRow | null> {
    const columns = setColumns(set);
    return this.transaction((db): StepRow | null => {
      const now = this.dbNow(db);
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

  noteLink(): void {
    // SQLite reads the last link inside its write transaction; nothing to cache.
  }

  now(): Promise<Date> {
    // SQLite's 'now' is this machine's clock, read by the library in this process.
    return Promise.resolve(new Date());
  }
}
