/**
 * Worker tasks on a real database (a SQLite file, or PostgreSQL in the SAGABOARD_TEST_PG=1 run): dedupe by unique constraint, claims fenced by `attempt`,
 * tool scoping, lease expiry and take-over, stale settles refused, heartbeats; then the Worker
 * unwinding a failed run against the simulated systems (the ledger is the oracle), surviving a
 * crash mid-compensation, and 4 workers over 100 tasks with one paused past its lease.
 *
 * In-process tests share one PrismaClient (as the worker process does: two SQLite connections in one
 * process can deadlock); the cross-connection race runs in two child processes. On PostgreSQL the
 * same tests exercise the claim's `FOR UPDATE SKIP LOCKED` and concurrent transactions on a pool.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { openPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { CrashPoint, SimulatedCrash } from "@/packages/client/src/saga/crash-points";
import { SagaError } from "@/packages/client/src/saga/errors";
import type { Actor, StepRecord } from "@/packages/client/src/saga/store";
import type { UnwindReport } from "@/packages/client/src/saga/messages";
import { claimTasks } from "@/lib/server/worker/claim-tasks";
import { completeTask } from "@/lib/server/worker/complete-task";
import { enqueueTask } from "@/lib/server/worker/enqueue-task";
import { extendLease } from "@/lib/server/worker/extend-lease";
import { failTask } from "@/lib/server/worker/fail-task";
import { findTasks, getTask } from "@/lib/server/worker/find-tasks";
import { prismaTaskQueue } from "@/lib/server/worker/queue";
import { WorkerTaskKind, WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { Worker, type TaskOutcome } from "@/packages/client/src/agent/worker";
import type { WorkerEngine } from "@/packages/client/src/agent/worker-tasks";
import { expectChainIntact } from "../support/audit-chain";
import { makeScenario, type Scenario } from "../support/harness";
import { releasedTogether } from "../support/released-together";
import { refundAndReship } from "../support/support-agent";
import { reserveTestDatabase } from "../support/test-database";

// The claimer script for the child processes lives here.
const dir = mkdtempSync(path.join(os.tmpdir(), "sagaboard-worker-"));
const database = reserveTestDatabase("worker");
const url = database.url;
let prisma: PrismaClient;
let store: PrismaSagaStore;

beforeAll(async () => {
  await database.create();
  prisma = await openPrisma(url);
  store = new PrismaSagaStore(prisma);
});

afterAll(async () => {
  await prisma?.$disconnect();
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

const system: Actor = { type: "system", id: "worker-tasks-test" };
let runs = 0;

async function newRun(): Promise<string> {
  runs += 1;
  const id = `run_wt_${Date.now().toString(36)}_${runs}`;
  await store.createRun({ id, title: "worker tasks", agent: "it", onBehalfOf: null, metadata: {} }, { type: "run.started", actor: system });
  return id;
}

/** Enqueues `n` UNWIND tasks needing `tools` (each test uses its own tool names, so tests never claim each other's tasks). */
async function enqueueMany(runId: string, n: number, tools: string[], prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { task } = await enqueueTask(prisma, { kind: "UNWIND", runId, tools, payload: { reason: `${prefix} ${i}` }, dedupeKey: `${prefix}:${runId}:${i}` });
    ids.push(task.id);
  }
  return ids;
}

