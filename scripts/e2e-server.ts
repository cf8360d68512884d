/**
 * `npm run e2e:server`: the server the Playwright suite runs against (playwright.config.ts starts
 * it). Deletes and migrates the throwaway SQLite file named by DATABASE_URL (which must be under
 * test-results/ or the OS temp directory: this script never deletes anyone's real data), builds the
 * app when the build is missing or older than the newest source file (always when CI=true), then
 * runs `next start` on PORT.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { migrateSqlite } from "@/lib/db/migrate";
import { sqliteFilePath } from "@/lib/db/url";
import { needsBuild } from "./lib/build";

const root = process.cwd();
const port = process.env.PORT ?? "3210";
const npx = process.platform === "win32" ? "npx.cmd" : "npx";

/** Whether `file` lies inside `dir`. */
function isInside(file: string, dir: string): boolean {
  const relative = path.relative(dir, file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

if (!process.env.DATABASE_URL) {
  console.error("e2e:server: set DATABASE_URL=file:test-results/<name>.db (playwright.config.ts does); refusing to guess.");
  process.exit(2);
}
const dbFile = sqliteFilePath();
if (!isInside(dbFile, path.join(root, "test-results")) && !isInside(dbFile, os.tmpdir())) {
  console.error(`e2e:server: ${dbFile} is not under test-results/ or ${os.tmpdir()}; it would be deleted, so the e2e server refuses it.`);
  process.exit(2);
}
for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${dbFile}${suffix}`, { force: true });
mkdirSync(path.dirname(dbFile), { recursive: true });
const { applied } = migrateSqlite(dbFile);
console.log(`e2e:server: fresh database ${path.relative(root, dbFile)} (${applied.length} migrations).`);

const reason = needsBuild();
if (reason) {
  console.log(`e2e:server: building (${reason})...`);
  execFileSync(npx, ["next", "build"], { stdio: "inherit" });
}

const server = spawn(npx, ["next", "start", "-p", port], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
