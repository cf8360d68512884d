/**
 * A call in flight whose agent went silent is settled without it, on a real database (SQLite, or
 * PostgreSQL with SAGABOARD_TEST_PG=1): the agent dies right after the effect (the step INTENDED,
 * the charge made); once its run has been silent long enough, the sweep gives the step to a worker,
 * which reconciles it by key (CONFIRMED, one effect in the simulated payments ledger); a tool that
 * cannot be looked up is raised for a person instead; a run that is still talking is left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { CrashPoint, SimulatedCrash } from "@/packages/client/src/saga/crash-points";
import { Worker } from "@/packages/client/src/agent/worker";
import { prismaTaskQueue } from "@/lib/server/worker/queue";
import { sweepSilentSteps } from "@/lib/server/worker/sweep-silent-steps";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { makeScenario, type Scenario } from "../support/harness";
import { reserveTestDatabase } from "../support/test-database";

const database = reserveTestDatabase("silent-steps");
let prisma: PrismaClient;
let store: PrismaSagaStore;
let s: Scenario;
const SILENT_MS = 1_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  await database.create();
  prisma = await openPrisma(database.url);
  store = new PrismaSagaStore(prisma);
  s = await makeScenario(async () => ({ store, cleanup: async () => {} }), { searchLagMs: 0, recheckAfterMs: 10 });
  await syncToolPolicies(prisma, createSupportToolRegistry(s.world), "system:test");
});

afterAll(async () => {
  await prisma?.$disconnect();
  await database.drop();
});

/** A run whose agent dies right after `tool`'s effect: the step is left INTENDED. */
async function diesAfterEffect(title: string, tool: string, args: Record<string, unknown>) {
  const engine = s.engine();
  const run = await engine.startRun({ title, agent: "silent-agent" });
  s.crashPoints.arm(CrashPoint.AFTER_EFFECT);
  await expect(run.call(tool, args)).rejects.toBeInstanceOf(SimulatedCrash);
  const step = await prisma.step.findFirstOrThrow({ where: { runId: run.runId } });
  expect(step.status).toBe("INTENDED");
  return { runId: run.runId, step };
}

describe("calls in flight whose agent went silent", () => {
  it("a charge whose agent died after the effect is given to a worker once the run is silent, and reconciled by key: CONFIRMED, one charge", async () => {
    const { runId, step } = await diesAfterEffect("silent charge", "charge_card", { customerId: "cus_1", amount: 700, currency: "eur", reason: "order 1" });
    expect(s.world.ledger.count({ key: step.stepKey, outcome: "effect" })).toBe(1);
    // Not yet silent: nothing happens.
    expect(await sweepSilentSteps(prisma, { sweeperId: "t", silentAfterMs: 60_000 })).toMatchObject({ reconciling: [], escalated: [] });
    await sleep(SILENT_MS + 200);
    const [first, second] = [await sweepSilentSteps(prisma, { sweeperId: "t", silentAfterMs: SILENT_MS }), await sweepSilentSteps(prisma, { sweeperId: "t2", silentAfterMs: SILENT_MS })];
    expect(first.reconciling).toContain(step.id);
    expect(second.reconciling).not.toContain(step.id); // one task per step, whoever sweeps
    const engine = s.engine();
    const worker = new Worker({ queue: prismaTaskQueue(prisma), engine, workerId: "silent-w", tools: engine.deps.registry.list().map((t) => t.name) });
    const outcomes = await worker.runOnce();
    expect(outcomes.map((o) => o.outcome)).toContain("done");
    expect(await prisma.step.findUniqueOrThrow({ where: { id: step.id } })).toMatchObject({ status: "CONFIRMED" });
    expect(s.world.ledger.count({ key: step.stepKey, outcome: "effect" })).toBe(1);
    expect(await prisma.escalation.count({ where: { runId } })).toBe(0);
  }, 60_000);

  it("a tool that cannot be looked up is raised for a person (OUTCOME_UNKNOWN, routed to the tool's owner); so is one no worker reconciled in time", async () => {
    await prisma.toolPolicy.update({ where: { name: "create_ticket" }, data: { lookupAvailable: false } });
    try {
      const { step } = await diesAfterEffect("silent ticket", "create_ticket", { summary: "lost parcel", orderId: "A-1" });
      await sleep(SILENT_MS + 200);
      const result = await sweepSilentSteps(prisma, { sweeperId: "t", silentAfterMs: SILENT_MS });
      expect(result.escalated).toContain(step.id);
      expect(await prisma.step.findUniqueOrThrow({ where: { id: step.id } })).toMatchObject({ status: "UNKNOWN" });
      const escalation = await prisma.escalation.findFirstOrThrow({ where: { stepId: step.id } });
      expect(escalation).toMatchObject({ kind: "OUTCOME_UNKNOWN", status: "OPEN", owner: "support-leads" });
      expect(JSON.stringify(escalation.detail)).toContain("cannot be looked up by key");
    } finally {
      await prisma.toolPolicy.update({ where: { name: "create_ticket" }, data: { lookupAvailable: true } });
    }
    // A RECONCILE task nobody claims: after another silence, a person is asked.
    const { step } = await diesAfterEffect("silent, no worker", "create_ticket", { summary: "second parcel", orderId: "A-2" });
    await sleep(SILENT_MS + 200);
    expect((await sweepSilentSteps(prisma, { sweeperId: "t", silentAfterMs: SILENT_MS })).reconciling).toContain(step.id);
    await sleep(SILENT_MS + 200);
    expect((await sweepSilentSteps(prisma, { sweeperId: "t", silentAfterMs: SILENT_MS })).escalated).toContain(step.id);
    expect(JSON.stringify((await prisma.escalation.findFirstOrThrow({ where: { stepId: step.id } })).detail)).toContain("no worker holding create_ticket's connector reconciled it");
  }, 60_000);

  it("a run that is still talking is left alone, however old its step", async () => {
    const { runId, step } = await diesAfterEffect("still talking", "create_ticket_draft", { summary: "draft", orderId: "A-3" });
    await sleep(SILENT_MS + 200);
    // The agent speaks on the run (a new event on its chain): it is not silent.
    await store.setRunStatus(runId, ["RUNNING"], "RUNNING", { type: "run.heartbeat", actor: { type: "agent", id: "silent-agent" }, data: {} });
    const result = await sweepSilentSteps(prisma, { sweeperId: "t", silentAfterMs: SILENT_MS });
    expect([...result.reconciling, ...result.escalated]).not.toContain(step.id);
  }, 60_000);
});
