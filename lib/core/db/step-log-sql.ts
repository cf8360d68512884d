/**
 * The saga log's two hot writes in the drivers' own SQL: recording an intent (INSERT the INTENDED row)
 * and recording a step's transition (fenced UPDATE), each with the next link of the run's audit chain
 * in the same transaction. Every logged tool call makes exactly these two writes, so they bypass the
 * ORM (Prisma's query planning costs more CPU per statement than the commit itself); every other
 * store operation stays on Prisma (lib/core/db/prisma-saga-store.ts), and the tables are still the ones
 * prisma/schema.prisma defines (tests/integration/step-log-sql.test.ts reads what these writes wrote
 * back through Prisma).
 *
 * This file holds what both dialects share: the interface, the columns and their conversions, and
 * the step fence in SQL. Each dialect has its own file:
 * - lib/core/db/step-log-sqlite.ts: one `BEGIN IMMEDIATE` transaction on the adapter's own connection;
 *   the intent guard decided by packages/client/src/saga/intent-guard.ts on what it reads inside that transaction.
 * - lib/core/db/step-log-postgres.ts: one statement per write, the guard in its WHERE.
 *
 * Durability "relaxed" (SAGABOARD_DURABILITY=relaxed): the outcome write (a transition out of INTENDED)
 * commits without waiting for the flush (PostgreSQL: synchronous_commit=off for that transaction;
 * SQLite: synchronous=NORMAL for it). A crash may lose that outcome: the row stays INTENDED and the next
 * call at that step reconciles it against the real system, as after any crash between call and record.
 * Intents are always durable.
 */
import type { Run as RunRow, Step as StepRow } from "@/generated/prisma";
import { runScope, type IntentGuard, type StepFence } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import type { ToolTableRow } from "@/packages/client/src/saga/tool-table";
import { chainLink, type ChainHead } from "./audit-chain";

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

type JsonColumn = "args" | "result" | "error" | "compensation" | "compensationError" | "correction" | "audience";
export const JSON_COLUMNS: ReadonlySet<string> = new Set<JsonColumn>(["args", "result", "error", "compensation", "compensationError", "correction", "audience"]);
/** JSON columns that are NOT NULL: a JSON null there is the JSON value `null`, elsewhere it is SQL NULL. */
export const REQUIRED_JSON_COLUMNS: ReadonlySet<string> = new Set<JsonColumn>(["args", "audience"]);
export const DATE_COLUMNS: ReadonlySet<string> = new Set(["compensationRequestedAt", "compensationConfirmedAt", "createdAt", "updatedAt"]);

/** A column's value as a driver parameter: JSON as text (SQL NULL for "no value" in a nullable column), dates by `date`. */
export function columnValue(column: string, value: unknown, date: (d: Date) => string): unknown {
  if (value === undefined) throw new Error(`Step column ${column} has no value.`);
  if (JSON_COLUMNS.has(column)) return value === null && !REQUIRED_JSON_COLUMNS.has(column) ? null : JSON.stringify(value);
  if (DATE_COLUMNS.has(column)) return value === null ? null : date(value as Date);
  return value;
}

