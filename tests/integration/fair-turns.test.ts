/**
 * A long loop of awaited queries on the SQLite client lets other work in the process run between
 * them (lib/core/db/serialized-adapter.ts, fair turns). The driver is synchronous, so without the turns
 * each query settles as a microtask and a timer set before the loop fires only after it: the app's
 * stuck-run sweep once held every page and GET /api/health for seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { FAIR_TURN_MS } from "@/lib/core/db/serialized-adapter";
import { reserveTestDatabase, testStoreKind } from "../support/test-database";

const SQLITE = testStoreKind() === "sqlite";
const database = reserveTestDatabase("fair-turns");
let prisma: PrismaClient;

beforeAll(async () => {
  if (!SQLITE) return;
  await database.create();
  prisma = await openPrisma(database.url);
});

afterAll(async () => {
  await prisma?.$disconnect();
  if (SQLITE) await database.drop();
});

describe.skipIf(!SQLITE)("the SQLite client (its driver is synchronous; PostgreSQL's is not, so nothing to show there)", () => {
  it("gives a timer its turn while a loop of queries runs, instead of after the loop", async () => {
    const QUERIES = 2_000;
    let done = 0;
    let doneWhenTimerRan = -1;
    const started = performance.now();
    let timerLateMs = -1;
    setTimeout(() => {
      doneWhenTimerRan = done;
      timerLateMs = performance.now() - started;
    }, 0);
    for (; done < QUERIES; done++) await prisma.user.findFirst({ where: { email: `nobody-${done}@example.com` } });
    const loopMs = performance.now() - started;
    // The loop takes far longer than a turn, so the timer must have run while it was under way.
    expect(loopMs).toBeGreaterThan(FAIR_TURN_MS * 5);
    expect(doneWhenTimerRan).toBeGreaterThanOrEqual(0);
    expect(doneWhenTimerRan).toBeLessThan(QUERIES);
    expect(timerLateMs).toBeLessThan(loopMs / 2);
  });
});
