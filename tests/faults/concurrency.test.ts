/**
 * Fault matrix, concurrency (racing writers must still leave one row and one effect per key), on this run's store (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1):
 * 1. 50 concurrent identical intents x K keys through the API: one row and at most one effect per key.
 *    K = SAGABOARD_FAULT_KEYS, default 40 (CI: four batches of 500 calls in flight); 100 with SAGABOARD_FAULT_FULL=1.
 * 2. 8 workers over N UNWIND (compensation) tasks, one worker paused past its lease and then resumed:
 *    0 duplicate compensations, its stale completions refused and counted.
 *    N = SAGABOARD_FAULT_TASKS, default 200 (CI); 10,000 with SAGABOARD_FAULT_FULL=1.
 * 3. Search lag of 3 s (manual clock) with a re-check shorter than the lag: what the design guarantees
 *    and where its limit is (see the test's comment).
 * 4. The database connection cut at a transaction boundary (SQLite: the client closed; PostgreSQL:
 *    pg_terminate_backend on its backends) between an intent and its outcome, and between an outcome
 *    and the next intent: the intent is never lost, and a fresh client resumes.
 * Prints one figure line at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import type { PrismaClient } from "@/generated/prisma";
import { openPrisma } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { type CallOutcome } from "@/packages/client/src/saga/run-context";
import { SagaError, ToolCallFailed, ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import type { EscalationRecord, SagaStore, StepRecord } from "@/packages/client/src/saga/store";
import { RunStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import { World } from "@/lib/demo/sim";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import type { LedgerEntry } from "@/lib/demo/sim/ledger";
import { enqueueTask } from "@/lib/server/worker/enqueue-task";
import { prismaTaskQueue } from "@/lib/server/worker/queue";
import { Worker } from "@/packages/client/src/agent/worker";
import type { WorkerEngine } from "@/packages/client/src/agent/worker-tasks";
import { makeToken, useTestDatabase } from "../api/api-test-kit";
import { routeFetch } from "../support/api-router";
import { addFigures, computeFigures, emptyFigures, figureLine, goalsMet, storeLabel, type FaultFigures } from "../support/fault-oracle";
import { createTestDatabase, testStoreKind } from "../support/test-database";
import { type TaskQueue } from "@/packages/client/src/protocol/tasks/task";

const KIND = testStoreKind();
const TASKS = process.env.SAGABOARD_FAULT_FULL === "1" ? 10_000 : Number(process.env.SAGABOARD_FAULT_TASKS ?? "200");
const KEYS = process.env.SAGABOARD_FAULT_FULL === "1" ? 100 : Number(process.env.SAGABOARD_FAULT_KEYS ?? "40");
const getPrisma = useTestDatabase("faults-concurrency");

let total: FaultFigures = emptyFigures();
const extra: Record<string, string | number> = {};
const started = Date.now();

function record(figures: FaultFigures): void {
  total = addFigures(total, figures);
}

async function logOf(store: Pick<SagaStore, "listSteps" | "listEscalations">, runIds: readonly string[]): Promise<{ steps: StepRecord[]; escalations: EscalationRecord[] }> {
  const steps: StepRecord[] = [];
  const escalations: EscalationRecord[] = [];
  for (const id of runIds) {
    steps.push(...(await store.listSteps(id)));
    escalations.push(...(await store.listEscalations({ runId: id })));
  }
  return { steps, escalations };
}

beforeAll(() => {
  resetHostedWorld({ searchLagMs: 50 });
});

afterAll(() => {
  const line = figureLine("concurrency", storeLabel(KIND), total, { ...extra, seconds: ((Date.now() - started) / 1000).toFixed(1) });
  console.log(line);
});

describe("concurrency faults", () => {
  it("identical calls racing at the API: one is told to call, the others reconcile it, never an error", async () => {
    // Found by the 50 x 100 test on PostgreSQL: the server read "no row yet", then a concurrent
    // identical intent committed, and the next-index / unresolved-step checks refused the repeat
    // (CONFLICT or STEP_UNRESOLVED) instead of answering it from the existing row.
    const prisma = await getPrisma();
    const registry = createSupportToolRegistry(getHostedWorld());
    await syncToolPolicies(prisma, registry);
    const token = await makeToken(["create_ticket"], "racing-agent");
    const store = new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: routeFetch });
    const engine = new SagaEngine({ store, registry });
    const actor = { type: "agent" as const, id: "racing-agent" };
    let refusals = 0;
    for (let round = 0; round < 20; round++) {
      const run = await engine.startRun({ title: `race ${round}`, agent: "racing-agent" });
      const args = { summary: `Race ${round}`, orderId: "1182" };
      const proposal = { compensation: { tool: "close_ticket", args: { reason: "rolled back by the agent run" } }, correction: null, audience: ["support_team"] };
      // Staggered by a few ms, so some arrive while another's row is committing.
      const results = await Promise.allSettled(Array.from({ length: 30 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i % 15));
        return store.calls.begin({ runId: run.runId, cursor: 0, tool: "create_ticket", args, proposal, tryAppend: true, actor });
      }));
      const answers = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      for (const r of results) {
        if (r.status === "fulfilled") continue;
        if (!(r.reason instanceof SagaError) || !["CONFLICT", "STEP_UNRESOLVED"].includes(r.reason.code)) throw r.reason;
        refusals++;
      }
      expect(answers.filter((a) => a.kind === "call").length).toBeLessThanOrEqual(1);
      expect(answers.every((a) => a.kind === "call" || a.kind === "reconcile")).toBe(true);
      expect(new Set(answers.map((a) => (a.kind === "held" ? null : a.step.id))).size).toBeLessThanOrEqual(1);
      expect((await store.listSteps(run.runId)).length).toBe(1);
    }
    extra["racing identical calls refused"] = refusals;
    expect(refusals, "identical calls answered with an error instead of the existing row").toBe(0);
  }, 120_000);

  it(`50 concurrent identical intents x ${KEYS} keys through the API: one row and at most one effect per key`, async () => {
    const prisma = await getPrisma();
    const world = getHostedWorld();
    const registry = createSupportToolRegistry(world);
    await syncToolPolicies(prisma, registry);
    const token = await makeToken(registry.list().map((t) => t.name), "concurrent-agent");
    const store = new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: routeFetch });
    const engine = () => new SagaEngine({ store, registry, recheckAfterMs: 300, backoffMs: 20 });

    const CALLERS = 50;
    const runIds: string[] = [];
    const outcomes = { ok: 0, unknown: 0, failed: 0 };
    // Ten keys at a time: 500 concurrent calls in flight.
    for (let batch = 0; batch < KEYS; batch += 10) {
      await Promise.all(
        Array.from({ length: Math.min(10, KEYS - batch) }, async (_, j) => {
          const k = batch + j;
          const run = await engine().startRun({ title: `key ${k}`, agent: "concurrent-agent" });
          runIds.push(run.runId);
          // Half the keys go to a provider with native idempotency (payments), half to one without (ticketing).
          const [tool, args] =
            k % 2 === 0
              ? ["charge_card", { customerId: "cus_ada", amount: 100 + k, currency: "eur", reason: `fee ${k}` }]
              : ["create_ticket", { summary: `Ticket ${k}`, orderId: "1182" }];
          const contexts = await Promise.all(Array.from({ length: CALLERS }, () => engine().resume(run.runId)));
          const results = await Promise.allSettled(contexts.map((c) => c.call(tool as string, args)));
          for (const r of results) {
            if (r.status === "fulfilled") outcomes.ok++;
            else if (r.reason instanceof ToolOutcomeUnknown) outcomes.unknown++;
            else if (r.reason instanceof ToolCallFailed) outcomes.failed++;
            else throw r.reason;
          }
          // Settle anything left unknown with one more call, as an agent would.
          const settled = (await engine().resume(run.runId)).call(tool as string, args);
          await expect(settled).resolves.toMatchObject({ status: "ok" });
        }),
      );
    }
    const { steps, escalations } = await logOf(store, runIds);
    const perRun = new Map<string, number>();
    for (const s of steps) perRun.set(s.runId, (perRun.get(s.runId) ?? 0) + 1);
    expect([...perRun.values()].every((n) => n === 1)).toBe(true);
    expect(steps.length).toBe(KEYS);
    expect(steps.every((s) => s.status === StepStatus.CONFIRMED)).toBe(true);
    const figures = computeFigures(world.ledger.operations(), steps, escalations);
    for (const op of ["payments.charge", "ticketing.create"]) expect(world.ledger.duplicates(op)).toEqual([]);
    expect(world.ledger.count({ op: "payments.charge" }) + world.ledger.count({ op: "ticketing.create" })).toBe(KEYS);
    record(figures);
    extra["intents"] = `${KEYS}x${CALLERS}`;
    extra["intent calls ok/unknown/failed"] = `${outcomes.ok}/${outcomes.unknown}/${outcomes.failed}`;
    expect(figures.violations).toEqual([]);
  }, 300_000);

  it(`8 workers over ${TASKS} compensation tasks, one paused past its lease: 0 duplicates, stale completions refused`, async () => {
    const prisma = await getPrisma();
    const world = new World({ searchLagMs: 0 });
    const registry = createSupportToolRegistry(world);
    const store = new PrismaSagaStore(prisma);
    const engine = new SagaEngine({ store, registry, recheckAfterMs: 20, backoffMs: 10 });

    // N runs, each with one charge (COMPENSATABLE: a refund answers it), each with an UNWIND task.
    const runIds: string[] = [];
    for (let i = 0; i < TASKS; i += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, TASKS - i) }, async (_, j) => {
          const run = await engine.startRun({ title: `task ${i + j}`, agent: "worker-load" });
          await run.call("charge_card", { customerId: "cus_bo", amount: 500, currency: "eur", reason: `fee ${i + j}` });
          await enqueueTask(prisma, { kind: "UNWIND", runId: run.runId, tools: ["charge_card"], payload: { reason: "load test" }, dedupeKey: `unwind:${run.runId}` });
          runIds.push(run.runId);
        }),
      );
    }

    const LEASE_MS = 1000;
    const PAUSE_MS = 2500;
    // The paused worker: a stopped process (a GC pause, a frozen VM). Its task work and its heartbeats
    // wait until it wakes, past its lease; then it carries on as if nothing happened.
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    let pausedAt: number | null = null;
    const pausedEngine: WorkerEngine = {
      unwind: async (runId, actor, reason) => {
        if (pausedAt === null) {
          pausedAt = Date.now();
          setTimeout(wake, PAUSE_MS);
        }
        await woken;
        return engine.unwind(runId, actor, reason);
      },
      reconcile: (stepId, actor) => engine.reconcile(stepId, actor),
      compensateStep: (stepId, actor, draftedBy) => engine.compensateStep(stepId, actor, draftedBy),
    };
    const base = prismaTaskQueue(prisma);
    const pausedQueue: TaskQueue = {
      ...base,
      extendLease: async (r) => {
        if (pausedAt !== null) await woken;
        return base.extendLease(r);
      },
    };
    const workers = Array.from(
      { length: 8 },
      (_, i) =>
        new Worker({
          queue: i === 0 ? pausedQueue : base,
          engine: i === 0 ? pausedEngine : engine,
          workerId: `w${i}`,
          tools: ["charge_card"],
          leaseMs: LEASE_MS,
          heartbeatMs: 300,
          pollMs: 20,
          maxTasks: 4,
        }),
    );
    // The paused worker claims first, so it surely holds tasks when it stops.
    const first = workers[0]!.runOnce();
    await new Promise((r) => setTimeout(r, 50));
    for (const w of workers.slice(1)) w.start();
    await first;
    workers[0]!.start();
    const deadline = Date.now() + 600_000;
    while ((await prisma.workerTask.count({ where: { status: { not: "DONE" } } })) > 0) {
      if (Date.now() > deadline) throw new Error("tasks did not finish");
      await new Promise((r) => setTimeout(r, 200));
    }
    await Promise.all(workers.map((w) => w.stop()));

    const stats = workers.map((w) => w.stats);
    const superseded = stats.reduce((n, s) => n + s.superseded, 0);
    expect(stats[0]!.superseded, "the paused worker's completions were refused").toBeGreaterThan(0);
    expect(stats[0]!.leasesLost).toBeGreaterThan(0);
    const done = stats.reduce((n, s) => n + s.done, 0);
    expect(done).toBe(TASKS);
    const { steps, escalations } = await logOf(store, runIds);
    expect(steps.every((s) => s.status === StepStatus.COMPENSATED)).toBe(true);
    for (const id of runIds) expect((await store.getRun(id))?.status).toBe(RunStatus.UNWOUND);
    expect(world.ledger.count({ op: "payments.refund" })).toBe(TASKS);
    const figures = computeFigures(world.ledger.operations(), steps, escalations);
    record(figures);
    extra["worker tasks"] = TASKS;
    extra["stale completions refused"] = superseded;
    extra["tasks taken over"] = await prisma.workerTask.count({ where: { attempt: { gt: 1 } } });
    expect(figures.violations).toEqual([]);
  }, 1_800_000);

  it("search lag of 3 s with a shorter re-check: no duplicate where the provider dedupes; the limit is measured", async () => {
    /*
     * Reconcile looks a key up, waits recheckAfterMs, and looks again; two misses mean NOT_EXECUTED,
     * which allows a retry under the same key. The design's guarantee therefore holds when the
     * re-check outlasts the search lag, or when the provider dedupes the key itself (payments,
     * warehouse, CRM: Idempotency-Key). Ticketing and email have no native idempotency: with a
     * re-check shorter than the lag, a lost acknowledgement (F2) followed by a retry creates a second
     * ticket / email. That is a documented limit (configure recheckAfterMs above the provider's
     * search lag), measured here as "short-recheck duplicates" and asserted to occur exactly there.
     */
    const prisma = await getPrisma();
    const store = new PrismaSagaStore(prisma);
    const cases: { tool: string; op: string; args: unknown; native: boolean }[] = [
      { tool: "charge_card", op: "payments.charge", args: { customerId: "cus_cy", amount: 700, currency: "eur", reason: "lag test" }, native: true },
      { tool: "authorize_payment", op: "payments.authorize", args: { customerId: "cus_cy", amount: 700, currency: "eur" }, native: true },
      { tool: "reship_order", op: "warehouse.reship", args: { orderId: "3107" }, native: true },
      { tool: "update_crm_record", op: "crm.update", args: { recordId: "crm_ada", patch: { tier: "platinum" } }, native: true },
      { tool: "create_ticket", op: "ticketing.create", args: { summary: "Lag test", orderId: "3107" }, native: false },
      { tool: "create_email_draft", op: "email.createDraft", args: { to: "cy@example.com", subject: "Lag", body: "test" }, native: false },
    ];
    let guaranteed = emptyFigures();
    const limit: string[] = [];
    for (const recheckAfterMs of [1000, 3500]) {
      for (const c of cases) {
        const clock = new ManualClock();
        const world = new World({ clock, searchLagMs: 3000 });
        world.crm.seed("crm_ada", { tier: "gold" });
        const engine = new SagaEngine({ store, registry: createSupportToolRegistry(world), clock, recheckAfterMs, backoffMs: 10 });
        const run = await engine.startRun({ title: `lag ${c.tool} ${recheckAfterMs}`, agent: "lag-agent" });
        world.faults.inject(c.op, { kind: "timeout_after_effect" });
        await expect(run.call(c.tool, c.args)).rejects.toBeInstanceOf(ToolOutcomeUnknown);
        const retried: CallOutcome = await run.call(c.tool, c.args); // the same args, as the error says
        expect(retried.status).toBe("ok");
        const { steps, escalations } = await logOf(store, [run.runId]);
        const figures = computeFigures(world.ledger.operations(), steps, escalations);
        const dups = world.ledger.duplicates(c.op).length;
        if (recheckAfterMs > 3000 || c.native) {
          expect(dups, `${c.tool} with re-check ${recheckAfterMs} ms`).toBe(0);
          guaranteed = addFigures(guaranteed, figures);
        } else {
          // The limit: a provider without native idempotency, a re-check shorter than its lag.
          expect(dups, `${c.tool} with re-check ${recheckAfterMs} ms < lag`).toBe(1);
          limit.push(c.tool);
        }
      }
    }
    record(guaranteed);
    extra["search lag"] = "3000ms, re-check 1000/3500ms";
    extra["short-recheck duplicates (documented limit, no native idempotency)"] = limit.length;
    expect(limit).toEqual(["create_ticket", "create_email_draft"]);
    expect(guaranteed.violations).toEqual([]);
  }, 120_000);

  it("the database connection cut at a transaction boundary: the intent is never lost, a fresh client resumes", async () => {
    const db = await createTestDatabase("conn-cut");
    const world = new World({ searchLagMs: 0 });
    const registry = createSupportToolRegistry(world);
    let admin: pg.Client | null = null;
    if (KIND === "postgresql") {
      admin = new pg.Client({ connectionString: db.directUrl });
      await admin.connect();
    }
    /** Cuts every connection of `prisma` to the database. */
    const cut = async (prisma: PrismaClient) => {
      if (admin) {
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
      } else {
        await prisma.$disconnect();
      }
    };
    /**
     * A store that cuts its own connection right before the nth write of `method`. That write goes to
     * the real client (it may fail, or the driver may reconnect and it commits: both are recorded);
     * after it the process is taken to have lost its database and died: every later call throws, and
     * a fresh client must resume the run.
     */
    function cuttingStore(inner: SagaStore, prisma: PrismaClient, method: "updateStep" | "insertIntent", nth: number, counts: { surfaced: number; committed: number }): SagaStore {
      let seen = 0;
      let dead = false;
      return new Proxy(inner, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver) as unknown;
          if (typeof value !== "function") return value;
          return async (...args: unknown[]) => {
            if (dead) throw new Error("the process lost its database connection and died");
            const cutHere = prop === method && ++seen === nth;
            if (cutHere) await cut(prisma);
            try {
              const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
              if (cutHere) counts.committed++;
              return result;
            } catch (e) {
              if (cutHere) counts.surfaced++;
              throw e;
            } finally {
              if (cutHere) dead = true;
            }
          };
        },
      });
    }
    const counts = { surfaced: 0, committed: 0 };
    const runIds: string[] = [];
    let resumedStore: PrismaSagaStore | null = null;
    const clients: PrismaClient[] = [];
    try {
      const cuts: { method: "updateStep" | "insertIntent"; nth: number }[] = [];
      // Between an intent and its outcome (the 1st-3rd outcome write), and between an outcome and the next intent.
      for (let nth = 1; nth <= 3; nth++) cuts.push({ method: "updateStep", nth });
      for (let nth = 2; nth <= 3; nth++) cuts.push({ method: "insertIntent", nth });
      for (const [i, where] of cuts.entries()) {
        const a = await openPrisma(db.url);
        clients.push(a);
        const engineA = new SagaEngine({ store: cuttingStore(new PrismaSagaStore(a), a, where.method, where.nth, counts), registry, recheckAfterMs: 20, backoffMs: 10 });
        const calls: [string, unknown][] = [
          ["create_ticket", { summary: `Cut ${i}`, orderId: "2001" }],
          ["charge_card", { customerId: "cus_bo", amount: 300 + i, currency: "eur", reason: `cut ${i}` }],
          ["reship_order", { orderId: "2001" }],
        ];
        let runId: string | null = null;
        try {
          const run = await engineA.startRun({ title: `cut ${where.method} #${where.nth}`, agent: "cut-agent" });
          runId = run.runId;
          for (const [tool, args] of calls) await run.call(tool, args);
        } catch {
          // the cut surfaced as an error: the process gives up; a fresh client takes over
        }
        if (!runId) throw new Error("the run was not even started");
        runIds.push(runId);
        // A fresh client (a restarted process) resumes the run from the log and finishes it.
        const b = await openPrisma(db.url);
        clients.push(b);
        const engineB = new SagaEngine({ store: new PrismaSagaStore(b), registry, recheckAfterMs: 20, backoffMs: 10 });
        const resumed = await engineB.resume(runId);
        for (const [tool, args] of calls) await expect(resumed.call(tool, args)).resolves.toMatchObject({ status: "ok" });
        await resumed.complete();
        resumedStore = new PrismaSagaStore(b);
      }
      const { steps, escalations } = await logOf(resumedStore!, runIds);
      expect(steps.length).toBe(runIds.length * 3);
      expect(steps.every((s) => s.status === StepStatus.CONFIRMED)).toBe(true);
      const figures = computeFigures(world.ledger.operations() as LedgerEntry[], steps, escalations);
      record(figures);
      extra["connection cuts"] = cuts.length;
      extra["cut writes failed/committed after reconnect"] = `${counts.surfaced}/${counts.committed}`;
      expect(figures.violations).toEqual([]);
    } finally {
      for (const c of clients) await c.$disconnect().catch(() => undefined);
      await admin?.end().catch(() => undefined);
      await db.drop();
    }
    expect(goalsMet(total), figureLine("concurrency", storeLabel(KIND), total, extra)).toBe(true);
  }, 300_000);
});