async function claimAll(workerId: string, tools: string[], max: number, leaseMs = 60_000): Promise<string[]> {
  const got: string[] = [];
  for (;;) {
    const batch = await claimTasks(prisma, { workerId, tools, max, leaseMs });
    if (batch.length === 0) return got;
    got.push(...batch.map((t) => t.id));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Sleeps until just past `until` (a lease end by the database clock, which is this machine's). */
const sleepPast = (until: Date) => sleep(Math.max(0, until.getTime() - Date.now()) + 30);

describe("worker task use cases", () => {
  it("enqueue dedupes on the dedupe key: ten concurrent enqueues make one task and one audit event", async () => {
    const runId = await newRun();
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        enqueueTask(prisma, { kind: "UNWIND", runId, tools: ["dd-b", "dd-a", "dd-a"], payload: { reason: "warehouse rejected" }, dedupeKey: `unwind:${runId}` }),
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.task.id)).size).toBe(1);
    const [task] = await findTasks(prisma, { runId });
    expect(task).toMatchObject({ kind: "UNWIND", status: "PENDING", attempt: 0, claimedBy: null, tools: ["dd-a", "dd-b"], payload: { reason: "warehouse rejected" } });
    expect(await findTasks(prisma, { runId })).toHaveLength(1);
    const events = await expectChainIntact(store, runId);
    expect(events.filter((e) => e.type === "task.enqueued")).toHaveLength(1);

    // A settled task still holds its key: enqueueing the same purpose again returns it.
    const [claimed] = await claimTasks(prisma, { workerId: "dd-w", tools: ["dd-a", "dd-b"], max: 1, leaseMs: 60_000 });
    await completeTask(prisma, { taskId: claimed!.id, attempt: claimed!.attempt, workerId: "dd-w", result: { ok: true } });
    const again = await enqueueTask(prisma, { kind: "UNWIND", runId, tools: [], payload: { reason: "again" }, dedupeKey: `unwind:${runId}` });
    expect(again).toMatchObject({ created: false, task: { id: task!.id, status: "DONE" } });
  });

  it("enqueue refuses malformed input and unknown runs or steps", async () => {
    const runId = await newRun();
    await expect(enqueueTask(prisma, { kind: "UNWIND", runId, tools: [], payload: {}, dedupeKey: "bad:1" })).rejects.toBeInstanceOf(ZodError);
    await expect(enqueueTask(prisma, { kind: "RECONCILE", runId, tools: [], payload: {}, dedupeKey: "bad:2" })).rejects.toBeInstanceOf(ZodError);
    await expect(
      enqueueTask(prisma, { kind: "UNWIND", runId: "run_missing", tools: [], payload: { reason: "x" }, dedupeKey: "bad:3" }),
    ).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    await expect(
      enqueueTask(prisma, { kind: "RECONCILE", runId, stepId: "stp_missing", tools: [], payload: {}, dedupeKey: "bad:4" }),
    ).rejects.toBeInstanceOf(SagaError);
    expect(await findTasks(prisma, { runId })).toEqual([]);
  });

  it("two claimers in parallel over 50 tasks: every task is claimed exactly once per lease", async () => {
    const runId = await newRun();
    const ids = await enqueueMany(runId, 50, ["fence"], "fence");
    const [a, b] = await Promise.all([claimAll("fence-a", ["fence"], 7), claimAll("fence-b", ["fence"], 7)]);
    const all = [...a!, ...b!];
    expect(all).toHaveLength(50);
    expect(new Set(all)).toEqual(new Set(ids));
    const tasks = await findTasks(prisma, { runId });
    expect(tasks.every((t) => t.status === "CLAIMED" && t.attempt === 1)).toBe(true);
    for (const t of tasks) expect(t.claimedBy).toBe(a!.includes(t.id) ? "fence-a" : "fence-b");
    // Within the lease nobody else gets any of them.
    expect(await claimTasks(prisma, { workerId: "fence-c", tools: ["fence"], max: 50, leaseMs: 60_000 })).toEqual([]);
  });

  it("two claimers in two processes (two connections) over 50 tasks: disjoint claims that cover every task", async () => {
    const runId = await newRun();
    const ids = await enqueueMany(runId, 50, ["xproc"], "xproc");
    const outputs = await claimInProcesses(2, ["xproc"], 5);
    const all = outputs.flat();
    expect(all).toHaveLength(50);
    expect(new Set(all)).toEqual(new Set(ids));
    const tasks = await findTasks(prisma, { runId });
    expect(tasks.every((t) => t.status === "CLAIMED" && t.attempt === 1)).toBe(true);
    await expectChainIntact(store, runId);
  }, 60_000);

  it("claims only tasks whose tools are all among the worker's", async () => {
    const runId = await newRun();
    const mk = (tools: string[], i: number) =>
      enqueueTask(prisma, { kind: "UNWIND", runId, tools, payload: { reason: "scope" }, dedupeKey: `scope:${runId}:${i}` }).then((r) => r.task.id);
    const onlyA = await mk(["scope-a"], 1);
    const aAndB = await mk(["scope-a", "scope-b"], 2);
    const bAndC = await mk(["scope-b", "scope-c"], 3);
    const none = await mk([], 4);

    const c = await claimTasks(prisma, { workerId: "scope-w1", tools: ["scope-c"], max: 10, leaseMs: 60_000 });
    expect(c.map((t) => t.id)).toEqual([none]); // needs no connector at all
    const ab = await claimTasks(prisma, { workerId: "scope-w2", tools: ["scope-b", "scope-a", "unrelated"], max: 10, leaseMs: 60_000 });
    expect(ab.map((t) => t.id).sort()).toEqual([onlyA, aAndB].sort());
    const bc = await claimTasks(prisma, { workerId: "scope-w3", tools: ["scope-b", "scope-c"], max: 10, leaseMs: 60_000 });
    expect(bc.map((t) => t.id)).toEqual([bAndC]);
    expect(await claimTasks(prisma, { workerId: "scope-w4", tools: [], max: 10, leaseMs: 60_000 })).toEqual([]);
  });

  it("an expired lease is reclaimable and bumps attempt; the old holder's settles change nothing", async () => {
    const runId = await newRun();
    const [id] = await enqueueMany(runId, 1, ["expiry"], "expiry");
    const [first] = await claimTasks(prisma, { workerId: "holder-a", tools: ["expiry"], max: 1, leaseMs: 400 });
    expect(first).toMatchObject({ id, attempt: 1, claimedBy: "holder-a", status: "CLAIMED" });
    expect(await claimTasks(prisma, { workerId: "holder-b", tools: ["expiry"], max: 1, leaseMs: 60_000 })).toEqual([]);

    await sleepPast(first!.leaseUntil);
    const [second] = await claimTasks(prisma, { workerId: "holder-b", tools: ["expiry"], max: 1, leaseMs: 60_000 });
    expect(second).toMatchObject({ id, attempt: 2, claimedBy: "holder-b" });
    const before = await getTask(prisma, id!);

    const stale = await completeTask(prisma, { taskId: id!, attempt: 1, workerId: "holder-a", result: { by: "a" } });
    expect(stale).toMatchObject({ settled: false, task: { status: "CLAIMED", attempt: 2, claimedBy: "holder-b", result: null } });
    expect(await failTask(prisma, { taskId: id!, attempt: 1, workerId: "holder-a", error: { m: "x" }, retry: true })).toMatchObject({ settled: false });
    expect(await getTask(prisma, id!)).toEqual(before);

    expect(await completeTask(prisma, { taskId: id!, attempt: 2, workerId: "holder-b", result: { by: "b" } })).toMatchObject({
      settled: true,
      task: { status: "DONE", attempt: 2, claimedBy: "holder-b", result: { by: "b" }, leaseUntil: null },
    });
    // Settled once: the same token cannot settle it again.
    expect(await completeTask(prisma, { taskId: id!, attempt: 2, workerId: "holder-b", result: { by: "b2" } })).toMatchObject({ settled: false });

    const events = (await expectChainIntact(store, runId)).filter((e) => e.type.startsWith("task."));
    expect(events.map((e) => [e.type, e.actor])).toEqual([
      ["task.enqueued", "system:task-queue"],
      ["task.claimed", "system:holder-a"],
      ["task.claimed", "system:holder-b"],
      ["task.completed", "system:holder-b"],
    ]);
    expect(events[2]?.data).toMatchObject({ attempt: 2, takenOverFrom: "holder-a" });
  });

  it("fail with retry hands the task back PENDING; without retry it is FAILED and never claimed again", async () => {
    const runId = await newRun();
    const [id] = await enqueueMany(runId, 1, ["retry"], "retry");
    const [first] = await claimTasks(prisma, { workerId: "retry-a", tools: ["retry"], max: 1, leaseMs: 60_000 });
    expect(await failTask(prisma, { taskId: id!, attempt: first!.attempt, workerId: "retry-a", error: { message: "busy" }, retry: true })).toMatchObject({
      settled: true,
      task: { status: "PENDING", attempt: 1, claimedBy: null, leaseUntil: null, error: { message: "busy" } },
    });
    const [second] = await claimTasks(prisma, { workerId: "retry-b", tools: ["retry"], max: 1, leaseMs: 60_000 });
    expect(second).toMatchObject({ id, attempt: 2, claimedBy: "retry-b" });
    expect(await failTask(prisma, { taskId: id!, attempt: 2, workerId: "retry-b", error: { message: "gone" }, retry: false })).toMatchObject({
      settled: true,
      task: { status: "FAILED", error: { message: "gone" } },
    });
    expect(await claimTasks(prisma, { workerId: "retry-c", tools: ["retry"], max: 1, leaseMs: 60_000 })).toEqual([]);
    expect((await findTasks(prisma, { runId, status: ["FAILED"] })).map((t) => t.id)).toEqual([id]);
  });

  it("a heartbeat extends the lease only for the holder of the current token", async () => {
    const runId = await newRun();
    const [kept, lost] = await enqueueMany(runId, 2, ["beat"], "beat");
    const claimed = await claimTasks(prisma, { workerId: "beat-a", tools: ["beat"], max: 2, leaseMs: 300 });
    const keptTask = claimed.find((t) => t.id === kept)!;
    const lostTask = claimed.find((t) => t.id === lost)!;

    const beat = await extendLease(prisma, { taskId: kept!, attempt: keptTask.attempt, workerId: "beat-a", leaseMs: 60_000 });
    expect(beat.extended).toBe(true);
    if (beat.extended) expect(beat.leaseUntil.getTime()).toBeGreaterThan(keptTask.leaseUntil.getTime() + 50_000);

    await sleepPast(lostTask.leaseUntil);
    const takenOver = await claimTasks(prisma, { workerId: "beat-b", tools: ["beat"], max: 2, leaseMs: 60_000 });
    expect(takenOver.map((t) => t.id)).toEqual([lost]); // the heartbeated one stayed with beat-a

    const late = await extendLease(prisma, { taskId: lost!, attempt: lostTask.attempt, workerId: "beat-a", leaseMs: 60_000 });
    expect(late).toMatchObject({ extended: false, task: { claimedBy: "beat-b", attempt: 2 } });
    expect((await getTask(prisma, lost!))?.leaseUntil).toEqual(takenOver[0]?.leaseUntil);
  });
});