/** The columns a transition sets (updatedAt is always set, by the write, to the database clock). */
export function setColumns(set: StepColumns): string[] {
  return Object.keys(set).filter((c) => c !== "updatedAt" && set[c as keyof StepColumns] !== undefined);
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
export type HotFence = StepFence;

/** An id (or chain) cache that forgets its oldest entries past `max`. */
export class Recent<V> {
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

export type Link = ChainHead;

/** The next link of a run's chain whose last link is `last`, with its hash. */
export function nextLink(last: Link | undefined, audit: HotAudit, at: Date) {
  return chainLink(last, { ...audit, scope: runScope(audit.runId) }, at);
}

export const STEP_COLUMNS = [
  "id", "runId", "stepIdx", "tool", "toolClass", "stepKey", "args", "argsHash", "status", "phase", "policyVersion", "approvalId",
  "planItemIdx", "externalRef", "result", "error", "compensation", "compensationKey", "compensationState", "compensationRef",
  "compensationRequestedAt", "compensationConfirmedAt", "compensationError", "correction", "audience", "attempts", "createdAt", "updatedAt",
] as const satisfies readonly (keyof StepRow)[];

export const AUDIT_COLUMNS = `"scope","seq","runId","stepId","type","actor","data","at","prevHash","hash"`;

/** The tool-table columns a call is decided with (ToolTableRow), in both dialects. */
export const TOOL_ROW_SQL = (param: string) =>
  `SELECT "name", "toolClass", "owner", "policyVersion", "status", "alwaysRequireApproval", "compensator", "disabledBy" FROM "ToolPolicy" WHERE "name" = ${param}`;

export const RUN_COLUMNS = ["id", "title", "agent", "onBehalfOf", "metadata", "status", "createdAt", "updatedAt"] as const satisfies readonly (keyof RunRow)[];

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
  /** Tells the cache that the chain of `runId` now ends at this link (a Prisma transaction appended it). */
  noteLink(runId: string, link: Link): void;
  /**
   * A tool's row in the tool table, as a call is decided with it: one prepared statement on the
   * driver, so reading it once per run costs what a hot-path statement costs, not a Prisma query.
   */
  toolRow(name: string): Promise<ToolTableRow | null>;
  /** The database clock without a round trip (PostgreSQL: the measured offset; SQLite: the same OS clock). */
  now(): Promise<Date>;
}

// ---------------------------------------------------------------------------------------------
// The step fence in SQL, for both dialects: each writes its parameters its own way.

/** How a dialect writes parameters; `values` collects them in the order the text names them. */
export interface SqlParams {
  /** The values, in placeholder order. */
  readonly values: unknown[];
  /** A placeholder for `value`; `cast` is PostgreSQL's type (`::text`), which SQLite leaves out. */
  one(value: unknown, cast: string): string;
  /** `expr` is one of `values` (never true for an empty list); `cast` is the element type. */
  anyOf(expr: string, values: readonly unknown[], cast: string): string;
}

/** `?` placeholders (SQLite). */
export function questionMarks(): SqlParams {
  const values: unknown[] = [];
  return {
    values,
    one(value) {
      values.push(value);
      return "?";
    },
    anyOf(expr, list) {
      values.push(...list);
      return `${expr} IN (${list.map(() => "?").join(",") || "NULL"})`;
    },
  };
}

/** `$n::type` placeholders (PostgreSQL); a list is one array parameter. */
export function numberedParams(): SqlParams {
  const values: unknown[] = [];
  return {
    values,
    one(value, cast) {
      return `$${values.push(value)}${cast}`;
    },
    anyOf(expr, list, cast) {
      return `${expr} = ANY($${values.push([...list])}${cast}[])`;
    },
  };
}

/** The agent token (by id) exists and is not revoked. */
export function activeTokenSql(p: SqlParams, tokenId: string): string {
  return `EXISTS (SELECT 1 FROM "AgentToken" k WHERE k."id" = ${p.one(tokenId, "::text")} AND k."revokedAt" IS NULL)`;
}

/**
 * The conditions of a fenced step UPDATE (its WHERE), the step named by `stepId`. `runId`, when the
 * caller knows the step's run, names the run by a parameter rather than by the row's column: a
 * one-time primary-key lookup that a cached PostgreSQL plan cannot turn into a hashed scan of every
 * run. The same checks in code: packages/client/src/saga/intent-guard.ts `stepFenceHolds`.
 */
export function fenceConditions(p: SqlParams, stepId: string, fence: HotFence, runId: string | null): string[] {
  const where = [`"id" = ${p.one(stepId, "::text")}`];
  if (fence.status != null) where.push(p.anyOf(`"status"`, fence.status, "::text"));
  if (fence.compensationState != null) where.push(p.anyOf(`"compensationState"`, fence.compensationState, "::text"));
  if (fence.tools != null) where.push(p.anyOf(`"tool"`, fence.tools, "::text"));
  if (fence.runAgent != null) {
    if (runId === null) {
      where.push(`EXISTS (SELECT 1 FROM "Run" r WHERE r."id" = "Step"."runId" AND r."agent" = ${p.one(fence.runAgent, "::text")})`);
    } else {
      const run = p.one(runId, "::text");
      where.push(`"runId" = ${run}`, `EXISTS (SELECT 1 FROM "Run" r WHERE r."id" = ${run} AND r."agent" = ${p.one(fence.runAgent, "::text")})`);
    }
  }
  if (fence.activeToken != null) where.push(activeTokenSql(p, fence.activeToken));
  return where;
}
