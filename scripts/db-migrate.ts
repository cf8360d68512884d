/**
 * Applies the committed migrations (prisma/migrations) to DATABASE_URL's SQLite file, creating it and
 * its folder if needed. Uses Prisma's own `migrate deploy`, which works offline on SQLite with the JS
 * engine configured in prisma.config.ts.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { sqliteFilePath } from "@/lib/db/url";

const file = sqliteFilePath();
mkdirSync(path.dirname(file), { recursive: true });
execFileSync(process.platform === "win32" ? "npx.cmd" : "npx", ["prisma", "migrate", "deploy"], { stdio: "inherit" });
console.log(`db:migrate: ${file} is up to date.`);
