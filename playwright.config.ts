/**
 * Browser tests: Chromium against a production build, on either store.
 * - `npm run test:e2e` (SQLite): `npm run e2e:server` deletes and migrates a throwaway SQLite file
 *   under test-results/ and serves it on port 3210.
 * - `npm run test:e2e:pg` (SAGABOARD_TEST_PG=1): the server creates and migrates a throwaway
 *   PostgreSQL database (`sagaboard_t_<run>_e2e` on the local server, see tests/support/test-database.ts),
 *   serves it from two app instances (ports 3210 and 3211: same build, same DATABASE_URL, same
 *   NEXTAUTH_SECRET) and drops it when Playwright stops the server.
 * Tests seed their own uniquely named users directly in that database (tests/e2e/fixtures.ts) and never
 * delete shared data; they talk to the first instance, except tests/e2e/two-instances.spec.ts.
 *
 * Screenshots that tests take on purpose go to test-results/screenshots/ (`screenshotPath`);
 * traces of failed tests stay in test-results/<test>/ (`npx playwright show-trace <zip>`).
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, devices } from "@playwright/test";
import { TEST_DATABASE_PREFIX, testPostgresUrl, testStoreKind } from "./tests/support/test-database";

const root = path.dirname(fileURLToPath(import.meta.url));
const port = Number(process.env.E2E_PORT ?? 3210);
const baseURL = `http://localhost:${port}`;
const postgres = testStoreKind() === "postgresql";
/** The second app instance (PostgreSQL only): the next port. */
const portB = port + 1;

// The test process opens the same database as the server (fixtures.ts reads DATABASE_URL), so this is
// set here, for both, and never inherited: the e2e suite must not touch a developer's data.
// Playwright loads this file again in each worker process, which inherits this process's environment:
// the ??= keep one run tag (so one database name) for the runner, the server and the workers.
if (postgres) {
  process.env.SAGABOARD_TEST_RUN ??= randomBytes(3).toString("hex");
  process.env.DATABASE_URL = testPostgresUrl(`${TEST_DATABASE_PREFIX}${process.env.SAGABOARD_TEST_RUN}_e2e`);
  // Both instances must read each other's session cookies; no secret file in anyone's data/ folder.
  process.env.NEXTAUTH_SECRET ??= randomBytes(32).toString("base64url");
  process.env.SAGABOARD_DATA_DIR = path.join(root, "test-results");
  /** Where the second instance answers (tests/e2e/two-instances.spec.ts); unset on SQLite. */
  process.env.E2E_SECOND_BASE_URL = `http://localhost:${portB}`;
} else {
  // SAGABOARD_E2E_DB names another file, so two suites on one machine never share (and reset) one.
  process.env.DATABASE_URL = `file:${path.join(root, "test-results", process.env.SAGABOARD_E2E_DB || "e2e.db")}`;
  delete process.env.E2E_SECOND_BASE_URL;
}

/** Debian's Chromium when installed (CI, containers); otherwise the browser `npx playwright install` fetched. */
const chromiumPath = process.env.PLAYWRIGHT_CHROMIUM_PATH ?? (existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined);

// The suite's webhook receivers listen on 127.0.0.1, which the notifier refuses by default: this is
// the documented development switch (lib/server/notifications/webhook-target.ts), for the server and for
// the notifiers the tests run in their own processes.
process.env.SAGABOARD_WEBHOOKS_ALLOW_PRIVATE = "1";

const serverEnv: Record<string, string> = {};
for (const [name, value] of Object.entries(process.env)) if (value !== undefined) serverEnv[name] = value;

/**
 * `npm test` runs the whole suite on SQLite and, on PostgreSQL, the specs whose subject is the store
 * (SAGABOARD_E2E_STORE_SPECS=1): two app instances on one database, people racing for one claim, pull
 * or send, a worker's tasks, the commit after a pivot, a plan's hash, the audit chain, the overview's
 * aggregates, sessions read per request. The other specs are about a screen, whose code and queries
 * are the same on both stores (and vitest runs every query on both); `npm run test:e2e:pg` runs them all.
 */
const STORE_SPECS = [
  "two-instances",
  "commit-after-pivot",
  "pivot",
  "stale-plan",
  "queue",
  "revokes",
  "corrections",
  "check-by-worker",
  "audit",
  "overview",
  "auth",
];
const storeSpecsOnly = postgres && process.env.SAGABOARD_E2E_STORE_SPECS === "1";

export default defineConfig({
  testDir: "tests/e2e",
  ...(storeSpecsOnly ? { testMatch: STORE_SPECS.map((name) => `${name}.spec.ts`) } : {}),
  // One folder per store, so the SQLite run's traces survive the PostgreSQL run that follows it.
  outputDir: postgres ? "test-results/pg" : "test-results/sqlite",
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: 1,
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: process.env.CI ? [["list"], ["html", { open: "never", outputFolder: postgres ? "playwright-report/pg" : "playwright-report/sqlite" }]] : "list",
  use: {
    baseURL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      executablePath: chromiumPath,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    },
  },
  projects: [{ name: postgres ? "chromium-postgres" : "chromium-sqlite", use: { ...devices["Desktop Chrome"], viewport: { width: 1280, height: 800 } } }],
  webServer: {
    // Not through npm: Playwright stops the server with SIGTERM and then waits for this process, which
    // on PostgreSQL must outlive both instances to drop the database.
    command: "node --import tsx scripts/e2e-server.ts",
    url: `${baseURL}/api/health`,
    // Always a fresh server: the database it starts with is part of the test.
    reuseExistingServer: false,
    // The first run builds the app (with SAGABOARD_E2E_PREBUILT=1, `npm test` builds once for both stores).
    timeout: 10 * 60_000,
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
    env: {
      ...serverEnv,
      PORT: String(port),
      // The browser suite's agents and oracle use the hosted simulated systems.
      SAGABOARD_SIM: "1",
      // The overview's fold (instrumentation.ts) opens the server's database client a moment after
      // start, before any request does, as in a deployment that sees no request for its first 30 s:
      // every spec then runs with the routes beside a client another bundle opened.
      SAGABOARD_OVERVIEW_FOLD_MS: "250",
      ...(postgres ? { E2E_SECOND_PORT: String(portB) } : {}),
      NEXTAUTH_URL: baseURL,
    },
  },
});