describe("Worker", () => {
  /** A scenario whose PrismaSagaStore shares the suite's client (the worker process's set-up). */
  async function scenario(): Promise<Scenario> {
    return makeScenario(async () => ({ store, cleanup: async () => {} }));
  }

  async function failedRun(s: Scenario): Promise<string> {
    s.world.faults.inject("warehouse.reship", { kind: "reject", status: 422, code: "out_of_stock" });
    const run = await s.engine().startRun({ title: "Refund and reship order 1182", agent: "support-agent", onBehalfOf: "cus_ada" });
    expect(await refundAndReship(run)).toBe("failed");
    return run.runId;
  }

  async function enqueueUnwind(runId: string): Promise<string> {
    const tools = [...new Set((await store.listSteps(runId)).map((step) => step.tool))];
    const { task } = await enqueueTask(prisma, {
      kind: WorkerTaskKind.UNWIND,
      runId,
      tools,
      payload: { reason: "warehouse rejected the reship" },
      dedupeKey: `unwind:${runId}`,
      actor: { type: "user", id: "reviewer@example.com" },
    });
    return task.id;
  }

  /** A worker with every support tool's connector, on a fresh engine (what a worker process builds). */
  function worker(s: Scenario, workerId: string, leaseMs = 30_000): Worker {
    const engine = s.engine();
    const tools = engine.deps.registry.list().map((t) => t.name);
    return new Worker({ queue: prismaTaskQueue(prisma), engine, workerId, tools, leaseMs, maxTasks: 4 });
  }

  function expectOneRefundOneClose(s: Scenario) {
    const { ledger } = s.world;
    expect(ledger.count({ op: "payments.refund" })).toBe(1);
    expect(ledger.count({ op: "ticketing.close" })).toBe(1);
    expect(ledger.operations({ op: "ticketing.close", outcome: "not_found" })).toHaveLength(0);
    expect(ledger.duplicates("payments.refund")).toEqual([]);
    expect(ledger.count({ op: "warehouse.reship" })).toBe(0);
  }

  it("two workers run one UNWIND task once: one refund, one ticket close, task DONE, run UNWOUND", async () => {
    const s = await scenario();
    const runId = await failedRun(s);
    const taskId = await enqueueUnwind(runId);

    const [one, two] = await Promise.all([worker(s, "worker-one").runOnce(), worker(s, "worker-two").runOnce()]);
    const outcomes = [...one!, ...two!];
    expect(outcomes.map((o) => [o.taskId, o.outcome])).toEqual([[taskId, "done"]]);

    expectOneRefundOneClose(s);
    const task = await getTask(prisma, taskId);
    expect(task).toMatchObject({ status: WorkerTaskStatus.DONE, attempt: 1, result: { status: "UNWOUND", compensated: [1, 0], skipped: [2] } });
    expect((await store.getRun(runId))?.status).toBe("UNWOUND");
    expect((await store.listSteps(runId)).map((r) => r.status)).toEqual(["COMPENSATED", "COMPENSATED", "FAILED"]);
    const events = await expectChainIntact(store, runId);
    const holder = task!.claimedBy!;
    expect(events.filter((e) => e.type.startsWith("task.") || e.type.startsWith("run.unw")).map((e) => [e.type, e.actor])).toEqual([
      ["task.enqueued", "user:reviewer@example.com"],
      ["task.claimed", `system:${holder}`],
      ["run.unwinding", `system:${holder}`],
      ["run.unwound", `system:${holder}`],
      ["task.completed", `system:${holder}`],
    ]);
  });

  it("a worker that dies mid-compensation is taken over after its lease: the refund still happens once", async () => {
    const s = await scenario();
    const runId = await failedRun(s);
    const taskId = await enqueueUnwind(runId);
    s.crashPoints.arm(CrashPoint.MID_COMPENSATION); // after the refund was sent, before it is confirmed

    const dying = worker(s, "worker-dies", 800);
    await expect(dying.runOnce()).rejects.toBeInstanceOf(SimulatedCrash);
    expect(await getTask(prisma, taskId)).toMatchObject({ status: "CLAIMED", attempt: 1, claimedBy: "worker-dies" });
    expect((await store.listSteps(runId))[1]).toMatchObject({ tool: "charge_card", compensationState: "REQUESTED" });

    const heir = worker(s, "worker-heir");
    expect(await heir.runOnce()).toEqual([]); // the lease still holds
    await sleepPast((await getTask(prisma, taskId))!.leaseUntil!);
    const [outcome] = await heir.runOnce();
    expect(outcome).toMatchObject({ taskId, attempt: 2, outcome: "done" });

    expectOneRefundOneClose(s);
    expect(await getTask(prisma, taskId)).toMatchObject({ status: "DONE", attempt: 2, claimedBy: "worker-heir", result: { status: "UNWOUND" } });
    expect((await store.listSteps(runId)).every((r) => r.compensationState !== "REQUESTED")).toBe(true);
    await expectChainIntact(store, runId);
  });

  it("COMPENSATE pulls back one step, once, confirmed by reading back; RECONCILE settles a step; a bad payload fails for good", async () => {
    const s = await scenario();
    const runId = await failedRun(s);
    const [ticket] = await store.listSteps(runId);
    const enqueue = (kind: "COMPENSATE" | "RECONCILE", dedupeKey: string, payload: Record<string, string>) =>
      enqueueTask(prisma, { kind, runId, stepId: ticket!.id, tools: ["create_ticket"], payload, dedupeKey });
    const { task: compensate } = await enqueue("COMPENSATE", `compensate:${ticket!.id}`, { reason: "revoked by rita", draftedBy: "revoke:rvk_1" });
    const { task: reconcile } = await enqueue("RECONCILE", `reconcile:${ticket!.id}`, {});
    const { task: invalid } = await enqueue("COMPENSATE", `compensate-bad:${ticket!.id}`, {});
    const outcomes = await worker(s, "worker-kinds").runOnce();
    expect(outcomes.map((o) => [o.taskId, o.outcome]).sort()).toEqual([
      [compensate.id, "done"],
      [reconcile.id, "done"],
      [invalid.id, "failed"],
    ].sort());
    expect(await getTask(prisma, compensate.id)).toMatchObject({ status: "DONE", result: { stepIdx: 0, tool: "create_ticket", status: "COMPENSATED", compensationState: "CONFIRMED" } });
    expect(await getTask(prisma, invalid.id)).toMatchObject({ status: "FAILED", error: { code: "INVALID_PAYLOAD", permanent: true } });
    expect((await store.listSteps(runId))[0]).toMatchObject({ status: "COMPENSATED", compensationState: "CONFIRMED" });
    const closes = () => s.world.ledger.count({ op: "ticketing.close", ref: ticket!.externalRef ?? "", outcome: "effect" });
    expect(closes()).toBe(1);

    // Pulled again (another task for the same step): nothing more happens in the real system.
    const { task: again } = await enqueue("COMPENSATE", `compensate-again:${ticket!.id}`, { reason: "pulled twice" });
    expect((await worker(s, "worker-kinds").runOnce()).map((o) => [o.taskId, o.outcome])).toEqual([[again.id, "done"]]);
    expect(closes()).toBe(1);
    await expectChainIntact(store, runId);
  });

  it("transient errors hand the task back until maxAttempts, then fail it", async () => {
    const runId = await newRun();
    const [id] = await enqueueMany(runId, 1, ["flaky"], "flaky");
    const engine: WorkerEngine = {
      unwind: async () => {
        throw new Error("connection reset");
      },
      reconcile: async () => {
        throw new Error("unused");
      },
      compensateStep: async () => {
        throw new Error("unused");
      },
    };
    const w = new Worker({ queue: prismaTaskQueue(prisma), engine, workerId: "flaky-w", tools: ["flaky"], maxAttempts: 3 });
    const rounds: TaskOutcome[][] = [];
    for (let i = 0; i < 4; i++) rounds.push(await w.runOnce());
    expect(rounds.map((r) => r.map((o) => [o.attempt, o.outcome]))).toEqual([[[1, "retried"]], [[2, "retried"]], [[3, "failed"]], []]);
    expect(await getTask(prisma, id!)).toMatchObject({ status: "FAILED", attempt: 3, error: { message: "connection reset", permanent: false } });
  });

  it("4 workers over 100 tasks, one paused past its lease: every task DONE exactly once, the paused one's completions refused", async () => {
    const started = Date.now();
    const runId = await newRun();
    const ids = await enqueueMany(runId, 100, ["load"], "load");
    const executions = new Map<string, number>();
    const gate = () => {
      let open: () => void = () => {};
      const opened = new Promise<void>((resolve) => (open = resolve));
      return { open, opened };
    };
    const sleeperWakes = gate(); // the paused worker resumes
    const sleeperEntered = gate(); // the paused worker is inside its first task
    const heirsGo = gate(); // the workers that took its tasks over may finish them
    let takeoversRunning = 0;

    const fakeEngine = (role: "paused" | "active"): WorkerEngine => ({
      unwind: async (id: string, _actor: Actor, reason: string): Promise<UnwindReport> => {
        const n = (executions.get(reason) ?? 0) + 1;
        executions.set(reason, n);
        if (role === "paused") {
          sleeperEntered.open();
          await sleeperWakes.opened; // a GC pause, a stopped VM: no heartbeats either
        } else if (n > 1) {
          // A taken-over task: hold it (heartbeating) until the paused worker has woken and tried
          // to complete it, so its refusal rests on the fencing token alone (the task is still CLAIMED).
          takeoversRunning++;
          await heirsGo.opened;
        } else {
          await sleep(Math.random() * 4);
        }
        return { runId: id, status: "UNWOUND", compensated: [], compensationFailed: [], unresolved: [], corrections: [], skipped: [] };
      },
      reconcile: async (): Promise<StepRecord> => {
        throw new Error("not used");
      },
      compensateStep: async (): Promise<StepRecord> => {
        throw new Error("not used");
      },
    });
    // The paused worker's lease is short, so its tasks are taken over soon; the others' are long, so a
    // stall of this machine cannot make them lose theirs and muddle the figures.
    const common = { queue: prismaTaskQueue(prisma), tools: ["load"], maxTasks: 5, pollMs: 20 };
    const sleeper = new Worker({ ...common, leaseMs: 400, engine: fakeEngine("paused"), workerId: "load-paused", heartbeatMs: 60_000 });
    const sleeperRound = sleeper.runOnce();
    await sleeperEntered.opened;
    const workers = ["load-1", "load-2", "load-3"].map((workerId) => new Worker({ ...common, leaseMs: 10_000, engine: fakeEngine("active"), workerId }));
    for (const w of workers) w.start();

    const waitFor = async (what: string, done: () => Promise<boolean> | boolean) => {
      const deadline = Date.now() + 30_000;
      while (!(await done())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await sleep(20);
      }
    };
    await waitFor("the paused worker's 5 tasks to be taken over", () => takeoversRunning === 5);
    const heldByHeirs = await findTasks(prisma, { runId, status: ["CLAIMED"], take: 500 });
    expect(heldByHeirs.filter((t) => t.attempt === 2)).toHaveLength(5);
    sleeperWakes.open();
    const sleeperOutcomes = await sleeperRound; // its completions meet tasks CLAIMED under attempt 2
    heirsGo.open();
    await waitFor("all 100 tasks DONE", async () => (await findTasks(prisma, { runId, status: ["DONE"], take: 500 })).length === 100);
    await Promise.all(workers.map((w) => w.stop()));

    const tasks = await findTasks(prisma, { runId, take: 500 });
    expect(tasks.map((t) => t.status)).toEqual(Array(100).fill("DONE"));
    expect(new Set(tasks.map((t) => t.id))).toEqual(new Set(ids));

    // The saga of each task in the audit chain: exactly one completion per task.
    const events = await expectChainIntact(store, runId);
    const completions = new Map<string, number>();
    for (const e of events.filter((e) => e.type === "task.completed")) {
      const taskId = (e.data as { taskId: string }).taskId;
      completions.set(taskId, (completions.get(taskId) ?? 0) + 1);
    }
    const duplicates = [...completions.values()].filter((n) => n > 1).length;
    expect(completions.size).toBe(100);
    expect(duplicates).toBe(0);

    const refused = sleeper.stats.superseded;
    expect(sleeperOutcomes).toHaveLength(5);
    expect(sleeperOutcomes.every((o) => o.outcome === "superseded")).toBe(true);
    expect(refused).toBe(5);
    expect(sleeper.stats.done).toBe(0);
    expect(workers.reduce((n, w) => n + w.stats.done, 0)).toBe(100);
    const takenOver = tasks.filter((t) => t.attempt > 1).length;
    expect(takenOver).toBe(5);
    const reExecuted = [...executions.values()].filter((n) => n > 1).length;
    expect(reExecuted).toBe(5); // at-least-once execution, exactly-once completion

    console.log(
      `worker-tasks load: tasks=${tasks.length} workers=4 (1 paused past its 400 ms lease) done=${tasks.length} ` +
        `duplicates=${duplicates} stale completions refused=${refused} taken over=${takenOver} re-executed=${reExecuted} ` +
        `per worker=[${workers.map((w) => w.stats.done).join(",")},${sleeper.stats.done}] elapsed=${Date.now() - started}ms`,
    );
  }, 60_000);

  it("start/stop: the loop picks up work as it arrives and stops cleanly", async () => {
    const runId = await newRun();
    const calls: string[] = [];
    const engine: WorkerEngine = {
      unwind: async (_id, _actor, reason) => {
        calls.push(reason);
        return { runId, status: "UNWOUND", compensated: [], compensationFailed: [], unresolved: [], corrections: [], skipped: [] };
      },
      reconcile: async () => {
        throw new Error("unused");
      },
      compensateStep: async () => {
        throw new Error("unused");
      },
    };
    const lines: string[] = [];
    const w = new Worker({ queue: prismaTaskQueue(prisma), engine, workerId: "loop-w", tools: ["loop"], pollMs: 20, log: (l) => lines.push(l) });
    w.start();
    expect(w.running).toBe(true);
    await sleep(60);
    await enqueueMany(runId, 3, ["loop"], "loop");
    const deadline = Date.now() + 10_000;
    while (calls.length < 3 && Date.now() < deadline) await sleep(20);
    await w.stop();
    expect(w.running).toBe(false);
    expect(calls.sort()).toEqual(["loop 0", "loop 1", "loop 2"]);
    expect(w.stats).toMatchObject({ claimed: 3, done: 3, superseded: 0 });
    expect(lines.some((l) => /claimed task tsk_\S+ to unwind run/.test(l))).toBe(true);
    expect(lines.at(-1)).toBe("loop-w: stopped");
  });
});

