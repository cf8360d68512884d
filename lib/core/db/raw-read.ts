/**
 * Reads in the drivers' own SQL, for the screens people load most (the runs list, the overview, the
 * correction queue's counts). Prisma 6 with `engineType = "client"` compiles every query on the main
 * thread and turns every row into objects through its own runtime: the runs list's JavaScript was
 * about 19 ms of CPU per view at 1M steps, a third of it Prisma's, and with 16 readers on 2 cores
 * that CPU is the queue. A read here is one statement on the driver Prisma's adapter already holds
 * (lib/core/db/raw-driver.ts): the better-sqlite3 connection, lent while no query or transaction of
 * the client is in flight, or the pg pool. One statement reads one snapshot on both stores, so a read that must be consistent is
 * written as one statement.
 *
 * Values come back as the driver gives them, converted by the caller with `countOf` and `dateOf`:
 * - SQLite: dates as the adapter's ISO text, integers as numbers;
 * - PostgreSQL: `timestamp` as a Date read as UTC (how Prisma writes it; pg's default is local time),
 *   COUNT(*) as a bigint's text.
 */
import type Database from "better-sqlite3";
import pg from "pg";
import type { Prisma } from "@/generated/prisma";
import { rawDriverOf } from "./raw-driver";
import { Recent } from "./step-log-sql";

/** Parses `timestamp` (without time zone) as UTC, which is how Prisma writes it; pg's default is local time. */
export const PG_UTC_TYPES = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === 1114 ? (v: string) => new Date(`${v.replace(" ", "T")}Z`) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

/** Prepared SQLite statements per connection, by text (a handful of shapes per screen). */
const sqliteStatements = new WeakMap<Database.Database, Recent<Database.Statement>>();

function sqliteStatement(db: Database.Database, sql: string): Database.Statement {
  let cache = sqliteStatements.get(db);
  if (!cache) sqliteStatements.set(db, (cache = new Recent(200)));
  let s = cache.get(sql);
  // The adapter reads integers as BigInt on its connection; counts fit a number.
  if (!s) cache.set(sql, (s = db.prepare(sql).safeIntegers(false)));
  return s;
}

/**
 * The rows of one statement, built with `Prisma.sql` (which renders it for both dialects: `?` for
 * SQLite, `$n` for PostgreSQL), read on `client`'s driver. Throws for a client lib/core/db/prisma.ts
 * did not open (it has no driver to read on).
 */
export async function readRows<T>(client: object, query: Prisma.Sql): Promise<T[]> {
  const driver = rawDriverOf(client);
  if (!driver) throw new Error("This database client was not opened by lib/core/db/prisma.ts (openPrisma or getPrisma), so it has no driver for the screens' own reads.");
  // Timed from when the statement runs: on SQLite, not while it waits for the connection.
  let started = 0;
  let rows: T[];
  if (driver.kind === "sqlite") {
    rows = await driver.exclusive((db) => {
      started = performance.now();
      return sqliteStatement(db, query.sql).all(...query.values) as T[];
    });
  } else {
    started = performance.now();
    rows = (await driver.pool.query({ text: query.text, values: query.values, types: PG_UTC_TYPES })).rows as T[];
  }
  driver.observer?.statement?.({
    sql: driver.kind === "sqlite" ? query.sql : query.text,
    via: "driver",
    params: JSON.stringify(query.values),
    durationMs: performance.now() - started,
  });
  return rows;
}

/** A COUNT(*) as a number (PostgreSQL sends a bigint as text). */
export function countOf(value: unknown): number {
  return typeof value === "number" ? value : Number(value ?? 0);
}

/**
 * A date column as a Date: SQLite sends the adapter's ISO text, or an aggregate's (MIN, MAX) text in
 * whatever form it holds; a text without a zone is UTC.
 */
export function dateOf(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value === "number") return new Date(value);
  const text = String(value).replace(" ", "T");
  return new Date(/(Z|[+-]\d\d:?\d\d)$/i.test(text) ? text : `${text}Z`);
}
