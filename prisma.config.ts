import path from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { defineConfig } from "prisma/config";
import { databaseKindOfUrl, sqliteFilePath } from "./lib/db/url";

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
    return new PrismaBetterSQLite3({ url: `file:${sqliteFilePath()}` });
  },
});
