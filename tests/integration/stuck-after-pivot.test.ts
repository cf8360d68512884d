/**
 * An approved run whose agent goes quiet is raised as STUCK_AFTER_PIVOT by the workers' sweep, once,
 * however many workers sweep at the same moment (SQLite file, or PostgreSQL with SAGABOARD_TEST_PG=1:
 * there the two workers use two clients, so their inserts really race).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { databaseKind } from "@/lib/core/db/dialect";
import { openPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { World } from "@/lib/demo/sim";
import { prismaTaskQueue } from "@/lib/server/worker/queue";
import { stuckAfterPivotMs, stuckRunSweeper, sweepStuckRuns, DEFAULT_STUCK_AFTER_PIVOT_MS } from "@/lib/server/worker/sweep-stuck-runs";
import { Worker } from "@/packages/client/src/agent/worker";
import { startStuckRunDuty, stuckSweepEveryMs } from "@/lib/server/worker/stuck-run-duty";
import { reserveTestDatabase } from "../support/test-database";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const database = reserveTestDatabase("stuck");
let prisma: PrismaClient;
/** The second worker's client: its own pool on PostgreSQL; the same client on SQLite (two in one process can deadlock). */
let prismaB: PrismaClient;
const world = new World({ searchLagMs: 0 });
const registry = createSupportToolRegistry(world);

beforeAll(async () => {
  await database.create();
  prisma = await openPrisma(database.url);
  prismaB = databaseKind(prisma) === "postgresql" ? await openPrisma(database.url) : prisma;
  await syncToolPolicies(prisma, registry, "system:test");
});

