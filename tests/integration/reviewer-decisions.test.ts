/** Reviewers' decisions (edit before approve, rejection codes, manual repairs) on PrismaSagaStore: SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1. */
import { afterAll, beforeAll } from "vitest";
import { openPrisma } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { describeReviewerStoreContract } from "@/tests/contract/reviewer-store-contract";
import { reserveTestDatabase } from "../support/test-database";

const database = reserveTestDatabase("reviewer");
const label = database.kind === "postgresql" ? "PostgreSQL" : "SQLite";

beforeAll(() => database.create());
afterAll(() => database.drop());

describeReviewerStoreContract(`PrismaSagaStore (${label})`, async () => {
  const client = await openPrisma(database.url);
  return { store: new PrismaSagaStore(client), cleanup: () => client.$disconnect() };
});
