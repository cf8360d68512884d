/**
 * Throwaway databases for tests, on the store this test run is about:
 * - SQLite (default): a migrated file in a new temp folder, removed afterwards;
 * - PostgreSQL, when SAGABOARD_TEST_PG=1 (or TEST_DATABASE=postgresql): `CREATE DATABASE
 *   sagaboard_t_<run>_<random>` on the local server (SAGABOARD_TEST_PG_URL, default
 *   postgresql://postgres@127.0.0.1:5432/postgres), migrated with lib/core/db/migrate-postgres.ts, and
 *   `DROP DATABASE ... WITH (FORCE)` afterwards (FORCE: child processes may still hold connections).
 *   tests/support/pg-global-setup.ts drops whatever a crashed test file left behind at the end.
 *
 * No vitest imports here, so scripts (the e2e server, benches) can use it too.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { migrateSqlite } from "@/lib/core/db/migrate";
import { migratePostgres } from "@/lib/core/db/migrate-postgres";
import type { DatabaseKind } from "@/lib/core/db/url";

/** The store the vitest suites run on this time (`npm test` runs them once on each). */
export function testStoreKind(env: NodeJS.ProcessEnv = process.env): DatabaseKind {
  const pgFlag = env.SAGABOARD_TEST_PG;
  const named = env.TEST_DATABASE?.toLowerCase();
  return pgFlag === "1" || pgFlag === "true" || named === "postgresql" || named === "postgres" ? "postgresql" : "sqlite";
}

/** The PostgreSQL server's maintenance database, where throwaway databases are created and dropped. */
export function testPostgresAdminUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.SAGABOARD_TEST_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
}

/** Names every throwaway database of one test run, so the run's global teardown can find leftovers. */
export const TEST_DATABASE_PREFIX = "sagaboard_t_";

/** This run's tag (set by the global setup, inherited by the test processes); a random one otherwise. */
function runTag(): string {
  process.env.SAGABOARD_TEST_RUN ??= randomBytes(3).toString("hex");
  return process.env.SAGABOARD_TEST_RUN;
}

/** A database name reserved for one use; `create` makes it, `drop` throws it away. */
export interface ThrowawayDatabase {
  /** Which store. */
  kind: DatabaseKind;
  /** DATABASE_URL for it (known before `create`, so a test file can set the environment first). */
  url: string;
  /** The same database without the test run's pooler (SAGABOARD_TEST_PG_POOLER_URL): for migrations, as DATABASE_DIRECT_URL. */
  directUrl: string;
  /** Creates it and, unless told otherwise, applies this store's migrations. */
  create: (options?: { migrate?: boolean }) => Promise<void>;
  /** Throws it away (idempotent; connections still open are cut on PostgreSQL). */
  drop: () => Promise<void>;
}

async function withAdmin<T>(fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: testPostgresAdminUrl(), connectionTimeoutMillis: 10_000 });
  try {
    await admin.connect();
  } catch (e) {
    throw new Error(
      `The PostgreSQL test run needs a server at ${testPostgresAdminUrl()} (SAGABOARD_TEST_PG_URL): ${e instanceof Error ? e.message : String(e)}. ` +
        "Start it (`pg_ctlcluster 15 main start` on Debian) or run the SQLite suite (unset SAGABOARD_TEST_PG).",
      { cause: e },
    );
  }
  try {
    return await fn(admin);
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** Reserves a throwaway database of `kind` (default: this run's store); `label` names the SQLite folder. */
export function reserveTestDatabase(label: string, kind: DatabaseKind = testStoreKind()): ThrowawayDatabase {
  if (kind === "sqlite") {
    const dir = mkdtempSync(path.join(os.tmpdir(), `sagaboard-${label}-`));
    const file = path.join(dir, "test.db");
    return {
      kind,
      url: `file:${file}`,
      directUrl: `file:${file}`,
      create: async ({ migrate = true } = {}) => {
        if (migrate) migrateSqlite(file);
        else new Database(file).close();
      },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  return postgresTestDatabase(`${TEST_DATABASE_PREFIX}${runTag()}_${randomBytes(6).toString("hex")}`, { shared: false });
}

/**
 * A pooler in front of the test server (SAGABOARD_TEST_PG_POOLER_URL, e.g. PgBouncer in transaction
 * mode: `postgresql://postgres@127.0.0.1:6433/postgres?pgbouncer=true`, started by scripts/pgbouncer.ts):
 * when set, the tests and their servers connect through it, while creating, migrating and dropping
 * databases stays direct (SAGABOARD_TEST_PG_URL), as a deployment's DATABASE_DIRECT_URL does.
 */
export function testPostgresPoolerUrl(env: NodeJS.ProcessEnv = process.env): string | null {
  return env.SAGABOARD_TEST_PG_POOLER_URL?.trim() || null;
}

/** The URL of the throwaway PostgreSQL database `name`: through the pooler when there is one, unless `direct`. */
export function testPostgresUrl(name: string, { direct = false }: { direct?: boolean } = {}): string {
  const url = new URL((!direct && testPostgresPoolerUrl()) || testPostgresAdminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** The test server's own URL for the database `url` names (`url` may go through the pooler): for tools that need a session, such as pg_dump. */
export function directTestPostgresUrl(url: string): string {
  return testPostgresUrl(decodeURIComponent(new URL(url).pathname.slice(1)), { direct: true });
}

/** Options of `postgresTestDatabase`. */
export interface PostgresTestDatabaseOptions {
  /**
   * Whether the name is known to other processes (default true; the browser suite's config names it,
   * its server creates it and drops it): `create` then first drops a leftover of that name, and `drop`
   * drops it whoever created it. A freshly reserved random name (false) is dropped only once created.
   */
  shared?: boolean;
}

/** The throwaway PostgreSQL database `name`, which must start with TEST_DATABASE_PREFIX (it gets dropped). */
export function postgresTestDatabase(name: string, { shared = true }: PostgresTestDatabaseOptions = {}): ThrowawayDatabase {
  if (!name.startsWith(TEST_DATABASE_PREFIX)) {
    throw new Error(`Throwaway test databases are named ${TEST_DATABASE_PREFIX}...; "${name}" might be someone's real data, so it is left alone.`);
  }
  const url = testPostgresUrl(name);
  const dropSql = `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`;
  let created = false;
  return {
    kind: "postgresql",
    url,
    directUrl: testPostgresUrl(name, { direct: true }),
    create: async ({ migrate = true } = {}) => {
      await withAdmin(async (admin) => {
        if (shared) await admin.query(dropSql);
        await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      });
      created = true;
      if (migrate) await migratePostgres(testPostgresUrl(name, { direct: true }));
    },
    drop: async () => {
      if (!created && !shared) return;
      await withAdmin((admin) => admin.query(dropSql));
      created = false;
    },
  };
}

/** Creates and migrates a throwaway database at once. */
export async function createTestDatabase(label: string, kind: DatabaseKind = testStoreKind()): Promise<ThrowawayDatabase> {
  const db = reserveTestDatabase(label, kind);
  await db.create();
  return db;
}

/** Drops every throwaway database whose name starts with `prefix` (the global teardown's sweep). */
export async function dropTestDatabases(prefix: string): Promise<string[]> {
  return withAdmin(async (admin) => {
    const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE starts_with(datname, $1)", [prefix]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`);
    return rows.map((r) => r.datname);
  });
}
