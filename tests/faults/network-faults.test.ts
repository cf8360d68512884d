/**
 * Fault matrix, second pass: the network between agent, server and worker. The app's route handlers
 * are served over real HTTP (tests/support/http-server.ts) and agents and workers reach them through
 * a TCP proxy of this suite's own (tests/support/tcp-proxy.ts) that delays, holds, drops and
 * partitions, with the real fetch and the TypeScript client's own timeouts and re-sends. On this
 * run's store (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1); nothing here is store-specific.
 *
 *   timeout-after-commit  the server committed the charge's intent (even trials) or its outcome (odd
 *                         ones), but the answer is held past the agent's timeout: the agent re-sends;
 *                         the intent's repeat is reconciled by key before anything is called, the
 *                         outcome's repeat gets the recorded row back. One charge.
 *   answer-lost           the same answers never come (the connection is reset instead): the
 *                         re-sends are answered from the log. One charge.
 *   claim-answer-lost     a worker's claim is granted, its answer reset: the task waits out its lease
 *                         (a known wait: HttpTaskQueue.claim), then is taken again and runs once.
 *   complete-answer-lost  a worker's completion is recorded, its answer reset: the re-send is told it
 *                         settled (Idempotency-Key), not that another worker superseded it.
 *   worker-partitioned    a worker unwinding a run is cut off from the server right after its refund,
 *                         while still running, past its lease: another worker takes the task over,
 *                         verifies the refund instead of sending another, and completes it; when the
 *                         partition heals, the first worker's held writes arrive late and the fence
 *                         refuses them (its heartbeat finds the lease gone, its completion is
 *                         superseded). One refund.
 *   slow-server           every answer takes a second or more (2 s per chunk with SAGABOARD_FAULT_FULL):
 *                         runs complete, each effect once.
 * Every trial: 0 duplicate effects, 0 lost intents, no INTENDED/UNKNOWN row at rest (the oracle over
 * the simulated systems' ledger). Trials: SAGABOARD_FAULT_MATRIX_TRIALS (2), 10+ with SAGABOARD_FAULT_FULL=1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { HttpTaskQueue } from "@/packages/client/src/agent/client/http-task-queue";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { databaseNow } from "@/lib/core/db/dialect";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { RunStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import { World } from "@/lib/demo/sim";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { enqueueTask } from "@/lib/server/worker/enqueue-task";
import { Worker } from "@/packages/client/src/agent/worker";
import { makeToken, useTestDatabase } from "../api/api-test-kit";
import { startTestServer, type TestServer } from "../support/http-server";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy";
import { figuresFor, matrixLine, MATRIX_TRIALS, recordMatrixLine } from "./fault-matrix";

const FULL = process.env.SAGABOARD_FAULT_FULL === "1";
const TRIALS = FULL ? Math.max(MATRIX_TRIALS, 10) : MATRIX_TRIALS;
const getPrisma = useTestDatabase("fault-network");
const world = new World({ searchLagMs: 0 });
const registry = createSupportToolRegistry(world);
let prisma: PrismaClient;
let server: TestServer;
let proxy: TcpProxy;
/** The server as agents and workers see it: through the proxy. */
let viaProxy: string;
let agentToken: { secret: string; name: string };

beforeAll(async () => {
  prisma = await getPrisma();
  await syncToolPolicies(prisma, registry);
  agentToken = await makeToken(["create_ticket", "charge_card"], `net-agent-${process.pid}`);
  server = await startTestServer();
  proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(server.url).port) });
  viaProxy = `http://127.0.0.1:${proxy.port}`;
});

afterAll(async () => {
  await proxy?.close();
  await server?.close();
});

/** An agent through the proxy; `timeoutMs` is its client's per-request timeout. */
function agent(timeoutMs = 10_000): SagaEngine {
  // Each outcome in its own request, recorded before the call returns: these look at the log right
  // after a call (tests/api/pipelined-calls.test.ts covers the client's default, outcome with the next call).
  const store = new HttpSagaStore({ baseUrl: viaProxy, token: agentToken.secret, timeoutMs, outcomeLingerMs: 0 });
  return new SagaEngine({ store, registry, recheckAfterMs: 20, backoffMs: 10 });
}

