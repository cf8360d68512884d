/**
 * Test harness: a simulated world on a manual clock, an engine over a chosen store, and the store
 * factories every scenario runs against (in-memory, and Prisma on a fresh SQLite file).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createSupportToolRegistry } from "@/lib/connectors/sim-tools";
import { migrateSqlite } from "@/lib/db/migrate";
import { openPrisma } from "@/lib/db/prisma";
import { PrismaSagaStore } from "@/lib/db/prisma-saga-store";
import { ManualClock } from "@/lib/saga/clock";
import { CrashPoints } from "@/lib/saga/crash-points";
import { SagaEngine } from "@/lib/saga/engine";
import { MemorySagaStore } from "@/lib/saga/memory-store";
import type { SagaStore } from "@/lib/saga/store";
import { World } from "@/lib/sim";

/** A store for one test, and how to throw it away. */
export interface StoreHandle {
  /** The store. */
  store: SagaStore;
  /** Releases connections and files. */
  cleanup: () => Promise<void>;
}

/** Named store factories; scenario suites run once per entry. */
export const storeFactories: { name: string; make: (clock: ManualClock) => Promise<StoreHandle> }[] = [
  { name: "memory", make: async (clock) => ({ store: new MemorySagaStore(clock), cleanup: async () => {} }) },
  {
    name: "prisma-sqlite",
    make: async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), "sagaboard-test-"));
      const file = path.join(dir, "test.db");
      migrateSqlite(file);
      const prisma = await openPrisma(`file:${file}`);
      return {
        store: new PrismaSagaStore(prisma),
        cleanup: async () => {
          await prisma.$disconnect();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

/** Everything a scenario needs. */
export interface Scenario {
  clock: ManualClock;
  world: World;
  store: SagaStore;
  crashPoints: CrashPoints;
  /** A fresh engine on the same store and world: what a restarted process would build. */
  engine: () => SagaEngine;
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
    new SagaEngine({ store, registry, clock, crashPoints, recheckAfterMs: options.recheckAfterMs ?? 2000, backoffMs: 50 });
  return { clock, world, store, crashPoints, engine, cleanup };
}
