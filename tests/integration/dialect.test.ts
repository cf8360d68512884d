/**
 * lib/core/db/dialect.ts on this run's store (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1): a client
 * and its transactions say which database they talk to (Prisma's `_activeProvider`, which a Prisma
 * upgrade could rename: this pins it), the database clock, and the writer serialisation that
 * PostgreSQL needs and SQLite gets from its write lock, including the "last enabled admin" check
 * that two concurrent transactions could otherwise both pass.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { containsIgnoringCaseSql, databaseKind, databaseNow, runSearchCandidates, serializeOn } from "@/lib/core/db/dialect";
import { Prisma } from "@/generated/prisma";
import { openPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { createUser } from "@/lib/server/users/create-user";
import { disableUser } from "@/lib/server/users/set-user-enabled";
import { reserveTestDatabase } from "../support/test-database";

const database = reserveTestDatabase("dialect");
let prisma: PrismaClient;

beforeAll(async () => {
  await database.create();
  prisma = await openPrisma(database.url);
});

afterAll(async () => {
  await prisma?.$disconnect();
  await database.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`the SQL dialect on ${database.kind}`, () => {
  it("a client and its interactive transactions know their database", async () => {
    expect(databaseKind(prisma)).toBe(database.kind);
    await prisma.$transaction(async (tx) => {
      expect(databaseKind(tx)).toBe(database.kind);
    });
  });

  it("reads the database clock as a Date, inside and outside transactions", async () => {
    const outside = await databaseNow(prisma);
    const inside = await prisma.$transaction((tx) => databaseNow(tx));
    for (const now of [outside, inside]) {
      expect(Math.abs(now.getTime() - Date.now())).toBeLessThan(5_000);
    }
    expect(inside.getTime()).toBeGreaterThanOrEqual(outside.getTime());
  });

  it("serializeOn makes a second transaction on the same name wait for the first to end", async () => {
    const order: string[] = [];
    const first = prisma.$transaction(async (tx) => {
      await serializeOn(tx, ["dialect-test"]);
      order.push("first locked");
      await sleep(300);
      order.push("first done");
    });
    await sleep(50);
    const second = prisma.$transaction(async (tx) => {
      await serializeOn(tx, ["dialect-test", "another-name"]);
      order.push("second locked");
    });
    await Promise.all([first, second]);
    // PostgreSQL: the advisory lock; SQLite: the adapter runs one transaction at a time anyway.
    expect(order).toEqual(["first locked", "first done", "second locked"]);
  });

  it("two admins disabled at once: exactly one is refused, so an enabled admin always remains", async () => {
    const by = { type: "system" as const, id: "dialect-test" };
    await createUser(prisma, { email: "a1@example.com", name: "A1", role: "admin", by });
    await createUser(prisma, { email: "a2@example.com", name: "A2", role: "admin", by });
    const results = await Promise.allSettled([
      disableUser(prisma, { email: "a1@example.com", by }),
      disableUser(prisma, { email: "a2@example.com", by }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: { code: "INVALID_TRANSITION" } });
    expect(await prisma.user.count({ where: { role: "admin", disabledAt: null } })).toBe(1);
  });

  it("runSearchCandidates names the runs whose customer contains the text, kept in step on insert, update and delete", async () => {
    const run = (id: string, onBehalfOf: string | null) =>
      prisma.run.create({ data: { id, title: "t", agent: "a", onBehalfOf, metadata: {}, status: "RUNNING" } });
    await run("run_search_1", "Zoë.Search@Example.com");
    await run("run_search_2", "zoe.search@example.org");
    await run("run_search_3", null);
    if (database.kind === "postgresql") {
      expect(await runSearchCandidates(prisma, "search@")).toBeNull(); // pg_trgm serves the ILIKE itself
      return;
    }
    const sorted = async (text: string, limit?: number) => (await runSearchCandidates(prisma, text, limit))?.sort() ?? null;
    expect(await sorted("SEARCH@example")).toEqual(["run_search_1", "run_search_2"]);
    expect(await sorted("example.org")).toEqual(["run_search_2"]);
    expect(await sorted("nobody-has-this")).toEqual([]);
    expect(await sorted("se")).toBeNull(); // shorter than a trigram: the caller scans
    expect(await sorted("search@", 1)).toBeNull(); // more than the limit: the caller scans
    await prisma.$transaction((tx) => runSearchCandidates(tx, "search@")); // inside a transaction too
    await prisma.run.update({ where: { id: "run_search_2" }, data: { onBehalfOf: "someone.else@example.net" } });
    expect(await sorted("search@")).toEqual(["run_search_1"]);
    expect(await sorted("else@example")).toEqual(["run_search_2"]);
    await prisma.run.delete({ where: { id: "run_search_1" } });
    expect(await sorted("search@")).toEqual([]);
  });

  it("a search for % or _ means them literally: no wildcard matches, on either store", async () => {
    const who = ["wild_card@x.test", "wildxcard@x.test", "100%off@x.test", "1000off@x.test"];
    for (const [i, onBehalfOf] of who.entries()) {
      await prisma.run.create({ data: { id: `run_wild${i}`, title: "t", agent: "a", onBehalfOf, metadata: {}, status: "RUNNING" } });
    }
    const search = async (q: string) => {
      const candidates = await runSearchCandidates(prisma, q);
      const among = candidates ? Prisma.sql`AND "id" IN (${Prisma.join(candidates.length ? candidates : [""])})` : Prisma.empty;
      const rows = await prisma.$queryRaw<{ onBehalfOf: string }[]>(
        Prisma.sql`SELECT "onBehalfOf" FROM "Run" WHERE substr("id", 1, 8) = 'run_wild' ${among} AND ${containsIgnoringCaseSql(databaseKind(prisma), Prisma.sql`"onBehalfOf"`, q)}`,
      );
      return rows.map((r) => r.onBehalfOf).sort();
    };
    expect(await search("wild_card")).toEqual(["wild_card@x.test"]);
    expect(await search("100%")).toEqual(["100%off@x.test"]);
    expect(await search("_")).toEqual(["wild_card@x.test"]);
    expect(await search("WILD")).toEqual(["wild_card@x.test", "wildxcard@x.test"]);
  });
});
