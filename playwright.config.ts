/**
 * Browser tests (`npm run test:e2e`): Chromium against a production build served by
 * `npm run e2e:server` on port 3210, with a throwaway SQLite file under test-results/ that the
 * server deletes and migrates on start. Tests seed their own uniquely named users directly in that
 * file (tests/e2e/fixtures.ts) and never delete shared data.
 *
 * Screenshots that tests take on purpose go to test-results/screenshots/ (`screenshotPath`);
 * traces of failed tests stay in test-results/<test>/ (`npx playwright show-trace <zip>`).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, devices } from "@playwright/test";

const root = path.dirname(fileURLToPath(import.meta.url));
const port = Number(process.env.E2E_PORT ?? 3210);
const baseURL = `http://localhost:${port}`;

// The test process opens the same file as the server (fixtures.ts reads DATABASE_URL), so this is set
// here, for both, and never inherited: the e2e suite must not touch a developer's data/sagaboard.db.
process.env.DATABASE_URL = `file:${path.join(root, "test-results", "e2e.db")}`;

/** Debian's Chromium when installed (CI, containers); otherwise the browser `npx playwright install` fetched. */
const chromiumPath = process.env.PLAYWRIGHT_CHROMIUM_PATH ?? (existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined);

const serverEnv: Record<string, string> = {};
for (const [name, value] of Object.entries(process.env)) if (value !== undefined) serverEnv[name] = value;

export default defineConfig({
  testDir: "tests/e2e",
  outputDir: "test-results",
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: 1,
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: process.env.CI ? [["list"], ["html", { open: "never", outputFolder: "playwright-report" }]] : "list",
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
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"], viewport: { width: 1280, height: 800 } } }],
  webServer: {
    command: "npm run e2e:server",
    url: `${baseURL}/api/health`,
    // Always a fresh server: the database it starts with is part of the test.
    reuseExistingServer: false,
    // The first run builds the app.
    timeout: 10 * 60_000,
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 5_000 },
    env: {
      ...serverEnv,
      PORT: String(port),
      NEXTAUTH_URL: baseURL,
    },
  },
});
