/**
 * Fault matrix, second pass: the database goes away. An agent drives runs over the HTTP API
 * (HttpSagaStore against the real route handlers, in this process) and a worker unwinds runs beside
 * the app, while the database disappears under them. The shared PostgreSQL server is never touched:
 * the app reaches it through a TCP proxy of this suite's own (tests/support/tcp-proxy.ts), which the
 * suite cuts and restores; the oracle reads the log through a direct connection. SQLite's file is
 * locked by another process (tests/support/sqlite-locker.ts) past the busy timeout, shortened to
 * 150 ms here (SAGABOARD_SQLITE_BUSY_TIMEOUT_MS) so that "past the timeout" fits in CI time.
 *
 *   between-steps     (both) the database goes away after a confirmed step: the next call is answered
 *                     503 UNAVAILABLE with Retry-After (never a 500), no row and no effect; once it is
 *                     back the agent resumes from the log and the run completes.
 *   after-effect      (both) it goes away after the provider charged, before the outcome is recorded:
 *                     the outcome report gets 503; the step stays INTENDED (never guessed); the resumed
 *                     agent reconciles it by key and confirms the one charge.
 *   commit-lost       (PostgreSQL) the connections are cut while the charge's intent is on its way to
 *                     the server: it never arrives; the agent's own retry after Retry-After records it.
 *   commit-unanswered (PostgreSQL) cut right after the intent (even trials) or the outcome (odd ones)
 *                     reached the server, before its answer: committed, nobody told; the agent's
 *                     retry is answered from the log.
 *   backend-killed    (PostgreSQL) the app's backend is killed by pg_terminate_backend (only this
 *                     suite's: its database and application_name) while its intent insert waits on a
 *                     lock at the server: the agent is told to try later; nothing was written; it resumes.
 *   lease-holder      (both) a worker holding an unwind's lease loses the database right after the
 *                     refund: its record fails, its lease runs out by the database clock; once the
 *                     database is back another worker takes the task over, verifies the refund instead
 *                     of sending it again, and completes; the first worker's late completion is refused
 *                     by the fence.
 * SQLite has no connection to cut in the middle of a commit (its commit is local: it takes the lock or
 * fails before writing), so the two commit faults are PostgreSQL's; a file lock is SQLite's own.
 * Every trial: 0 duplicate effects, 0 lost intents, no INTENDED/UNKNOWN row at rest (the oracle over
 * the simulated systems' ledger). Trials: SAGABOARD_FAULT_MATRIX_TRIALS (2), 10+ with SAGABOARD_FAULT_FULL=1.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { databaseNow } from "@/lib/core/db/dialect";
import { getPrisma, openPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { sqliteFilePath } from "@/lib/core/db/url";
import { stepKey } from "@/packages/client/src/saga/keys";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { RunStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import { World } from "@/lib/demo/sim";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { enqueueTask } from "@/lib/server/worker/enqueue-task";
import { prismaTaskQueue } from "@/lib/server/worker/queue";
import { Worker } from "@/packages/client/src/agent/worker";
import { makeToken } from "../api/api-test-kit";
import { routeFetch } from "../support/api-router";
import { lockSqliteFile, type SqliteLock } from "../support/sqlite-locker";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy";
import { reserveTestDatabase, testStoreKind } from "../support/test-database";
import { figuresFor, matrixLine, MATRIX_TRIALS, recordMatrixLine } from "./fault-matrix";

const PG = testStoreKind() === "postgresql";
const TRIALS = process.env.SAGABOARD_FAULT_FULL === "1" ? Math.max(MATRIX_TRIALS, 10) : MATRIX_TRIALS;
// Read when the app's client opens (below); a real deployment keeps the 10 s default.
process.env.SAGABOARD_SQLITE_BUSY_TIMEOUT_MS = "150";
const TOOLS = ["create_ticket", "charge_card"];
const db = reserveTestDatabase("fault-db-down");
/** The app's connections name themselves, so the suite kills its own and nobody else's. */
const APP_NAME = `sagaboard_fault_db_${process.pid}`;
const world = new World({ searchLagMs: 0 });
const registry = createSupportToolRegistry(world);
let proxy: TcpProxy | null = null;
/** The app's client: through the proxy on PostgreSQL. */
let app: PrismaClient;
/** The oracle's and the rescuers' client: straight to the server on PostgreSQL, the app's on SQLite. */
let direct: PrismaClient;
let token: { secret: string; name: string };

