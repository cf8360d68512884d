/**
 * Vitest global setup for the PostgreSQL run (SAGABOARD_TEST_PG=1): checks once, up front, that the
 * server is there (one clear message instead of a failure per file), tags this run's throwaway
 * databases (SAGABOARD_TEST_RUN, inherited by the test processes), and at the end drops any of them a
 * crashed or timed-out test file left behind. Other runs' databases (a colleague's concurrent run on
 * the same server) have other tags and are left alone. Nothing to do on SQLite.
 */
import { randomBytes } from "node:crypto";
import { dropTestDatabases, TEST_DATABASE_PREFIX, testStoreKind, createTestDatabase } from "./test-database";

export default async function setup(): Promise<(() => Promise<void>) | void> {
  if (testStoreKind() !== "postgresql") return;
  process.env.SAGABOARD_TEST_RUN ??= randomBytes(3).toString("hex");
  const prefix = `${TEST_DATABASE_PREFIX}${process.env.SAGABOARD_TEST_RUN}_`;
  // Creating, migrating and dropping one database proves the server, the rights and the migrations.
  const probe = await createTestDatabase("probe", "postgresql");
  await probe.drop();
  return async () => {
    const left = await dropTestDatabases(prefix);
    if (left.length > 0) console.warn(`[pg] dropped ${left.length} throwaway database(s) a test file left behind: ${left.join(", ")}`);
  };
}
