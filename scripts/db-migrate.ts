/**
 * Applies the committed migrations to DATABASE_URL's database.
 * - SQLite (default, or `file:...`): prisma/migrations to the file, creating it and its folder if
 *   needed, with Prisma's own `migrate deploy` (offline on SQLite with the JS engine configured in
 *   prisma.config.ts).
 * - PostgreSQL (`postgresql://` or `postgres://`): prisma/postgres/migrations with our runner
 *   (lib/core/db/migrate-postgres.ts), because Prisma's JS schema engine cannot introspect PostgreSQL; it
 *   records them in `_prisma_migrations` as `prisma migrate deploy` does, creating the database first
 *   if it does not exist. Behind a pooler in transaction mode (`?pgbouncer=true`), DATABASE_DIRECT_URL
 *   names the server itself, for the migrations' session lock.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { migratePostgres } from "@/lib/core/db/migrate-postgres";
import { databaseKindOfUrl, redactUrl, sqliteFilePath } from "@/lib/core/db/url";

const url = process.env.DATABASE_URL;
if (databaseKindOfUrl(url) === "postgresql" && url) {
  // Behind a pooler in transaction mode (DATABASE_URL ...?pgbouncer=true) the migrations go straight to
  // the server: their lock is a session lock, which a transaction pooler cannot keep.
  const direct = process.env.DATABASE_DIRECT_URL?.trim() || url;
  const { applied, skipped } = await migratePostgres(direct);
  for (const name of applied) console.log(`db:migrate: applied ${name}`);
  console.log(`db:migrate: ${redactUrl(direct)} is up to date (${applied.length} applied, ${skipped.length} already applied).`);
} else {
  const file = sqliteFilePath();
  mkdirSync(path.dirname(file), { recursive: true });
  // Prisma's own report (its config banner, the driver-adapter notice, every migration's folder) is
  // printed only when it fails; otherwise one line says what was applied.
  let out: string;
  try {
    out = execFileSync(process.platform === "win32" ? "npx.cmd" : "npx", ["prisma", "migrate", "deploy"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    const failed = e as { stdout?: string; stderr?: string; status?: number };
    process.stderr.write(`${failed.stdout ?? ""}${failed.stderr ?? ""}`);
    console.error(`db:migrate: prisma migrate deploy failed on ${file} (exit ${failed.status ?? "?"}); its output is above.`);
    process.exit(failed.status ?? 1);
  }
  const applied = [...out.matchAll(/└─ (\S+)\/\s*$/gm)].map((m) => m[1]);
  console.log(applied.length > 0 ? `db:migrate: applied ${applied.length} migration(s) to ${file}.` : `db:migrate: ${file} is up to date.`);
}

// The master key that seals personal data must be this database's: a wrong one stops the start here,
// with what to do, before any process seals a value under it (lib/core/privacy/ARCHITECTURE.md).
{
  const { openPrisma } = await import("@/lib/core/db/prisma");
  const { personalDataVault, WrongMasterKey } = await import("@/lib/core/privacy/personal-data-vault");
  const prisma = await openPrisma(url);
  try {
    await personalDataVault(prisma).loadKeyring();
  } catch (e) {
    console.error(`db:migrate: ${e instanceof WrongMasterKey ? e.message : `cannot load the personal-data keyring: ${(e as Error).message}`}`);
    process.exitCode = 1;
  } finally {
    await prisma.$disconnect();
  }
}