const charge = (n: number) => ({ customerId: "cus_ada", amount: 3000 + n, currency: "eur", reason: `network fault ${n}` });
const chargesSince = (from: number) => world.ledger.effects({ op: "payments.charge" }).slice(from);

/** The request line the proxy recognises a request by (its method and path). */
const requestLine = (method: string, path: string) => `${method} ${path} HTTP/1.1`;

/** Calls `fn` once when the provider's `op` has taken effect (the connector wrapped for one call). */
function afterNextEffect<K extends "charge" | "refund">(op: K, fn: (result: { id: string }) => void): void {
  const payments = world.payments as unknown as Record<K, (...args: unknown[]) => Promise<{ id: string }>>;
  const original = payments[op];
  payments[op] = async (...args: unknown[]) => {
    payments[op] = original;
    const result = await original.apply(world.payments, args);
    fn(result);
    return result;
  };
}

/** A worker over the API at `baseUrl` with a worker token of its own. */
async function httpWorker(id: string, baseUrl: string, tools: string[], leaseMs: number): Promise<Worker> {
  const { secret } = await createAgentToken(prisma, { name: `${id}-${process.pid}`, tools, role: "worker", createdBy: "test" });
  const transport = { baseUrl, token: secret };
  // Each outcome in its own request, recorded before the call returns: these look at the log right
  // after a call (tests/api/pipelined-calls.test.ts covers the client's default, outcome with the next call).
  const engine = new SagaEngine({ store: new HttpSagaStore({ ...transport, outcomeLingerMs: 0 }), registry, recheckAfterMs: 20, backoffMs: 10 });
  return new Worker({ queue: new HttpTaskQueue(transport), engine, workerId: id, tools, leaseMs, heartbeatMs: Math.floor(leaseMs / 3) });
}

/** The charge step's audit event types, oldest first. */
async function chargeEvents(runId: string): Promise<string[]> {
  const step = await prisma.step.findFirstOrThrow({ where: { runId, tool: "charge_card" } });
  return (await prisma.auditEvent.findMany({ where: { stepId: step.id }, select: { type: true }, orderBy: { seq: "asc" } })).map((e) => e.type);
}

async function fault(name: string, trial: (t: number) => Promise<string>, trials = TRIALS): Promise<void> {
  const from = world.ledger.operations().length;
  const runIds: string[] = [];
  for (let t = 0; t < trials; t++) runIds.push(await trial(t));
  const { figures, escalations } = await figuresFor(new PrismaSagaStore(prisma), world.ledger.operations().slice(from), runIds);
  const line = matrixLine({ name: `network:${name}`, trials, figures, escalated: escalations.length });
  recordMatrixLine(line);
  expect(figures.violations, line).toEqual([]);
  expect(figures.effects, "every trial made its effect").toBeGreaterThanOrEqual(trials);
}

/**
 * One charge whose intent's answer (even trials) or outcome's answer (odd trials) goes wrong at the
 * proxy (`action`) after the server committed it; the client's own re-sends must end with one charge,
 * CONFIRMED. A lost intent answer is seen in the log: the re-sent intent found the row in flight and
 * reconciled it by key (absent) before the one call; a lost outcome answer's re-send got the row back.
 */
async function chargeThroughLostAnswer(n: number, t: number, action: "hold-answer" | "drop-answer", engine: SagaEngine): Promise<string> {
  const run = await engine.startRun({ title: `network ${action} ${n}`, agent: agentToken.name });
  const before = world.ledger.effects({ op: "payments.charge" }).length;
  const onIntent = t % 2 === 0;
  let fired: Promise<void> = Promise.resolve();
  if (onIntent) fired = proxy.armOnce({ match: requestLine("POST", `/api/v1/runs/${run.runId}/calls`), action, holdMs: 1200 });
  else afterNextEffect("charge", () => (fired = proxy.armOnce({ match: "/outcome HTTP/1.1", action, holdMs: 1200 })));
  expect(await run.call("charge_card", charge(n))).toMatchObject({ status: "ok" });
  await fired;
  const effects = chargesSince(before);
  expect(effects, "one charge").toHaveLength(1);
  expect(await prisma.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } })).toMatchObject({ status: StepStatus.CONFIRMED, externalRef: effects[0]!.ref });
  // Contained, not equal: on a loaded machine another request of the run may time out too, and its
  // re-send takes the same safe path.
  const events = await chargeEvents(run.runId);
  expect(events.filter((e) => e === "step.confirmed"), "confirmed once").toHaveLength(1);
  if (onIntent) expect(events).toEqual(expect.arrayContaining(["step.intended", "step.reconciled", "step.retry_intended", "step.confirmed"]));
  await run.complete();
  return run.runId;
}

