/**
 * Seeds DATABASE_URL's database: the tool table (ToolPolicy rows for the support tools that are
 * missing; admins' edits are kept), the demo accounts (one per role, lib/server/users/demo-users.ts) that
 * do not exist yet unless SAGABOARD_DEMO_USERS=off, and the demo runs (lib/demo/seed/scenarios.ts) played
 * in-process against the simulated systems when no runs exist yet (--force adds them again;
 * SAGABOARD_SEED_RUNS=0 skips them: `npm start` has the demo agent record them through the API).
 */
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { openPrisma } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { reviewerWith, runDemoScenarios } from "@/lib/demo/seed/scenarios";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";
import { World } from "@/lib/demo/sim";
import { ensureDemoUsers } from "@/lib/server/users/demo-users";
import { seedSupportToolTable } from "@/lib/demo/seed/support-tool-table";

const prisma = await openPrisma();
try {
  // A row per demo tool, with the system it acts on and who sees its effects.
  const added = await seedSupportToolTable(prisma, createSupportToolRegistry(new World()));
  if (added > 0) console.log(`db:seed: added ${added} tools to the tool table.`);
  const existing = await prisma.run.count();
  if (process.env.SAGABOARD_SEED_RUNS === "0") {
    // The caller records runs another way.
  } else if (existing > 0 && !process.argv.includes("--force")) {
    console.log(`db:seed: ${existing} runs already recorded; nothing to do (use --force to add the demo runs again).`);
  } else {
    const world = new World({ searchLagMs: 300 });
    const store = new PrismaSagaStore(prisma);
    const registry = createSupportToolRegistry(world);
    const engine = () => new ReviewerEngine({ store, registry, recheckAfterMs: 600, backoffMs: 100 });
    const runIds = await runDemoScenarios(engine, world, reviewerWith(engine()), (line) => console.log(line));
    console.log(`db:seed: recorded ${runIds.length} demo runs.`);
  }
  if (process.env.SAGABOARD_DEMO_USERS === "off") {
    console.log("db:seed: demo users skipped (SAGABOARD_DEMO_USERS=off).");
  } else {
    const created = (await ensureDemoUsers(prisma)).filter((outcome) => outcome.created);
    if (created.length > 0) console.log(`db:seed: created demo users ${created.map((u) => `${u.email} (${u.role})`).join(", ")}.`);
  }
} finally {
  await prisma.$disconnect();
}
