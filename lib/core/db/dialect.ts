/**
 * Every place where SQLite and PostgreSQL need different SQL, in one module. Everything else in lib/
 * goes through Prisma's model API, which is the same on both stores.
 *
 * - the database clock (timestamps and leases use the database's clock, never the app server's);
 * - serialising writers that read-then-write a shared thing (the next link of an audit hash chain,
 *   the "last enabled admin" check): SQLite already runs one writer at a time per file, PostgreSQL
 *   runs them concurrently under READ COMMITTED, so there we take transaction-scoped advisory locks;
 * - the worker-task claim: the tool-coverage test on a JSON array, and row locks that skip locked rows;
 * - the runs list's substring search on SQLite, through a trigram index Prisma cannot express.
 */
import { createHash } from "node:crypto";
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { databaseKindOfUrl, type DatabaseKind } from "./url";

export type { DatabaseKind };

/** A client or an interactive transaction's client. */
export type Db = PrismaClient | Prisma.TransactionClient;

/**
 * Which store `db` talks to; without `db`, which store DATABASE_URL names. A client knows its own
 * provider: lib/core/db/prisma.ts opens either generated client under the SQLite client's type, and tests
 * open SQLite and PostgreSQL clients side by side in one process, so the environment cannot say.
 * Prisma keeps the provider on every client and transaction client as `_activeProvider` (its raw
 * query code reads it there); tests/integration/dialect.test.ts pins that on both stores.
 */
export function databaseKind(db?: Db): DatabaseKind {
  if (db === undefined) return databaseKindOfUrl();
  const provider = (db as unknown as { _activeProvider?: unknown })._activeProvider;
  if (provider === "sqlite") return "sqlite";
  if (provider === "postgresql") return "postgresql";
  throw new Error(
    `Cannot tell which database this Prisma client talks to (provider ${JSON.stringify(provider)}); ` +
      "open clients with lib/core/db/prisma.ts and check lib/core/db/dialect.ts after a Prisma upgrade.",
  );
}

// ---------------------------------------------------------------------------------------------
// The database clock.

/**
 * The query that reads the database clock as `now`, an ISO 8601 string in UTC with milliseconds.
 * SQLite: a table-less SELECT, which takes no WAL snapshot, so it may precede a transaction's first
 * write (see lib/core/db/prisma-saga-store.ts). PostgreSQL: clock_timestamp(), the time of the statement
 * (now() would be the start of the transaction, which may have waited for a lock since).
 */
export function nowQuery(db: Db): Prisma.Sql {
  return databaseKind(db) === "postgresql"
    ? Prisma.sql`SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS now`
    : Prisma.sql`SELECT strftime('%Y-%m-%dT%H:%M:%fZ','now') AS now`;
}

/** The Date in the rows `nowQuery` returned. */
export function clockFromRows(rows: readonly { now: unknown }[]): Date {
  const now = rows[0]?.now;
  if (typeof now !== "string") throw new Error("The database clock query returned no row.");
  const date = new Date(now);
  if (Number.isNaN(date.getTime())) throw new Error(`The database clock query returned "${now}", not a timestamp.`);
  return date;
}

/**
 * The database clock, the one every recorded time comes from, read with `db` (inside a transaction:
 * the transaction's client). On SQLite it is a table-less SELECT, so it takes no WAL snapshot and may
 * precede the transaction's first write.
 */
export async function databaseNow(db: Db): Promise<Date> {
  return clockFromRows(await db.$queryRaw<{ now: string }[]>(nowQuery(db)));
}

// ---------------------------------------------------------------------------------------------
// Serialising writers.

/** The first key of every advisory lock Sagaboard takes (two-key form: a space of its own). */
export const ADVISORY_LOCK_SPACE = 0x5a6b_0001;

/** The second key of the advisory lock named `name`. */
export function advisoryKey(name: string): number {
  return createHash("sha256").update(name, "utf8").digest().readInt32BE(0);
}

/**
 * Makes the rest of this transaction wait for every other transaction serialised on any of `names`
 * to end. PostgreSQL: `pg_advisory_xact_lock`, released at commit or rollback, taken in key order so
 * that two transactions naming the same locks cannot deadlock. Call it after the transaction's
 * own row writes and before the reads it must not race on (each statement then sees the other
 * transactions' commits). SQLite: nothing to do, the transaction already holds the file's write lock.
 */
