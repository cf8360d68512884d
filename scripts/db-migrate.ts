/**
 * Applies the committed migrations to DATABASE_URL's database.
 * - SQLite (default, or `file:...`): prisma/migrations to the file, creating it and its folder if
 *   needed, with Prisma's own `migrate deploy` (offline on SQLite with the JS engine configured in
 *   prisma.config.ts).
 * - PostgreSQL (`postgresql://` or `postgres://`): prisma/postgres/migrations with our runner
 *   (lib/db/migrate-postgres.ts), because Prisma's JS schema engine cannot introspect PostgreSQL; it
 *   records them in `_prisma_migrations` as `prisma migrate deploy` does, creating the database first
 *   if it does not exist.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { migratePostgres } from "@/lib/db/migrate-postgres";
import { databaseKindOfUrl, redactUrl, sqliteFilePath } from "@/lib/db/url";

const url = process.env.DATABASE_URL;
if (databaseKindOfUrl(url) === "postgresql" && url) {
  const { applied, skipped } = await migratePostgres(url);
  for (const name of applied) console.log(`db:migrate: applied ${name}`);
  console.log(`db:migrate: ${redactUrl(url)} is up to date (${applied.length} applied, ${skipped.length} already applied).`);
} else {
  const file = sqliteFilePath();
  mkdirSync(path.dirname(file), { recursive: true });
  execFileSync(process.platform === "win32" ? "npx.cmd" : "npx", ["prisma", "migrate", "deploy"], { stdio: "inherit" });
  console.log(`db:migrate: ${file} is up to date.`);
}