// Seconds per trial (Retry-After waits, leases, held answers): the nightly run's 50 trials need more than the default 30 s.
describe("the network between agent, server and worker", { timeout: 30_000 + TRIALS * 5_000 }, () => {
  it("timeout-after-commit: answers held past the agent's timeout; the re-sends are answered from the log, one charge", async () => {
    await fault("timeout-after-commit", (t) => chargeThroughLostAnswer(100 + t, t, "hold-answer", agent(600)));
  });

  it("answer-lost: the connection is reset instead of the answer; the re-sends are answered from the log, one charge", async () => {
    await fault("answer-lost", (t) => chargeThroughLostAnswer(200 + t, t, "drop-answer", agent()));
  });

  it("worker-partitioned: a worker cut off past its lease while running; another takes over; its late writes are refused by the fence", async () => {
    const LEASE_MS = 500;
    await fault("worker-partitioned", async (t) => {
      const n = 300 + t;
      const run = await agent().startRun({ title: `partitioned worker ${n}`, agent: agentToken.name });
      expect(await run.call("charge_card", charge(n))).toMatchObject({ status: "ok" });
      await run.complete();
      const tools = ["charge_card"];
      await enqueueTask(prisma, { kind: "UNWIND", runId: run.runId, tools, payload: { reason: "network fault" }, dedupeKey: `net:${run.runId}` });
      const refundsBefore = world.ledger.effects({ op: "payments.refund" }).length;
      const first = await httpWorker(`w-cut-${n}`, viaProxy, tools, LEASE_MS);
      const second = await httpWorker(`w-next-${n}`, server.url, tools, LEASE_MS);

      // The partition starts right after the first worker's refund: it still runs, its writes wait in the network.
      afterNextEffect("refund", () => proxy.partition());
      const firstRound = first.runOnce();
      const task = await waitFor(async () => {
        const row = await prisma.workerTask.findFirst({ where: { runId: run.runId, status: "CLAIMED" } });
        return row && world.ledger.effects({ op: "payments.refund" }).length > refundsBefore ? row : null;
      });
      // Re-read each time: a heartbeat that reached the server just before the partition may have moved it.
      await waitFor(async () => {
        const { leaseUntil } = await prisma.workerTask.findUniqueOrThrow({ where: { id: task.id } });
        return (await databaseNow(prisma)).getTime() > leaseUntil!.getTime() ? true : null;
      });
      const [taken] = await second.runOnce();
      expect(taken, JSON.stringify(taken)).toMatchObject({ outcome: "done", attempt: 2 });
      expect(await prisma.step.findFirstOrThrow({ where: { runId: run.runId } })).toMatchObject({ status: StepStatus.COMPENSATED });

      proxy.heal();
      const [late] = await firstRound;
      expect(late, "the partitioned worker's late completion is refused by the fence").toMatchObject({ outcome: "superseded", attempt: 1 });
      expect(first.stats.leasesLost + first.stats.superseded).toBeGreaterThan(0);
      expect(await prisma.workerTask.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({ status: "DONE", attempt: 2, claimedBy: `w-next-${n}` });
      expect((await new PrismaSagaStore(prisma).getRun(run.runId))?.status).toBe(RunStatus.UNWOUND);
      expect(world.ledger.effects({ op: "payments.refund" }).length - refundsBefore, "refunded once").toBe(1);
      return run.runId;
    });
  });

  it("claim-answer-lost: a worker's claim is granted but its answer lost; the task waits out its lease, then runs once", async () => {
    const LEASE_MS = 400;
    await fault("claim-answer-lost", async (t) => {
      const n = 350 + t;
      const run = await agent().startRun({ title: `claim answer lost ${n}`, agent: agentToken.name });
      expect(await run.call("charge_card", charge(n))).toMatchObject({ status: "ok" });
      const tools = ["charge_card"];
      await enqueueTask(prisma, { kind: "UNWIND", runId: run.runId, tools, payload: { reason: "network fault" }, dedupeKey: `net:${run.runId}` });
      const refundsBefore = world.ledger.effects({ op: "payments.refund" }).length;
      const worker = await httpWorker(`w-claim-${n}`, viaProxy, tools, LEASE_MS);
      const lost = proxy.armOnce({ match: requestLine("POST", "/api/v1/worker/claim"), action: "drop-answer" });
      // The re-sent claim finds the task claimed by the lost answer: nothing this round (a known wait,
      // see HttpTaskQueue.claim), and nothing ran.
      expect(await worker.runOnce()).toEqual([]);
      await lost;
      const task = await prisma.workerTask.findFirstOrThrow({ where: { runId: run.runId } });
      expect(task).toMatchObject({ status: "CLAIMED", attempt: 1 });
      while ((await databaseNow(prisma)).getTime() <= task.leaseUntil!.getTime()) await new Promise((r) => setTimeout(r, 50));
      expect(await worker.runOnce(), "taken again once the lease ran out").toEqual([expect.objectContaining({ runId: run.runId, outcome: "done", attempt: 2 })]);
      expect((await new PrismaSagaStore(prisma).getRun(run.runId))?.status).toBe(RunStatus.UNWOUND);
      expect(world.ledger.effects({ op: "payments.refund" }).length - refundsBefore, "refunded once").toBe(1);
      return run.runId;
    });
  });

  it("complete-answer-lost: a worker's completion is recorded but its answer lost; the re-send is told it settled, not that it was superseded", async () => {
    await fault("complete-answer-lost", async (t) => {
      const n = 370 + t;
      const run = await agent().startRun({ title: `complete answer lost ${n}`, agent: agentToken.name });
      expect(await run.call("charge_card", charge(n))).toMatchObject({ status: "ok" });
      const tools = ["charge_card"];
      await enqueueTask(prisma, { kind: "UNWIND", runId: run.runId, tools, payload: { reason: "network fault" }, dedupeKey: `net:${run.runId}` });
      const worker = await httpWorker(`w-done-${n}`, viaProxy, tools, 30_000);
      const lost = proxy.armOnce({ match: "/complete HTTP/1.1", action: "drop-answer" });
      const outcomes = await worker.runOnce();
      await lost;
      expect(outcomes, "its own completion, recorded once").toEqual([expect.objectContaining({ runId: run.runId, outcome: "done", attempt: 1 })]);
      expect(worker.stats).toMatchObject({ done: 1, superseded: 0 });
      return run.runId;
    });
  });

  it("slow-server: every answer takes seconds; runs complete, each effect once", async () => {
    const DELAY_MS = FULL ? 2000 : 1000;
    proxy.delay(DELAY_MS, "answers");
    try {
      // The trials run side by side (agents do), so the CI run pays the delay once, not per trial.
      const from = world.ledger.operations().length;
      const started = Date.now();
      const runIds = await Promise.all(
        Array.from({ length: TRIALS }, async (_, t) => {
          const run = await agent(DELAY_MS * 4).startRun({ title: `slow server ${t}`, agent: agentToken.name });
          expect(await run.call("charge_card", charge(400 + t))).toMatchObject({ status: "ok" });
          await run.complete();
          return run.runId;
        }),
      );
      expect(Date.now() - started, "each request waited on the slow answers").toBeGreaterThanOrEqual(4 * DELAY_MS);
      const { figures, escalations } = await figuresFor(new PrismaSagaStore(prisma), world.ledger.operations().slice(from), runIds);
      const line = matrixLine({ name: "network:slow-server", trials: TRIALS, figures, escalated: escalations.length });
      recordMatrixLine(line);
      expect(figures.violations, line).toEqual([]);
      expect(figures.effects).toBe(TRIALS);
    } finally {
      proxy.delay(0);
    }
  });
});

/** Polls `probe` until it returns a value (10 s at most). */
async function waitFor<T>(probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("waited 10 s for a condition that never came");
    await new Promise((r) => setTimeout(r, 25));
  }
}
