/**
 * The database drivers under a Prisma client, for the two places that bypass the ORM: the saga log's
 * two hot writes (lib/core/db/step-log-sql.ts) and the busiest screens' reads (lib/core/db/raw-read.ts).
 * lib/core/db/prisma.ts registers them when it opens a client; a client opened elsewhere has none, and
 * PrismaSagaStore and those reads refuse it (they have no other path).
 *
 * - SQLite: the very better-sqlite3 connection the adapter uses, lent out only while no query or
 *   transaction of this client is in flight (the serialised adapter's lock), so a raw write can
 *   neither run inside a Prisma transaction nor wait on one of its own process's.
 * - PostgreSQL: the adapter's pg pool (created here and handed to the adapter, which ends it on
 *   `$disconnect`).
 *
 * A client may carry an observer (lib/core/db/prisma.ts `OpenOptions.observer`) that these writes report
 * their statements and commits to, as Prisma's query log reports its own.
 */
import type Database from "better-sqlite3";
import type pg from "pg";

/**
 * Sees what a client sends to its database, for whoever measures it (npm run bench counts the
 * statements and durable commits of one logged step). Absent, nothing is counted.
 */
export interface DatabaseObserver {
  /** A statement was sent: by Prisma (its query log) or on the driver (`driver`: the saga log's own SQL, the screens' reads). */
  statement?(sent: SentStatement): void;
  /** A write transaction committed (Prisma's COMMIT, or one of the saga log's own writes). */
  commit?(): void;
}

/** One statement a client sent. */
export interface SentStatement {
  /** Its text. */
  sql: string;
  /** Who sent it: Prisma, or the saga log's own SQL (lib/core/db/step-log-sql.ts). */
  via: "prisma" | "driver";
  /** Its parameters as JSON text (Prisma's statements and the screens' reads, lib/core/db/raw-read.ts). */
  params?: string;
  /** How long it took, in milliseconds (Prisma's statements and the screens' reads). */
  durationMs?: number;
}

export type RawDriver =
  | { kind: "sqlite"; exclusive: <T>(fn: (db: Database.Database) => T) => Promise<T>; observer?: DatabaseObserver }
  | { kind: "postgresql"; pool: pg.Pool; observer?: DatabaseObserver };

/**
 * Kept on the client object under a registered symbol, not in a module-level map: a Next.js build
 * bundles this module into several chunks, each with its own module state, while the process-wide
 * client (lib/core/db/prisma.ts getPrisma) is one object shared by all of them.
 */
const DRIVER = Symbol.for("sagaboard.rawDriver");

/** Records the driver under `client` (lib/core/db/prisma.ts, when it opens one). */
export function registerRawDriver(client: object, driver: RawDriver): void {
  Object.defineProperty(client, DRIVER, { value: driver, enumerable: false });
}

/** The driver under `client`, or null for a client lib/core/db/prisma.ts did not open (the saga store refuses those). */
export function rawDriverOf(client: object): RawDriver | null {
  return (client as { [DRIVER]?: RawDriver })[DRIVER] ?? null;
}