// ---------------------------------------------------------------------------------------------
// Claimers in separate processes, each with its own connection (SQLite file or PostgreSQL pool), released together.

const CLAIMER_SOURCE = `
import { createInterface } from "node:readline";
import { openPrisma } from ${JSON.stringify(path.join(process.cwd(), "lib/core/db/prisma.ts"))};
import { claimTasks } from ${JSON.stringify(path.join(process.cwd(), "lib/server/worker/claim-tasks.ts"))};
const [url, workerId, toolsCsv, max] = process.argv.slice(2);
const prisma = await openPrisma(url);
const rl = createInterface({ input: process.stdin });
process.stdout.write("ready\\n");
await new Promise((resolve) => rl.once("line", resolve));
rl.close();
const got = [];
for (;;) {
  const batch = await claimTasks(prisma, { workerId, tools: toolsCsv.split(","), max: Number(max), leaseMs: 60000 });
  if (batch.length === 0) break;
  got.push(...batch.map((t) => t.id));
}
await prisma.$disconnect();
process.stdout.write(JSON.stringify(got) + "\\n");
`;

async function claimInProcesses(count: number, tools: string[], max: number): Promise<string[][]> {
  const script = path.join(dir, "claimer.mts");
  writeFileSync(script, CLAIMER_SOURCE);
  return releasedTogether<string[]>("claimer", script, (i) => [url, `proc-${i}`, tools.join(","), String(max)], count);
}