afterAll(async () => {
  if (prismaB !== prisma) await prismaB?.$disconnect();
  await prisma?.$disconnect();
  await database.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A run approved at its pivot whose agent ran the first plan item and then went quiet. */
async function approvedQuietRun(title: string): Promise<{ runId: string; run: Awaited<ReturnType<SagaEngine["startRun"]>> }> {
  const engine = new ReviewerEngine({ store: new PrismaSagaStore(prisma), registry });
  const run = await engine.startRun({ title, agent: "quiet-agent" });
  const mail = { to: "c@example.com", subject: title, body: "It ships today." };
  const pivot = await run.requestPivot({ summary: "tell the customer", plan: [{ tool: "create_ticket", args: { summary: title, orderId: "1" } }, { tool: "send_email", args: mail }] });
  await engine.decidePivot(pivot.id, { approve: true, actor: { type: "user", id: "rita@example.com" }, planHash: pivot.planHash });
  expect((await run.call("create_ticket", { summary: title, orderId: "1" })).status).toBe("ok");
  expect((await prisma.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("COMMITTING");
  return { runId: run.runId, run };
}

async function stuckEscalations(runId: string) {
  return prisma.escalation.findMany({ where: { runId, kind: "STUCK_AFTER_PIVOT" } });
}

describe("the sweep for runs stuck after their pivot", () => {
  it("reads its threshold from SAGABOARD_STUCK_AFTER_PIVOT_MS, 15 minutes by default, and refuses nonsense by name", () => {
    expect(stuckAfterPivotMs({})).toBe(DEFAULT_STUCK_AFTER_PIVOT_MS);
    expect(stuckAfterPivotMs({ SAGABOARD_STUCK_AFTER_PIVOT_MS: "60000" })).toBe(60_000);
    expect(() => stuckAfterPivotMs({ SAGABOARD_STUCK_AFTER_PIVOT_MS: "soon" })).toThrow(/SAGABOARD_STUCK_AFTER_PIVOT_MS must be a whole number/);
    expect(() => stuckAfterPivotMs({ SAGABOARD_STUCK_AFTER_PIVOT_MS: "10" })).toThrow(/at least 1000/);
  });

  it("leaves a run alone until it has been quiet for the threshold, judged by the database clock", async () => {
    const { runId } = await approvedQuietRun("Not stuck yet");
    const result = await sweepStuckRuns({ prisma, store: new PrismaSagaStore(prisma), workerId: "w-early", stuckAfterMs: 60_000 });
    expect(result.checked).toBeGreaterThanOrEqual(1);
    expect(result.stuck.map((s) => s.runId)).not.toContain(runId);
    expect(await stuckEscalations(runId)).toHaveLength(0);
  });

  it("two workers sweeping at once raise the escalation once, with one audit event", async () => {
    const { runId } = await approvedQuietRun("Stuck after approval");
    await sleep(400);
    // Both reads of the dedupe key miss (as when two workers look at the same instant), so both insert.
    const racing = (client: PrismaClient) => {
      const store = new PrismaSagaStore(client);
      return { createEscalation: store.createEscalation.bind(store), findEscalationByDedupeKey: async () => null };
    };
    const [a, b] = await Promise.all([
      sweepStuckRuns({ prisma, store: racing(prisma), workerId: "w-a", stuckAfterMs: 300 }),
      sweepStuckRuns({ prisma: prismaB, store: racing(prismaB), workerId: "w-b", stuckAfterMs: 300 }),
    ]);
    // A sweep that starts after the other's insert sees the open item and leaves the run alone; one
    // that raced it gets the existing row back (created: false). Either way: one row, one event.
    const mine = [...a.stuck, ...b.stuck].filter((s) => s.runId === runId);
    expect(mine.length).toBeGreaterThanOrEqual(1);
    expect(mine.filter((s) => s.created)).toHaveLength(1);
    expect(new Set(mine.map((s) => s.escalationId)).size).toBe(1);

    const [escalation, ...more] = await stuckEscalations(runId);
    expect(more).toHaveLength(0);
    expect(escalation).toMatchObject({ status: "OPEN", stepId: null, detail: { reason: "no_progress_after_pivot", agent: "quiet-agent", stuckAfterMs: 300 } });
    expect(escalation!.title).toContain("Stuck after approval");
    const raised = await prisma.auditEvent.findMany({ where: { runId, type: "escalation.raised" } });
    expect(raised).toHaveLength(1);
    expect(["system:w-a", "system:w-b"]).toContain(raised[0]!.actor);

    // Swept again (after a person resolved it, too): the same silence is not raised a second time.
    await prisma.escalation.update({ where: { id: escalation!.id }, data: { status: "RESOLVED", resolvedBy: "rita@example.com", resolvedAt: new Date() } });
    const again = await sweepStuckRuns({ prisma, store: new PrismaSagaStore(prisma), workerId: "w-a", stuckAfterMs: 300 });
    expect(again.stuck.filter((s) => s.runId === runId)).toHaveLength(0);
    expect(await stuckEscalations(runId)).toHaveLength(1);
  });

  it("two polling workers raise a quiet run once, and leave a run that waits for a person alone", async () => {
    const { runId } = await approvedQuietRun("Stuck, two workers polling");
    const { runId: held, run: heldRun } = await approvedQuietRun("Waits for a person");
    // An open item on the run: a person already has it in front of them.
    expect((await heldRun.call("send_email", { to: "c@example.com", subject: "Not in the plan", body: "x" })).status).toBe("approval_required");

    const workers = [
      { id: "poll-a", client: prisma },
      { id: "poll-b", client: prismaB },
    ].map(
      ({ id, client }) =>
        new Worker({
          queue: prismaTaskQueue(client),
          engine: new ReviewerEngine({ store: new PrismaSagaStore(client), registry }),
          workerId: id,
          tools: [],
          pollMs: 50,
          stuckRuns: stuckRunSweeper({ prisma: client, store: new PrismaSagaStore(client), workerId: id, stuckAfterMs: 300, intervalMs: 100 }),
        }),
    );
    for (const w of workers) w.start();
    await expect.poll(async () => (await stuckEscalations(runId)).length, { timeout: 5_000 }).toBe(1);
    await sleep(500); // more rounds of both workers
    for (const w of workers) await w.stop();
    expect(await stuckEscalations(runId)).toHaveLength(1);
    expect(await prisma.auditEvent.count({ where: { runId, type: "escalation.raised" } })).toBe(1);
    expect(await stuckEscalations(held)).toHaveLength(0);
  });

  it("two app instances (each its own pool on PostgreSQL) sweeping at once raise one escalation per stuck run", async () => {
    const runs = await Promise.all(["Instances A", "Instances B", "Instances C"].map((t) => approvedQuietRun(t)));
    await sleep(400);
    // What instrumentation.ts starts in every app instance, here on two clients, swept at the same moment.
    const duties = [prisma, prismaB].map((client, i) =>
      startStuckRunDuty({ prisma: async () => client, sweeperId: `app-${i}`, stuckAfterMs: 300, everyMs: 60_000, log: () => undefined }),
    );
    for (let round = 0; round < 3; round++) await Promise.all(duties.map((d) => d.sweepNow()));
    for (const d of duties) d.stop();
    for (const { runId } of runs) {
      expect(await stuckEscalations(runId), runId).toHaveLength(1);
      expect(await prisma.auditEvent.count({ where: { runId, type: "escalation.raised" } })).toBe(1);
    }
  });

  it("each sweep goes on where the last one stopped, so approved runs a person already dealt with never hide a newer stuck one", async () => {
    const handled = await approvedQuietRun("Finished by hand, still COMMITTING");
    await sleep(400);
    const first = await sweepStuckRuns({ prisma, store: new PrismaSagaStore(prisma), workerId: "w-rot", stuckAfterMs: 300, limit: 10_000 });
    expect(first.stuck.map((s) => s.runId)).toContain(handled.runId);
    // A person resolved every stuck escalation so far ("done by hand"): those runs stay COMMITTING.
    await prisma.escalation.updateMany({ where: { kind: "STUCK_AFTER_PIVOT", status: "OPEN" }, data: { status: "RESOLVED", resolvedBy: "rita@example.com", resolvedAt: new Date() } });
    const newer = await approvedQuietRun("Newer and stuck");
    await sleep(400);

    // One run per sweep: the old sweep read the same oldest run every time and never reached the newer one.
    const sweeper = stuckRunSweeper({ prisma, store: new PrismaSagaStore(prisma), workerId: "w-rot", stuckAfterMs: 300, intervalMs: 0, limit: 1 });
    const committing = await prisma.run.count({ where: { status: "COMMITTING" } });
    const checked: number[] = [];
    for (let i = 0; i < committing + 1 && (await stuckEscalations(newer.runId)).length === 0; i++) checked.push((await sweeper.maybeSweep())!.checked);
    expect(await stuckEscalations(newer.runId)).toHaveLength(1);
    expect(Math.max(...checked)).toBe(1);
    expect(await stuckEscalations(handled.runId)).toHaveLength(1); // raised once, resolved, never again
  });

  it("the app's duty reads its interval from SAGABOARD_STUCK_SWEEP_MS (0: off) and refuses nonsense by name", () => {
    expect(stuckSweepEveryMs({})).toBe(30_000);
    expect(stuckSweepEveryMs({ SAGABOARD_STUCK_SWEEP_MS: "500" })).toBe(500);
    expect(stuckSweepEveryMs({ SAGABOARD_STUCK_SWEEP_MS: "0" })).toBeNull();
    expect(() => stuckSweepEveryMs({ SAGABOARD_STUCK_SWEEP_MS: "often" })).toThrow(/SAGABOARD_STUCK_SWEEP_MS must be a whole number/);
  });
});
