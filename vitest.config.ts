import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // @sagaboard/client from its source, as tsconfig.json's paths have it: the gateway imports the client
    // by name, and the suites run without a build.
    alias: [
      { find: /^@sagaboard\/client$/, replacement: fileURLToPath(new URL("./packages/client/src/index.ts", import.meta.url)) },
      { find: /^@sagaboard\/client\/([a-z-]+)$/, replacement: fileURLToPath(new URL("./packages/client/src/", import.meta.url)) + "$1.ts" },
      { find: "@", replacement: fileURLToPath(new URL("./", import.meta.url)) },
    ],
  },
  test: {
    include: ["lib/**/*.test.ts", "packages/*/src/**/*.test.ts", "tests/integration/**/*.test.ts", "tests/api/**/*.test.ts", "tests/process/**/*.test.ts", "tests/faults/**/*.test.ts", "tests/mcp/**/*.test.ts", "tests/layout/**/*.test.ts"],
    environment: "node",
    // The simulated systems are off unless turned on; the suites drive them (RemoteWorld, /api/sim).
    // Webhook receivers in the suites listen on 127.0.0.1: the development switch lets the notifier
    // reach them (tests/api/webhook-targets.test.ts passes a strict policy explicitly).
    env: { SAGABOARD_SIM: "1", SAGABOARD_WEBHOOKS_ALLOW_PRIVATE: "1" },
    testTimeout: 30_000,
    // Integration suites share one SQLite file per worker; forks keep native handles apart.
    pool: "forks",
    // The PostgreSQL run (SAGABOARD_TEST_PG=1, `npm run test:pg`): checks the server once and drops
    // any throwaway database a crashed test file left behind (a no-op on SQLite).
    globalSetup: ["tests/support/pg-global-setup.ts"],
  },
});
