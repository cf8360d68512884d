/**
 * Fault matrix, second pass: clock trouble. The app's clock (this process's `Date`, faked ahead or
 * behind) disagrees with the database's by more than the deadlines at stake; SLAs and leases must be
 * judged by the database clock (SQLite's and PostgreSQL's `now` are read by the database, untouched
 * by the fake). On this run's store (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1).
 *
 *   sla-app-ahead / sla-app-behind       the app is 25 hours off (past the pivots' default 24 h
 *                                        expiry): a fresh pivot is not expired by the sweep, is
 *                                        recorded at the database's time, and once nobody has decided
 *                                        for the expiry (backdated from its recorded time) is rejected
 *                                        once; nothing is sent, the run unwinds its draft.
 *   lease-app-ahead / lease-app-behind   a worker claims the unwind of a run with a charge while the
 *                                        app is 2 hours ahead, another claims with the app 2 hours
 *                                        behind: the lease (60 s by the database clock) holds, the
 *                                        second gets nothing, the first unwinds and completes under its
 *                                        fence; the charge is refunded once.
 *   lease-takeover                       the same with a 100 ms lease that runs out (by the database
 *                                        clock) while the first worker's app clock is 2 hours ahead:
 *                                        the second worker takes the task over, the first's late
 *                                        completion is refused by the fence, the second completes it;
 *                                        one refund.
 * Trials: SAGABOARD_FAULT_MATRIX_TRIALS (default 2 per fault).
 */
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { databaseNow } from "@/lib/core/db/dialect";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { PivotStatus, RunStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import { resetHostedWorld } from "@/lib/demo/sim/host";
import type { World } from "@/lib/demo/sim/world";
import { loadSlaRules, pivotSla } from "@/lib/server/sla/sla-rules";
import { sweepSlas } from "@/lib/server/sla/sweep-slas";
import { claimTasks } from "@/lib/server/worker/claim-tasks";
import { completeTask } from "@/lib/server/worker/complete-task";
import { enqueueTask } from "@/lib/server/worker/enqueue-task";
import { addSupportTools, useTestDatabase } from "../api/api-test-kit";
import { backdate, figuresFor, matrixLine, MATRIX_TRIALS, recordMatrixLine } from "./fault-matrix";

const getPrisma = useTestDatabase("fault-clock");
const HOUR = 3_600_000;
const AGENT = { type: "agent" as const, id: "fault-agent" };
let world: World;
let engine: SagaEngine;

beforeAll(async () => {
  await getPrisma();
  await addSupportTools();
  world = resetHostedWorld({ searchLagMs: 0 });
  engine = new SagaEngine({ store: sharedSagaStore(await getPrisma()), registry: createSupportToolRegistry(world), recheckAfterMs: 10, backoffMs: 5 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs `fn` with this process's clock `skewMs` off the real time (the database's stays true). */
async function withAppClock<T>(skewMs: number, fn: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + skewMs });
  try {
    return await fn();
  } finally {
    vi.useRealTimers();
  }
}

async function fault(name: string, trial: (t: number) => Promise<string>): Promise<void> {
  const from = world.ledger.operations().length;
  const runIds: string[] = [];
  for (let t = 0; t < MATRIX_TRIALS; t++) runIds.push(await trial(t));
  const { figures, escalations } = await figuresFor(sharedSagaStore(await getPrisma()), world.ledger.operations().slice(from), runIds);
  const line = matrixLine({ name: `clock-skew:${name}`, trials: MATRIX_TRIALS, figures, escalated: escalations.length });
  recordMatrixLine(line);
  expect(figures.violations, line).toEqual([]);
}

describe("clock trouble: the app's clock skewed against the database's", () => {
  for (const [name, skew] of [
    ["sla-app-ahead", 25 * HOUR],
    ["sla-app-behind", -25 * HOUR],
  ] as const) {
    it(`${name}: pivots are dated and expired by the database clock`, async () => {
      const prisma = await getPrisma();
      const store = sharedSagaStore(prisma);
      await fault(name, async (t) => {
        const before = world.ledger.effects({ op: "email.send" }).length;
        const mail = { to: "bo@example.com", subject: `Skew ${name} ${t}`, body: "On its way." };
        const { runId, pivotId } = await withAppClock(skew, async () => {
          const run = await engine.startRun({ title: `${name} ${t}`, agent: AGENT.id });
          expect((await run.call("create_email_draft", mail)).status).toBe("ok");
          const pivot = await run.requestPivot({ summary: "Tell Bo.", plan: [{ tool: "send_email", args: mail }] });
          return { runId: run.runId, pivotId: pivot.id };
        });
        const recorded = (await prisma.pivot.findUniqueOrThrow({ where: { id: pivotId } })).createdAt;
        const dbNow = await databaseNow(prisma);
        expect(Math.abs(recorded.getTime() - dbNow.getTime()), "the pivot is dated by the database, not the skewed app").toBeLessThan(Math.abs(skew) / 2);

        const expired = await withAppClock(skew, async () => (await Promise.all([sweepSlas(prisma, { store }), sweepSlas(prisma, { store })])).flatMap((r) => r.expired));
        expect(expired, "a fresh pivot does not expire on a skewed app clock").not.toContain(pivotId);
        expect((await store.getPivot(pivotId))?.status).toBe(PivotStatus.PENDING);

        const policy = pivotSla(await loadSlaRules(prisma), ["send_email"]);
        await backdate(prisma, { pivotId }, policy.expireSec! + 60);
        const later = await withAppClock(-skew, async () => (await Promise.all([sweepSlas(prisma, { store }), sweepSlas(prisma, { store })])).flatMap((r) => r.expired));
        expect(later.filter((id) => id === pivotId), "expired once, whatever the app's clock says").toEqual([pivotId]);
        expect((await store.getPivot(pivotId))?.status).toBe(PivotStatus.REJECTED);
        expect((await engine.unwind(runId, AGENT, "expired")).status).toBe(RunStatus.UNWOUND);
        expect(world.ledger.effects({ op: "email.send" }).length - before).toBe(0);
        return runId;
      });
    });
  }

  for (const [name, first, second] of [
    ["lease-app-ahead", 2 * HOUR, -2 * HOUR],
    ["lease-app-behind", -2 * HOUR, 2 * HOUR],
  ] as const) {
    it(`${name}: a lease is held by the database clock, not the app's`, async () => {
      const prisma = await getPrisma();
      const store = sharedSagaStore(prisma);
      await fault(name, async (t) => {
        const run = await engine.startRun({ title: `${name} ${t}`, agent: AGENT.id });
        const charged = await run.call("charge_card", { customerId: "cus_ada", amount: 700 + t, currency: "eur", reason: `${name} ${t}` });
        expect(charged.status).toBe("ok");
        const tools = [`skew-${name}-${t}`];
        await enqueueTask(prisma, { kind: "UNWIND", runId: run.runId, tools, payload: { reason: "clock skew" }, dedupeKey: `${name}:${run.runId}` });
        const [mine] = await withAppClock(first, () => claimTasks(prisma, { workerId: "w-first", tools, max: 1, leaseMs: 60_000 }));
        expect(mine, "the first worker claims it").toBeTruthy();
        expect(await withAppClock(second, () => claimTasks(prisma, { workerId: "w-second", tools, max: 1, leaseMs: 60_000 })), "the lease holds on the database clock").toEqual([]);

        const report = await withAppClock(first, () => engine.unwind(run.runId, AGENT, "clock skew"));
        expect(report.status).toBe(RunStatus.UNWOUND);
        const done = await withAppClock(first, () => completeTask(prisma, { taskId: mine!.id, attempt: mine!.attempt, workerId: "w-first", result: { status: report.status } }));
        expect(done).toMatchObject({ settled: true });
        expect((await store.listSteps(run.runId)).map((s) => s.status)).toEqual([StepStatus.COMPENSATED]);
        return run.runId;
      });
    });
  }

  it("lease-takeover: a lease runs out by the database clock, not the app's; the late holder is fenced out", async () => {
    const prisma = await getPrisma();
    const store = sharedSagaStore(prisma);
    await fault("lease-takeover", async (t) => {
      const run = await engine.startRun({ title: `lease takeover ${t}`, agent: AGENT.id });
      expect((await run.call("charge_card", { customerId: "cus_ada", amount: 800 + t, currency: "eur", reason: `takeover ${t}` })).status).toBe("ok");
      const tools = [`skew-takeover-${t}`];
      await enqueueTask(prisma, { kind: "UNWIND", runId: run.runId, tools, payload: { reason: "clock skew" }, dedupeKey: `takeover:${run.runId}` });
      const [first] = await withAppClock(2 * HOUR, () => claimTasks(prisma, { workerId: "w-late", tools, max: 1, leaseMs: 100 }));
      expect(first).toBeTruthy();
      // Wait until the database's clock is past the lease (the app's says it is hours away).
      const leaseUntil = (await prisma.workerTask.findUniqueOrThrow({ where: { id: first!.id } })).leaseUntil!;
      while ((await databaseNow(prisma)).getTime() <= leaseUntil.getTime()) await new Promise((r) => setTimeout(r, 20));
      const [second] = await withAppClock(-2 * HOUR, () => claimTasks(prisma, { workerId: "w-next", tools, max: 1, leaseMs: 60_000 }));
      expect(second, "taken over once the database clock passed the lease").toMatchObject({ id: first!.id, attempt: first!.attempt + 1 });
      const report = await withAppClock(-2 * HOUR, () => engine.unwind(run.runId, AGENT, "taken over"));
      expect(report.status).toBe(RunStatus.UNWOUND);
      const late = await withAppClock(2 * HOUR, () => completeTask(prisma, { taskId: first!.id, attempt: first!.attempt, workerId: "w-late", result: { status: "late" } }));
      expect(late, "the late holder changes nothing").toMatchObject({ settled: false });
      expect(await completeTask(prisma, { taskId: second!.id, attempt: second!.attempt, workerId: "w-next", result: { status: report.status } })).toMatchObject({ settled: true });
      expect((await store.listSteps(run.runId)).map((s) => s.status)).toEqual([StepStatus.COMPENSATED]);
      return run.runId;
    });
  });
});