beforeAll(async () => {
  await db.create();
  if (PG) {
    const target = new URL(db.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    viaProxy.searchParams.set("application_name", APP_NAME);
    process.env.DATABASE_URL = viaProxy.toString();
  } else {
    process.env.DATABASE_URL = db.url;
  }
  app = await getPrisma();
  direct = PG ? await openPrisma(db.url) : app;
  await syncToolPolicies(app, registry);
  token = await makeToken(TOOLS, `db-down-${process.pid}`);
}, 60_000);

afterAll(async () => {
  await app?.$disconnect();
  if (PG) await direct?.$disconnect();
  await proxy?.close();
  await db.drop();
});

/** The database going away and coming back: the proxy cut on PostgreSQL, the file locked on SQLite. */
const outage = (() => {
  let lock: SqliteLock | null = null;
  return {
    begin: async () => {
      if (proxy) proxy.cut();
      else lock = await lockSqliteFile(sqliteFilePath(db.url));
    },
    end: async () => {
      if (proxy) proxy.restore();
      await lock?.release();
      lock = null;
    },
  };
})();

/** What the agent was answered besides successes. */
interface Refusal {
  status: number;
  code: string;
  retryAfter: string | null;
  /** When it was answered, and when the agent's next request went out (ms). */
  at: number;
  nextAt?: number;
}

/** An agent over the HTTP API that records every error answer it gets; `retries` re-sends per request. */
function agent(retries: number): { engine: SagaEngine; refusals: Refusal[] } {
  const refusals: Refusal[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const last = refusals.at(-1);
    if (last && last.nextAt === undefined) last.nextAt = Date.now();
    const response = await routeFetch(input, init);
    if (!response.ok) {
      const body = (await response.clone().json()) as { error?: { code?: string } };
      refusals.push({ status: response.status, code: body.error?.code ?? "", retryAfter: response.headers.get("retry-after"), at: Date.now() });
    }
    return response;
  };
  // Each outcome in its own request, recorded before the call returns: these look at the log right
  // after a call (tests/api/pipelined-calls.test.ts covers the client's default, outcome with the next call).
  const store = new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch, retries, outcomeLingerMs: 0 });
  return { engine: new SagaEngine({ store, registry, recheckAfterMs: 20, backoffMs: 10 }), refusals };
}

/** "Try later", never "we broke": every refusal is 503 UNAVAILABLE with Retry-After, and there was one. */
function expectTryLater(refusals: readonly Refusal[]): void {
  expect(refusals.length, "the agent was told to try later").toBeGreaterThan(0);
  for (const r of refusals) expect(r, JSON.stringify(refusals)).toMatchObject({ status: 503, code: "UNAVAILABLE", retryAfter: expect.stringMatching(/^\d+$/) });
}

const ticket = (n: number) => ({ summary: `Refund ${n}`, orderId: String(n) });
const charge = (n: number) => ({ customerId: "cus_ada", amount: 2000 + n, currency: "eur", reason: `db fault ${n}` });
const charges = () => world.ledger.effects({ op: "payments.charge" }).length;

/** The agent after the outage, as a restarted process: resumes from the log and finishes the run. */
async function resumeAndComplete(engine: SagaEngine, runId: string, n: number): Promise<void> {
  const run = await engine.resume(runId);
  expect(await run.call("create_ticket", ticket(n))).toMatchObject({ status: "ok" });
  expect(await run.call("charge_card", charge(n))).toMatchObject({ status: "ok" });
  await run.complete();
}

/** Calls `fn` once when the provider's `op` has taken effect (the connector wrapped for one call). */
function afterNextEffect<K extends "charge" | "refund">(op: K, fn: (result: { id: string }) => Promise<void> | void): void {
  const payments = world.payments;
  const original = payments[op] as (...args: unknown[]) => Promise<{ id: string }>;
  (payments as unknown as Record<K, unknown>)[op] = async (...args: unknown[]) => {
    (payments as unknown as Record<K, unknown>)[op] = original;
    const result = await original.apply(payments, args);
    await fn(result);
    return result;
  };
}

