import path from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { defineConfig } from "prisma/config";
import { sqliteFilePath } from "./lib/db/url";

// The JS engine with a driver adapter works offline; Prisma's classic engine would download binaries.
export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: path.join("prisma", "schema.prisma"),
  migrations: { path: path.join("prisma", "migrations") },
  async adapter() {
    return new PrismaBetterSQLite3({ url: `file:${sqliteFilePath()}` });
  },
});
