/**
 * Applies prisma/postgres/migrations to a PostgreSQL database without Prisma's schema engine.
 *
 * Why our own runner: Prisma's JS schema engine (the only one that works offline, see
 * prisma.config.ts) fails on PostgreSQL introspection here, so `prisma migrate deploy` cannot run
 * against PostgreSQL without downloading the classic engine. This runner does what `migrate deploy`
 * does and records it the same way, so a deployment that can download the engines may switch to
 * `npx prisma migrate deploy --config prisma/postgres/prisma.config.ts` at any point (and back):
 * - the `_prisma_migrations` table with Prisma's own PostgreSQL DDL;
 * - one row per applied migration: a uuid id, checksum = sha256 hex of migration.sql's bytes,
 *   started_at / finished_at, applied_steps_count 1, logs and rolled_back_at NULL;
 * - Prisma's migration advisory lock (72707369), so this runner, `prisma migrate deploy` and several
 *   app instances starting at once never apply a migration twice.
 * Unlike `migrate deploy`, each migration and its row commit in one transaction (PostgreSQL has
 * transactional DDL): a failing migration leaves nothing behind. So a migration must not use
 * statements that refuse to run in a transaction (CREATE INDEX CONCURRENTLY and the like).
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import type { MigrateResult } from "./migrate";
import { postgresTarget, redactUrl } from "./url";

export type { MigrateResult };

/** Where the PostgreSQL migrations live. */
export const DEFAULT_POSTGRES_MIGRATIONS_DIR = path.join(process.cwd(), "prisma", "postgres", "migrations");

/** The advisory lock key Prisma Migrate takes on PostgreSQL (schema engine, postgres flavour). */
export const PRISMA_MIGRATE_LOCK = 72707369;

// Prisma's bookkeeping table, exactly as the schema engine creates it on PostgreSQL.
const MIGRATIONS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/** The sha256 hex of a migration script, as Prisma records it. */
export function migrationChecksum(script: string | Buffer): string {
  return createHash("sha256").update(script).digest("hex");
}

/** The migrations in `dir`, in name order (the folder names carry a timestamp prefix). */
function migrationNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => statSync(path.join(dir, name)).isDirectory() && existsSync(path.join(dir, name, "migration.sql")))
    .sort();
}

/** Connects to `url`; when its database does not exist yet, creates it first (as `migrate deploy` would need). */
async function connectCreatingDatabase(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 30_000 });
  try {
    await client.connect();
    return client;
  } catch (e) {
    await client.end().catch(() => undefined);
    if ((e as { code?: string }).code !== "3D000") throw e; // invalid_catalog_name: no such database
  }
  const target = new URL(url);
  const database = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const maintenance = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 30_000 });
  await maintenance.connect();
  try {
    await maintenance.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } catch (e) {
    if ((e as { code?: string }).code !== "42P04") throw e; // duplicate_database: another process won
  } finally {
    await maintenance.end();
  }
  const client2 = new pg.Client({ connectionString: url, connectionTimeoutMillis: 30_000 });
  await client2.connect();
  return client2;
}

/**
 * Applies the migrations in `migrationsDir` that `_prisma_migrations` does not record as applied,
 * in name order. Idempotent. Refuses to run past a migration Prisma recorded as failed (as `migrate
 * deploy` does: resolve it with `prisma migrate resolve`), and warns about applied migrations whose
 * file changed since.
 */
export async function migratePostgres(url: string, migrationsDir: string = DEFAULT_POSTGRES_MIGRATIONS_DIR): Promise<MigrateResult> {
  if (postgresTarget(url).transactionPooled) {
    // Through a pooler in transaction mode the lock below would stay on whichever server connection
    // took it, and its unlock go to another: the next migration would wait on it forever.
    throw new Error(
      `${redactUrl(url)} goes through a pooler in transaction mode (pgbouncer=true), and migrations hold a session lock across their transactions. ` +
        "Set DATABASE_DIRECT_URL to the PostgreSQL server itself (npm run db:migrate uses it), or run the migrations with the server's own URL.",
    );
  }
  const names = migrationNames(migrationsDir);
  let client: pg.Client;
  try {
    client = await connectCreatingDatabase(url);
  } catch (e) {
    throw new Error(`Cannot reach PostgreSQL at ${redactUrl(url)}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  try {
    // Session-level: held across the per-migration transactions below, released by unlock or disconnect.
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK]);
    try {
      await client.query(MIGRATIONS_TABLE_SQL);
      const { rows } = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }>(
        `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
      );
      const failed = rows.filter((r) => r.finished_at === null && r.rolled_back_at === null);
      if (failed.length > 0) {
        throw new Error(
          `Migration ${failed.map((r) => r.migration_name).join(", ")} failed earlier and is recorded as unfinished in _prisma_migrations. ` +
            "Fix the database by hand, then mark it with `npx prisma migrate resolve --applied|--rolled-back <name> --config prisma/postgres/prisma.config.ts` " +
            "(or delete its row), and migrate again.",
        );
      }
      const applied = new Map(rows.filter((r) => r.finished_at !== null && r.rolled_back_at === null).map((r) => [r.migration_name, r.checksum]));
      const result: MigrateResult = { applied: [], skipped: [] };
      for (const name of names) {
        const script = readFileSync(path.join(migrationsDir, name, "migration.sql"));
        const checksum = migrationChecksum(script);
        const recorded = applied.get(name);
        if (recorded !== undefined) {
          if (recorded !== checksum) {
            console.warn(`[db] migration ${name} was modified after it was applied (checksum differs); it is not applied again.`);
          }
          result.skipped.push(name);
          continue;
        }
        await client.query("BEGIN");
        try {
          const id = randomUUID();
          await client.query(
            `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, clock_timestamp(), 0)`,
            [id, checksum, name],
          );
          // No parameters: the simple query protocol runs the whole multi-statement script.
          await client.query(script.toString("utf8"));
          await client.query(`UPDATE "_prisma_migrations" SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1`, [id]);
          await client.query("COMMIT");
        } catch (e) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw new Error(`Migration ${name} failed and was rolled back: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
        }
        result.applied.push(name);
      }
      return result;
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_MIGRATE_LOCK]).catch(() => undefined);
    }
  } finally {
    await client.end();
  }
}