/**
 * Waits until one of the app's backends waits on a lock, then terminates the app's backends that do:
 * only this suite's (its database, its application_name), never another suite's or CI's.
 */
async function killWaitingAppBackends(admin: pg.Client): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await admin.query<{ killed: boolean }>(
      "SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'",
      [APP_NAME],
    );
    if (rows.length > 0) return rows.filter((r) => r.killed).length;
    if (Date.now() > deadline) throw new Error("no backend of the app waited on the lock within 10 s");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function fault(name: string, trial: (t: number) => Promise<string>): Promise<void> {
  const from = world.ledger.operations().length;
  const runIds: string[] = [];
  for (let t = 0; t < TRIALS; t++) runIds.push(await trial(t));
  const { figures, escalations } = await figuresFor(new PrismaSagaStore(direct), world.ledger.operations().slice(from), runIds);
  const line = matrixLine({ name: `database-unavailable:${name}`, trials: TRIALS, figures, escalated: escalations.length });
  recordMatrixLine(line);
  expect(figures.violations, line).toEqual([]);
  expect(figures.effects, "every trial made its effects").toBeGreaterThanOrEqual(2 * TRIALS);
}

// Seconds per trial (Retry-After waits, leases, held answers): the nightly run's 50 trials need more than the default 30 s.
describe("the database goes away", { timeout: 30_000 + TRIALS * 5_000 }, () => {
  it("between-steps: the next call is told to try later (503, Retry-After), nothing is written or called; the agent resumes", async () => {
    await fault("between-steps", async (t) => {
      const n = 100 + t;
      const { engine, refusals } = agent(0);
      const run = await engine.startRun({ title: `db away between steps ${n}`, agent: token.name });
      expect(await run.call("create_ticket", ticket(n))).toMatchObject({ status: "ok" });
      const before = charges();
      await outage.begin();
      const refused = await run.call("charge_card", charge(n)).then(
        () => null,
        (e: unknown) => e,
      );
      await outage.end();
      expect(refused, "the call is refused while the database is away").toMatchObject({ status: 503, code: "UNAVAILABLE" });
      expectTryLater(refusals);
      expect(charges() - before, "nothing was charged").toBe(0);
      expect((await new PrismaSagaStore(direct).listSteps(run.runId)).map((s) => s.tool)).toEqual(["create_ticket"]);
      await resumeAndComplete(engine, run.runId, n);
      expect(charges() - before).toBe(1);
      return run.runId;
    });
  });

  it("after-effect: the outcome cannot be recorded; the step stays INTENDED, then is reconciled by key to the one charge", async () => {
    await fault("after-effect", async (t) => {
      const n = 200 + t;
      const { engine, refusals } = agent(0);
      const run = await engine.startRun({ title: `db away after the effect ${n}`, agent: token.name });
      expect(await run.call("create_ticket", ticket(n))).toMatchObject({ status: "ok" });
      const before = charges();
      afterNextEffect("charge", () => outage.begin());
      const refused = await run.call("charge_card", charge(n)).then(
        () => null,
        (e: unknown) => e,
      );
      await outage.end();
      expect(refused, "the outcome report is refused while the database is away").toMatchObject({ status: 503, code: "UNAVAILABLE" });
      expectTryLater(refusals);
      const step = (await new PrismaSagaStore(direct).listSteps(run.runId)).find((s) => s.tool === "charge_card");
      expect(step?.status, "left in flight, never guessed").toBe(StepStatus.INTENDED);
      await resumeAndComplete(engine, run.runId, n);
      const effects = world.ledger.effects({ op: "payments.charge" }).slice(before);
      expect(effects, "one charge").toHaveLength(1);
      const settled = (await new PrismaSagaStore(direct).listSteps(run.runId)).find((s) => s.tool === "charge_card");
      expect(settled).toMatchObject({ status: StepStatus.CONFIRMED, externalRef: effects[0]!.ref });
      return run.runId;
    });
  });

  it.skipIf(!PG)("commit-lost (PostgreSQL only: a SQLite commit is local, with no connection to cut on its way): the intent never reaches the server; the agent's retry records it once", async () => {
    await fault("commit-lost", async (t) => {
      const n = 300 + t;
      const { engine, refusals } = agent(4);
      const run = await engine.startRun({ title: `commit lost ${n}`, agent: token.name });
      expect(await run.call("create_ticket", ticket(n))).toMatchObject({ status: "ok" });
      const before = charges();
      // The intent's statement carries its step key: cut every connection before it is passed on.
      const fired = proxy!.armOnce({ match: stepKey(run.runId, 1, "charge_card"), action: "cut-before", downMs: 300 });
      expect(await run.call("charge_card", charge(n)), "the client's own retry, after Retry-After, goes through").toMatchObject({ status: "ok" });
      await fired;
      expectTryLater(refusals);
      // The client's own re-send waited the Retry-After it was given (its backoff alone is 100 ms).
      const [refusal] = refusals;
      expect(refusal!.nextAt! - refusal!.at, "waited Retry-After before re-sending").toBeGreaterThanOrEqual(Number(refusal!.retryAfter) * 1000 - 50);
      expect(charges() - before).toBe(1);
      // It never arrived: the retry's intent is the first, and the call went straight through.
      const step = (await new PrismaSagaStore(direct).listSteps(run.runId)).find((s) => s.tool === "charge_card")!;
      const events = await direct.auditEvent.findMany({ where: { stepId: step.id }, select: { type: true }, orderBy: { seq: "asc" } });
      expect(events.map((e) => e.type)).toEqual(["step.intended", "step.confirmed"]);
      await run.complete();
      return run.runId;
    });
  });

  it.skipIf(!PG)("commit-unanswered (PostgreSQL only: a SQLite commit is local, with no answer to lose): the intent or the outcome commits but its answer is lost; the retry is answered from the log", async () => {
    await fault("commit-unanswered", async (t) => {
      const n = 400 + t;
      const { engine, refusals } = agent(4);
      const run = await engine.startRun({ title: `commit unanswered ${n}`, agent: token.name });
      expect(await run.call("create_ticket", ticket(n))).toMatchObject({ status: "ok" });
      const before = charges();
      // Even trials lose the intent's answer, odd ones the outcome's (its statement carries the provider's id).
      const onIntent = t % 2 === 0;
      let cut: Promise<void> = Promise.resolve();
      if (onIntent) cut = proxy!.armOnce({ match: stepKey(run.runId, 1, "charge_card"), action: "cut-after", downMs: 300 });
      else afterNextEffect("charge", (pi) => void (cut = proxy!.armOnce({ match: pi.id, action: "cut-after", downMs: 300 })));
      expect(await run.call("charge_card", charge(n))).toMatchObject({ status: "ok" });
      await cut;
      expectTryLater(refusals);
      const effects = world.ledger.effects({ op: "payments.charge" }).slice(before);
      expect(effects, "one charge").toHaveLength(1);
      const step = (await new PrismaSagaStore(direct).listSteps(run.runId)).find((s) => s.tool === "charge_card");
      expect(step).toMatchObject({ status: StepStatus.CONFIRMED, externalRef: effects[0]!.ref });
      // Committed before the cut: a lost intent's repeat found it in flight and reconciled it by key
      // before the one call; a lost outcome's repeat got the recorded row back.
      const events = (await direct.auditEvent.findMany({ where: { stepId: step!.id }, select: { type: true }, orderBy: { seq: "asc" } })).map((e) => e.type);
      expect(events).toEqual(onIntent ? ["step.intended", "step.reconciled", "step.retry_intended", "step.confirmed"] : ["step.intended", "step.confirmed"]);
      await run.complete();
      return run.runId;
    });
  });

  it.skipIf(!PG)("backend-killed (PostgreSQL only: SQLite has no server process to kill): the app's backend is terminated mid-statement; try later, nothing written, the agent resumes", async () => {
    const locker = new pg.Client({ connectionString: db.directUrl });
    await locker.connect();
    try {
      await fault("backend-killed", async (t) => {
        const n = 450 + t;
        const { engine, refusals } = agent(0);
        const run = await engine.startRun({ title: `backend killed ${n}`, agent: token.name });
        expect(await run.call("create_ticket", ticket(n))).toMatchObject({ status: "ok" });
        const before = charges();
        // Writes to the step log wait on this lock, so the app's intent insert is in flight at the server.
        await locker.query('BEGIN; LOCK TABLE "Step" IN EXCLUSIVE MODE');
        const pending = run.call("charge_card", charge(n)).then(
          () => null,
          (e: unknown) => e,
        );
        const killed = await killWaitingAppBackends(locker);
        await locker.query("COMMIT");
        expect(killed, "the app's waiting backend was killed").toBeGreaterThan(0);
        expect(await pending, "the killed statement is answered try later").toMatchObject({ status: 503, code: "UNAVAILABLE" });
        expectTryLater(refusals);
        expect(charges() - before, "nothing was charged").toBe(0);
        expect((await new PrismaSagaStore(direct).listSteps(run.runId)).map((s) => s.tool), "nothing was written").toEqual(["create_ticket"]);
        await resumeAndComplete(engine, run.runId, n);
        expect(charges() - before).toBe(1);
        return run.runId;
      });
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end();
    }
  });

  it("lease-holder: a worker loses the database mid-unwind; its lease runs out, another takes over and verifies the refund; the late completion is refused", async () => {
    const LEASE_MS = 400;
    await fault("lease-holder", async (t) => {
      const n = 500 + t;
      const { engine } = agent(4);
      const run = await engine.startRun({ title: `lease holder ${n}`, agent: token.name });
      expect(await run.call("create_ticket", ticket(n))).toMatchObject({ status: "ok" });
      expect(await run.call("charge_card", charge(n))).toMatchObject({ status: "ok" });
      const tools = [`db-down-${n}-${process.pid}`];
      await enqueueTask(direct, { kind: "UNWIND", runId: run.runId, tools, payload: { reason: "database fault" }, dedupeKey: `db-down:${run.runId}` });
      const refundsBefore = world.ledger.effects({ op: "payments.refund" }).length;

      // The first worker, beside the app (its client is the app's): the database goes after its refund.
      const first = new Worker({
        queue: prismaTaskQueue(app),
        engine: new SagaEngine({ store: new PrismaSagaStore(app), registry, recheckAfterMs: 20, backoffMs: 10 }),
        workerId: `w-first-${n}`,
        tools,
        leaseMs: LEASE_MS,
        heartbeatMs: 100,
      });
      afterNextEffect("refund", () => outage.begin());
      const [outcome] = await first.runOnce();
      expect(outcome, "the holder could not record anything").toMatchObject({ outcome: "unsettled" });
      const claimed = await direct.workerTask.findFirstOrThrow({ where: { runId: run.runId } });
      expect(claimed).toMatchObject({ status: "CLAIMED", attempt: 1, claimedBy: `w-first-${n}` });
      const chargeStep = (await new PrismaSagaStore(direct).listSteps(run.runId)).find((s) => s.tool === "charge_card")!;
      expect(chargeStep.compensationState, "the refund's own intent was written before it was sent").toBe("REQUESTED");
      while ((await databaseNow(direct)).getTime() <= claimed.leaseUntil!.getTime()) await new Promise((r) => setTimeout(r, 50));
      await outage.end();

      const second = new Worker({
        queue: prismaTaskQueue(direct),
        engine: new SagaEngine({ store: new PrismaSagaStore(direct), registry, recheckAfterMs: 20, backoffMs: 10 }),
        workerId: `w-second-${n}`,
        tools,
        leaseMs: 30_000,
      });
      const [taken] = await second.runOnce();
      expect(taken, JSON.stringify(taken)).toMatchObject({ outcome: "done", attempt: 2 });
      const late = await prismaTaskQueue(app).complete({ taskId: claimed.id, attempt: 1, workerId: `w-first-${n}`, result: { status: "late" } });
      expect(late, "the first worker's late completion is refused by the fence").toMatchObject({ settled: false });
      expect((await direct.workerTask.findUniqueOrThrow({ where: { id: claimed.id } })).status).toBe("DONE");
      expect((await new PrismaSagaStore(direct).getRun(run.runId))?.status).toBe(RunStatus.UNWOUND);
      expect(world.ledger.effects({ op: "payments.refund" }).length - refundsBefore, "refunded once").toBe(1);
      expect(world.ledger.operations({ op: "payments.refund", key: chargeStep.compensationKey ?? undefined }), "verified by reading back, never sent again").toHaveLength(1);
      return run.runId;
    });
  });
});