export async function serializeOn(tx: Prisma.TransactionClient, names: readonly string[]): Promise<void> {
  if (databaseKind(tx) !== "postgresql" || names.length === 0) return;
  const keys = [...new Set(names.map(advisoryKey))].sort((a, b) => a - b);
  for (const key of keys) {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_SPACE}::int4, ${key}::int4)`;
  }
}

/**
 * The lock name of an audit hash chain: appending reads the last link and writes the next, so two
 * writers of one chain must not interleave (the `(scope, seq)` unique index would refuse the second,
 * failing a legitimate write). Every `append...Audit` takes it right before reading the last link.
 */
export function auditChainLock(scope: string): string {
  return `audit:${scope}`;
}

// ---------------------------------------------------------------------------------------------
// Text search.

/**
 * "`column` contains `text`", ignoring ASCII case, on both stores: SQLite's LIKE already ignores it;
 * PostgreSQL's ILIKE does. A % or _ in `text` is escaped, so a person searching for one means it
 * literally (PostgreSQL's LIKE escapes with a backslash by default; SQLite is told to).
 */
export function containsIgnoringCaseSql(kind: DatabaseKind, column: Prisma.Sql, text: string): Prisma.Sql {
  const pattern = `%${text.replace(/[\\%_]/g, "\\$&")}%`;
  return kind === "postgresql" ? Prisma.sql`${column} ILIKE ${pattern}` : Prisma.sql`${column} LIKE ${pattern} ESCAPE '\\'`;
}

/** Whether `text` holds a LIKE wildcard (% or _), which a person searching means literally. */
export function hasLikeWildcards(text: string): boolean {
  return /[%_]/.test(text);
}

/** How many runs SQLite's search index may name before a plain newest-first scan is the cheaper read. */
export const RUN_SEARCH_CANDIDATE_LIMIT = 1000;

/**
 * Ids of the runs whose onBehalfOf may contain `text` in any case, through SQLite's trigram index
 * (the RunSearch table, migration 20261130020000_run_search): a superset (the trigram match folds
 * more than ASCII case), so the caller still applies `containsIgnoringCaseSql`. Null when the index
 * cannot help: on PostgreSQL (there the pg_trgm index serves the ILIKE itself), for text shorter than
 * a trigram, or when more than `limit` runs match; then matches are common, and scanning runs newest
 * first fills a page after few rows.
 */
export async function runSearchCandidates(db: Db, text: string, limit = RUN_SEARCH_CANDIDATE_LIMIT): Promise<string[] | null> {
  if (databaseKind(db) !== "sqlite") return null;
  if (hasLikeWildcards(text)) {
    // A literal % or _ (rare): the exact runs, newest first, by a plain substring test (ASCII case folded).
    const rows = await db.$queryRaw<{ id: string }[]>`SELECT "id" FROM "Run" WHERE instr(lower("onBehalfOf"), lower(${text})) > 0 ORDER BY "createdAt" DESC, "id" DESC LIMIT ${limit}`;
    return rows.map((r) => r.id);
  }
  if ([...text].length < 3) return null;
  const rows = await db.$queryRaw<{ runId: string }[]>`SELECT "runId" FROM "RunSearch" WHERE "onBehalfOf" LIKE ${`%${text}%`} LIMIT ${limit + 1}`;
  return rows.length > limit ? null : rows.map((r) => r.runId);
}

// ---------------------------------------------------------------------------------------------
// Worker-task claims.

/**
 * True when every string in the JSON array `column` is among `values` (an empty array is covered).
 * SQLite: json_each. PostgreSQL: jsonb containment (`["a"] <@ ["a","b"]`), which reads the array once.
 */
export function jsonStringsWithin(db: Db, column: Prisma.Sql, values: readonly string[]): Prisma.Sql {
  if (databaseKind(db) === "postgresql") return Prisma.sql`${column} <@ ${JSON.stringify(values)}::jsonb`;
  return values.length === 0
    ? Prisma.sql`NOT EXISTS (SELECT 1 FROM json_each(${column}))`
    : Prisma.sql`NOT EXISTS (SELECT 1 FROM json_each(${column}) AS j WHERE j."value" NOT IN (${Prisma.join([...values])}))`;
}

/**
 * Appended to a candidate SELECT run inside the claim transaction. PostgreSQL: lock the rows and skip
 * those another claimer holds, so concurrent workers take disjoint tasks without waiting for each
 * other. SQLite: nothing (the claim transaction holds the write lock; there are no row locks).
 */
export function skipLockedRows(db: Db): Prisma.Sql {
  return databaseKind(db) === "postgresql" ? Prisma.sql`FOR UPDATE SKIP LOCKED` : Prisma.empty;
}
