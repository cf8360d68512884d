/**
 * Test harness: a simulated world on a manual clock, an engine over a chosen store, and the store
 * factories every scenario runs against (in-memory, Prisma on a fresh SQLite file, and with
 * SAGABOARD_TEST_PG=1 also Prisma on a fresh PostgreSQL database).
 */
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import type { DatabaseKind } from "@/lib/core/db/url";
import { openPrisma } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { CrashPoints } from "@/packages/client/src/saga/crash-points";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";
import { MemorySagaStore } from "@/packages/client/src/saga/memory-store";
import type { SagaStore } from "@/packages/client/src/saga/store";
import { World } from "@/lib/demo/sim";
import { createTestDatabase, testStoreKind } from "./test-database";

/** A store for one test, and how to throw it away. */
export interface StoreHandle {
  /** The store. */
  store: SagaStore;
  /** Releases connections and files. */
  cleanup: () => Promise<void>;
}

/** PrismaSagaStore on a fresh migrated database of `kind`, thrown away by `cleanup`. */
function prismaStore(kind: DatabaseKind): (clock: ManualClock) => Promise<StoreHandle> {
  return async () => {
    const db = await createTestDatabase("scenario", kind);
    const prisma = await openPrisma(db.url);
    return {
      store: new PrismaSagaStore(prisma),
      cleanup: async () => {
        await prisma.$disconnect();
        await db.drop();
      },
    };
  };
}

/**
 * Named store factories; scenario suites run once per entry. The PostgreSQL run (SAGABOARD_TEST_PG=1)
 * adds "prisma-postgres" next to the others, so the same scenarios also prove the PostgreSQL store.
 */
export const storeFactories: { name: string; make: (clock: ManualClock) => Promise<StoreHandle> }[] = [
  { name: "memory", make: async (clock) => ({ store: new MemorySagaStore(clock), cleanup: async () => {} }) },
  { name: "prisma-sqlite", make: prismaStore("sqlite") },
  ...(testStoreKind() === "postgresql" ? [{ name: "prisma-postgres", make: prismaStore("postgresql") }] : []),
];

/** Everything a scenario needs. */
export interface Scenario {
  clock: ManualClock;
  world: World;
  store: SagaStore;
  crashPoints: CrashPoints;
  /** A fresh engine on the same store and world: what a restarted process would build. */
  engine: () => ReviewerEngine;
  cleanup: () => Promise<void>;
}

/** Builds a scenario on one store factory. Search lag defaults to 1.5 s, below the 2 s re-check. */
export async function makeScenario(
  factory: (clock: ManualClock) => Promise<StoreHandle>,
  options: { searchLagMs?: number; recheckAfterMs?: number } = {},
): Promise<Scenario> {
  const clock = new ManualClock();
  const world = new World({ clock, searchLagMs: options.searchLagMs ?? 1500 });
  world.crm.seed("crm_ada", { tier: "gold", note: "prefers email" });
  const { store, cleanup } = await factory(clock);
  const crashPoints = new CrashPoints();
  const registry = createSupportToolRegistry(world);
  const engine = () =>
    new ReviewerEngine({ store, registry, clock, crashPoints, recheckAfterMs: options.recheckAfterMs ?? 2000, backoffMs: 50 });
  return { clock, world, store, crashPoints, engine, cleanup };
}
