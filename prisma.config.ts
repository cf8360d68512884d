import { mkdirSync } from "node:fs";
import path from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { defineConfig } from "prisma/config";
import { databaseKindOfUrl, sqliteFilePath } from "./lib/core/db/url";

// The JS engine with a driver adapter works offline; Prisma's classic engine would download binaries.
export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: path.join("prisma", "schema.prisma"),
  migrations: { path: path.join("prisma", "migrations") },
  async adapter() {
    // This config is the SQLite one. PostgreSQL: `npm run db:migrate` applies prisma/postgres/migrations
    // offline; where Prisma's engines can be downloaded, use prisma/postgres/prisma.config.ts instead.
    if (databaseKindOfUrl() === "postgresql") {
      throw new Error(
        "DATABASE_URL names PostgreSQL, but prisma.config.ts is the SQLite config: run `npm run db:migrate`, " +
          "or pass `--config prisma/postgres/prisma.config.ts` to the Prisma CLI.",
      );
    }
    // The CLI opens the database even for commands that do not need it (migrate diff): on a fresh
    // clone data/ does not exist yet, and better-sqlite3 cannot create a file in a missing folder.
    const file = sqliteFilePath();
    mkdirSync(path.dirname(file), { recursive: true });
    return new PrismaBetterSQLite3({ url: `file:${file}` });
  },
});
