/**
 * `npm run e2e:server`: the server the Playwright suite runs against (playwright.config.ts starts it
 * and sets DATABASE_URL; this script never deletes anyone's real data):
 * - SQLite: deletes and migrates the throwaway file named by DATABASE_URL (which must be under
 *   test-results/ or the OS temp directory), then runs `next start` on PORT;
 * - PostgreSQL: creates and migrates the throwaway database named by DATABASE_URL (which must be a
 *   `sagaboard_t_...` database on the test server), runs two `next start` instances on it, on
 *   E2E_SECOND_PORT first and then on PORT (so the suite, which waits for PORT, finds both up), and
 *   drops the database once both have stopped.
 * Builds the app first when the build is missing or older than the newest source file (always when
 * CI=true, unless SAGABOARD_E2E_PREBUILT=1 says the caller has just built it: `npm test` builds once
 * for both stores). `--build-only` builds and exits.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { migrateSqlite } from "@/lib/core/db/migrate";
import { databaseKindOfUrl, redactUrl, sqliteFilePath } from "@/lib/core/db/url";
import { postgresTestDatabase, testPostgresUrl, type ThrowawayDatabase } from "@/tests/support/test-database";
import { buildDir, needsBuild } from "./lib/build";

const root = process.cwd();
const port = process.env.PORT ?? "3210";
const secondPort = process.env.E2E_SECOND_PORT;
const npx = process.platform === "win32" ? "npx.cmd" : "npx";

/** Whether `file` lies inside `dir`. */
function isInside(file: string, dir: string): boolean {
  const relative = path.relative(dir, file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

/** Builds when needed; a caller that has just built (SAGABOARD_E2E_PREBUILT=1) is believed while a build exists. */
function buildIfNeeded(): void {
  const prebuilt = process.env.SAGABOARD_E2E_PREBUILT === "1" && existsSync(path.join(buildDir(root), "BUILD_ID"));
  const reason = prebuilt ? null : needsBuild();
  if (!reason) return;
  console.log(`e2e:server: building (${reason})...`);
  execFileSync(npx, ["next", "build"], { stdio: "inherit" });
}

/** The fresh SQLite file, or exits when DATABASE_URL names a file this script must not delete. */
function freshSqlite(): void {
  const dbFile = sqliteFilePath();
  if (!isInside(dbFile, path.join(root, "test-results")) && !isInside(dbFile, os.tmpdir())) {
    console.error(`e2e:server: ${dbFile} is not under test-results/ or ${os.tmpdir()}; it would be deleted, so the e2e server refuses it.`);
    process.exit(2);
  }
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${dbFile}${suffix}`, { force: true });
  mkdirSync(path.dirname(dbFile), { recursive: true });
  const { applied } = migrateSqlite(dbFile);
  console.log(`e2e:server: fresh database ${path.relative(root, dbFile)} (${applied.length} migrations).`);
}

/** The throwaway PostgreSQL database named by DATABASE_URL, or exits when it is not one. */
function throwawayPostgres(url: string): ThrowawayDatabase {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  // Only a database of the test server, with the throwaway prefix (postgresTestDatabase checks it).
  if (testPostgresUrl(name) !== url) {
    console.error(`e2e:server: ${redactUrl(url)} is not on the test server (SAGABOARD_TEST_PG_URL); it would be dropped, so the e2e server refuses it.`);
    process.exit(2);
  }
  try {
    return postgresTestDatabase(name);
  } catch (e) {
    console.error(`e2e:server: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(2);
  }
}

/** Resolves once `url` answers 200, or rejects when `child` exits first or `timeoutMs` passes. */
async function waitUntilUp(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server for ${url} exited (${child.exitCode ?? child.signalCode})`);
    const ok = await fetch(url).then((res) => res.ok, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

if (process.argv.includes("--build-only")) {
  buildIfNeeded();
  process.exit(0);
}

if (!process.env.DATABASE_URL) {
  console.error("e2e:server: set DATABASE_URL (playwright.config.ts does: a file under test-results/, or a sagaboard_t_... PostgreSQL database); refusing to guess.");
  process.exit(2);
}
const databaseUrl = process.env.DATABASE_URL;
const postgres = databaseKindOfUrl(databaseUrl) === "postgresql";
let database: ThrowawayDatabase | null = null;
if (postgres) {
  database = throwawayPostgres(databaseUrl);
  await database.create();
  console.log(`e2e:server: fresh database ${redactUrl(databaseUrl)} (migrated).`);
} else {
  freshSqlite();
}
buildIfNeeded();

/** `next start` on `p`, with next-auth's redirects built from its own address. */
function startInstance(p: string): ChildProcess {
  return spawn(npx, ["next", "start", "-p", p], { stdio: "inherit", env: { ...process.env, NEXTAUTH_URL: `http://localhost:${p}` } });
}

const instances: ChildProcess[] = [];
let stopping = false;

/** Stops every instance, waits for them, drops the PostgreSQL database, exits. */
async function stop(code: number, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (stopping) return;
  stopping = true;
  await Promise.all(
    instances.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill(signal);
        }),
    ),
  );
  if (database) {
    await database.drop().then(
      () => console.log("e2e:server: dropped the throwaway database."),
      (e: unknown) => console.error(`e2e:server: could not drop the throwaway database: ${e instanceof Error ? e.message : String(e)}`),
    );
  }
  process.exit(code);
}

for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void stop(0, signal));

try {
  if (postgres && secondPort) {
    // The second instance first: Playwright waits only for PORT, and by then both must answer.
    const second = startInstance(secondPort);
    instances.push(second);
    second.on("exit", (code) => void stop(code ?? 1));
    await waitUntilUp(`http://localhost:${secondPort}/api/health`, second, 120_000);
    console.log(`e2e:server: second instance up on port ${secondPort}.`);
  }
  const first = startInstance(port);
  instances.push(first);
  first.on("exit", (code) => void stop(code ?? 0));
} catch (e) {
  console.error(`e2e:server: ${e instanceof Error ? e.message : String(e)}`);
  await stop(1);
}
