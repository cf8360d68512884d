import path from "node:path";
import { defineConfig } from "prisma/config";

// The hand-over to Prisma's own tooling on PostgreSQL, for deployments that can download Prisma's
// engines: `npx prisma migrate deploy --config prisma/postgres/prisma.config.ts` (or `migrate status`).
// It uses the classic (binary) schema engine because the JS one cannot introspect PostgreSQL here
// (see lib/core/db/migrate-postgres.ts, which applies the same migrations offline and records them in
// `_prisma_migrations` the way this command does, so either may run after the other).
// Paths are relative to the directory the CLI runs in: run it from the project root.
export default defineConfig({
  engine: "classic",
  datasource: { url: process.env.DATABASE_URL ?? "" },
  schema: path.join("prisma", "postgres", "schema.prisma"),
  migrations: { path: path.join("prisma", "postgres", "migrations") },
});
