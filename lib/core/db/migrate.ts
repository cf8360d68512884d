import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

/** Where the Prisma migrations live (prisma/migrations under the project). */
export const DEFAULT_MIGRATIONS_DIR = path.join(process.cwd(), "prisma", "migrations");

/** What a migration run did (migrateSqlite, migratePostgres). */
export interface MigrateResult {
  /** Migrations applied by this call, in order. */
  applied: string[];
  /** Migrations that were already recorded as applied. */
  skipped: string[];
}

// Prisma's own bookkeeping table (schema engine, SQLite flavour), so a later `prisma migrate deploy`
// sees these migrations as applied and does not run them again.
const MIGRATIONS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`;

/** Prisma stores timestamps in this table as ISO 8601 with an explicit offset. */
function prismaTimestamp(date: Date): string {
  return date.toISOString().replace("Z", "+00:00");
}

/**
 * Applies prisma/migrations/<name>/migration.sql in name order to the SQLite file at `filePath`
 * (created if missing), each migration and its `_prisma_migrations` record in one transaction.
 * For tests and first start without the Prisma CLI; `prisma migrate deploy` stays compatible.
 */
export function migrateSqlite(filePath: string, migrationsDir: string = DEFAULT_MIGRATIONS_DIR): MigrateResult {
  const names = readdirSync(migrationsDir)
    .filter((name) => statSync(path.join(migrationsDir, name)).isDirectory())
    .sort();
  const db = new Database(filePath, { timeout: 10_000 });
  try {
    db.pragma("journal_mode = WAL");
    db.exec(MIGRATIONS_TABLE_SQL);
    const done = new Set(
      db
        .prepare<[], { migration_name: string }>(
          `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        )
        .all()
        .map((row) => row.migration_name),
    );
    const record = db.prepare(
      `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
       VALUES (?, ?, ?, ?, NULL, NULL, ?, 1)`,
    );
    const result: MigrateResult = { applied: [], skipped: [] };
    for (const name of names) {
      if (done.has(name)) {
        result.skipped.push(name);
        continue;
      }
      const script = readFileSync(path.join(migrationsDir, name, "migration.sql"), "utf8");
      const checksum = createHash("sha256").update(script, "utf8").digest("hex");
      const startedAt = prismaTimestamp(new Date());
      db.transaction(() => {
        db.exec(script);
        record.run(randomUUID(), checksum, prismaTimestamp(new Date()), name, startedAt);
      }).immediate();
      result.applied.push(name);
    }
    return result;
  } finally {
    db.close();
  }
}
