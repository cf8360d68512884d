/**
 * `npm run demo`: the scripted support agent, in its own process, through the HTTP API against a
 * running Sagaboard (SAGABOARD_URL, default http://localhost:3000) and the simulated systems it
 * hosts. It imitates a model (rewords its retries) and says what it does in plain words. The happy
 * path stops at the pivot and waits for a reviewer; `--no-wait` skips the wait. `--commit-approved`
 * plays a fresh agent process after a crash: it records nothing new and commits every approved plan
 * of its runs that nobody committed yet (the items are found by the pivot, so nothing is replayed).
 */
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { openPrisma } from "@/lib/core/db/prisma";
import { dataDirectory } from "@/lib/core/db/url";
import { ensureDemoTokens } from "@/lib/demo/seed/demo-tokens";
import { reviewerWith, runDemoScenarios } from "@/lib/demo/seed/scenarios";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";
import { RemoteWorld } from "@/lib/demo/sim/remote";
import { seedSupportToolTable } from "@/lib/demo/seed/support-tool-table";

const url = (process.env.SAGABOARD_URL ?? `http://localhost:${process.env.PORT ?? "3000"}`).replace(/\/$/, "");
const say = (line: string) => console.log(line);
const world = new RemoteWorld(url);
const registry = createSupportToolRegistry(world);

// Local convenience: the demo shares the database file with the server, so it can mint its token
// and play the reviewer who approves two of its pivots (the happy path's pivot is left to you).
const prisma = await openPrisma();
let token = process.env.SAGABOARD_TOKEN;
if (!token) {
  await seedSupportToolTable(prisma, registry);
  token = (await ensureDemoTokens(prisma, dataDirectory(), registry.list().map((t) => t.name))).agent;
}
const reviewer = reviewerWith(new ReviewerEngine({ store: new PrismaSagaStore(prisma), registry }));

const health = await fetch(`${url}/api/health`).catch(() => null);
if (!health?.ok) {
  console.error(`Sagaboard does not answer at ${url}. Start it with \`npm start\` (or set SAGABOARD_URL).`);
  process.exit(1);
}

const store = new HttpSagaStore({ baseUrl: url, token });
const engine = () => new SagaEngine({ store, registry, recheckAfterMs: 600, backoffMs: 100 });

if (process.argv.includes("--commit-approved")) {
  // A fresh process after the agent died: it knows no cursor and replays nothing; the log says what is done.
  const waiting = await prisma.run.findMany({ where: { status: "COMMITTING" }, select: { id: true, title: true }, orderBy: { createdAt: "asc" } });
  let committed = 0;
  for (const run of waiting) {
    const pivot = (await store.listPivots(run.id).catch(() => [])).at(-1);
    if (pivot?.status !== "APPROVED") continue; // not this agent's run, or not approved
    say(`Committing the approved plan of “${run.title}” (pivot ${pivot.id}) from a fresh process.`);
    const result = await (await engine().resume(run.id)).commitPlan(pivot.id);
    if (result.status === "committed") {
      for (const item of result.items) say(`  ${item.tool}: ${item.outcome.replayed ? "already done (read from the log)" : "done"}`);
      say("  Run completed.");
      committed++;
    } else say(`  ${result.status === "held" ? `Item ${result.index + 1} is held for a person: ${result.outcome.message}` : "Already committed."}`);
  }
  say(committed > 0 ? `Committed ${committed} approved plan(s).` : "No approved plan was waiting to be committed.");
  await prisma.$disconnect();
  process.exit(0);
}
say(`Demo agent working against ${url}.`);
const runIds = await runDemoScenarios(engine, world, reviewer, say);

say("7. A run whose unwind is left to a worker");
const run = await engine().startRun({ title: "Cancel express upgrade for order 3107", agent: "support-agent", onBehalfOf: "cy@example.com" });
await run.call("create_ticket", { summary: "Express upgrade for order 3107", orderId: "3107" });
await run.call("charge_card", { customerId: "cus_cy", amount: 900, currency: "eur", reason: "express upgrade" });
const task = await store.requestUnwind(run.runId, "the customer cancelled the upgrade");
say(`  Asked for an unwind: task ${task.taskId} waits for a worker (npm start runs one).`);

const pendingRunId = runIds[1];
const pivots = pendingRunId ? await store.listPivots(pendingRunId) : [];
const pending = pivots.find((p) => p.status === "PENDING");
if (pending && !process.argv.includes("--no-wait")) {
  say(`\nWaiting for a reviewer to decide pivot ${pending.id}: ${url}/pivots/${pending.id}`);
  const context = await engine().resume(pendingRunId!);
  const decided = await context.awaitPivot(pending.id, { timeoutMs: 60 * 60 * 1000 });
  if (decided.status === "APPROVED") {
    say(`  ${decided.decidedBy} approved. Committing the approved plan, item by item.`);
    const committed = await context.commitPlan(decided.id);
    if (committed.status === "committed") {
      for (const item of committed.items) say(`  ${item.tool}: ${item.outcome.replayed ? "already done (read from the log)" : "done"}`);
      say("  Run completed.");
    } else if (committed.status === "already_committed") {
      say("  Someone else (a worker) committed it already; nothing to do.");
    } else {
      say(`  Item ${committed.index + 1} is held for a person: ${committed.outcome.message}`);
    }
  } else if (decided.status === "REJECTED") {
    say(`  ${decided.decidedBy} rejected it: ${decided.reason}. Unwinding what was staged.`);
    const report = await context.unwind(`pivot rejected: ${decided.reason ?? ""}`);
    say(`  Unwound: released steps ${report.compensated.join(", ")}.`);
  } else {
    say("  Nobody decided within the hour; the pivot stays pending.");
  }
}
say("Demo agent done.");
await prisma.$disconnect();
