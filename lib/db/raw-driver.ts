/**
 * The database drivers under a Prisma client, for the one place that bypasses the ORM: the saga log's
 * two hot writes (lib/db/step-log-sql.ts). lib/db/prisma.ts registers them when it opens a client;
 * a client opened elsewhere has none, and the store then writes through Prisma as everywhere else.
 *
 * - SQLite: the very better-sqlite3 connection the adapter uses, lent out only while no query or
 *   transaction of this client is in flight (the serialised adapter's lock), so a raw write can
 *   neither run inside a Prisma transaction nor wait on one of its own process's.
 * - PostgreSQL: the adapter's pg pool (created here and handed to the adapter, which ends it on
 *   `$disconnect`).
 */
import type Database from "better-sqlite3";
import type pg from "pg";

export type RawDriver =
  | { kind: "sqlite"; exclusive: <T>(fn: (db: Database.Database) => T) => Promise<T> }
  | { kind: "postgresql"; pool: pg.Pool };

const drivers = new WeakMap<object, RawDriver>();

/** Records the driver under `client` (lib/db/prisma.ts, when it opens one). */
export function registerRawDriver(client: object, driver: RawDriver): void {
  drivers.set(client, driver);
}

/** The driver under `client`, or null for a client lib/db/prisma.ts did not open. */
export function rawDriverOf(client: object): RawDriver | null {
  return drivers.get(client) ?? null;
}
