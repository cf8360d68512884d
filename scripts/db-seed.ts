/**
 * Records the demo runs (lib/demo/scenarios.ts) into DATABASE_URL's database by playing them against
 * the simulated systems. Skips when runs already exist, unless called with --force.
 */
import { createSupportToolRegistry } from "@/lib/connectors/sim-tools";
import { openPrisma } from "@/lib/db/prisma";
import { PrismaSagaStore } from "@/lib/db/prisma-saga-store";
import { reviewerWith, runDemoScenarios } from "@/lib/demo/scenarios";
import { SagaEngine } from "@/lib/saga/engine";
import { World } from "@/lib/sim";

const prisma = await openPrisma();
try {
  const existing = await prisma.run.count();
  if (existing > 0 && !process.argv.includes("--force")) {
    console.log(`db:seed: ${existing} runs already recorded; nothing to do (use --force to add the demo runs again).`);
  } else {
    const world = new World({ searchLagMs: 300 });
    const store = new PrismaSagaStore(prisma);
    const registry = createSupportToolRegistry(world);
    const engine = () => new SagaEngine({ store, registry, recheckAfterMs: 600, backoffMs: 100 });
    const runIds = await runDemoScenarios(engine, world, reviewerWith(engine()), (line) => console.log(line));
    console.log(`db:seed: recorded ${runIds.length} demo runs.`);
  }
} finally {
  await prisma.$disconnect();
}
