/**
 * The revoke trigger through the real route handlers on a real database, with an agent over the
 * HTTP API and a worker holding the connectors: a confirmed charge pulled back within its window is
 * refunded once (also when two reviewers pull at once), past the window an escalation opens, an
 * irreversible email gets a correction draft, roles the tool table does not name get 403, and a
 * whole run in progress stops the agent and is unwound last step first. Effects are counted in the
 * simulated ledger.
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as runRevokeRoute from "@/app/api/dashboard/runs/[runId]/revoke/route";
import * as optionsRoute from "@/app/api/dashboard/runs/[runId]/revokes/route";
import * as revokesRoute from "@/app/api/dashboard/revokes/route";
import * as stepRevokeRoute from "@/app/api/dashboard/steps/[stepId]/revoke/route";
import { runWithSessionReader } from "@/lib/server/auth/current-user";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { HttpTaskQueue } from "@/packages/client/src/agent/client/http-task-queue";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { World } from "@/lib/demo/sim";
import { createUser } from "@/lib/server/users/create-user";
import { prismaTaskQueue } from "@/lib/server/worker/queue";
import { Worker } from "@/packages/client/src/agent/worker";
import { routeFetch } from "../support/api-router";
import { call, makeToken, useTestDatabase, type CallResult } from "./api-test-kit";
import { seedSupportToolTable } from "@/lib/demo/seed/support-tool-table";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const getPrisma = useTestDatabase("revokes");
const users: Record<string, string> = {};
const emails: Record<string, string> = {};
const TOOLS = ["search_orders", "reship_order", "create_ticket_draft", "create_email_draft", "charge_card", "authorize_payment", "capture_payment", "send_email"];

beforeAll(async () => {
  const prisma = await getPrisma();
  await seedSupportToolTable(prisma, createSupportToolRegistry(new World()), "system:test");
  for (const [key, role] of [["rita", "reviewer"], ["rob", "reviewer"], ["sam", "support"], ["ada", "admin"]] as const) {
    const user = await createUser(prisma, { email: `${key}-revokes@example.com`, name: key, role, password: "correct horse battery", by: { type: "system", id: "test" } });
    users[key] = user.id;
    emails[key] = user.email;
  }
});

/** Calls a dashboard route as `who` (same origin, as the browser). */
function as(who: string, handler: Parameters<typeof call>[0], path: string, options: { body?: unknown; params?: Record<string, string> } = {}): Promise<CallResult> {
  return runWithSessionReader(async () => users[who] ?? null, () => call(handler, path, { ...options, headers: options.body === undefined ? {} : { origin: "http://localhost" } }));
}
const pullStep = (who: string, stepId: string, reason: string) => as(who, stepRevokeRoute.POST, `/api/dashboard/steps/${stepId}/revoke`, { body: { reason }, params: { stepId } });
const pullRun = (who: string, runId: string, reason: string) => as(who, runRevokeRoute.POST, `/api/dashboard/runs/${runId}/revoke`, { body: { reason }, params: { runId } });

/** An agent over the API and a worker on the database, both with the support connectors on one world. */
async function setup() {
  const world = new World({ clock: new ManualClock() });
  const registry = createSupportToolRegistry(world);
  const prisma = await getPrisma();
  const token = await makeToken(TOOLS);
  // Each outcome in its own request, recorded before the call returns: these look at the log right
  // after a call (tests/api/pipelined-calls.test.ts covers the client's default, outcome with the next call).
  const store = new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: routeFetch, outcomeLingerMs: 0 });
  const engine = new SagaEngine({ store, registry, clock: world.clock, recheckAfterMs: 10, backoffMs: 1 });
  const workerEngine = new ReviewerEngine({ store: sharedSagaStore(prisma), registry, clock: world.clock, recheckAfterMs: 10, backoffMs: 1 });
  const worker = new Worker({ queue: prismaTaskQueue(prisma), engine: workerEngine, workerId: `w-${Date.now()}`, tools: registry.list().map((t) => t.name) });
  return { world, engine, worker, prisma, token };
}

const CHARGE = { customerId: "cus_bo", amount: 1500, currency: "eur", reason: "reship fee", receipt: false };

describe("pulling back one step", () => {
  it("a reviewer pulls back a confirmed charge within its window: one revoke, one refund, read back (also when two pull at once)", async () => {
    const { world, engine, worker, prisma } = await setup();
    const run = await engine.startRun({ title: "charge then regret", agent: "x" });
    expect(await run.call("charge_card", CHARGE)).toMatchObject({ status: "ok" });
    await run.complete();
    const step = await prisma.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } });

    const options = await as("rita", optionsRoute.GET, `/api/dashboard/runs/${run.runId}/revokes`, { params: { runId: run.runId } });
    expect(options.json.steps).toEqual([expect.objectContaining({ stepId: step.id, state: "pullable", secondsLeft: expect.any(Number), whatHappens: expect.stringContaining("refund_charge in payments") })]);
    expect(options.json.steps[0].secondsLeft).toBeGreaterThan(23 * 3600);

    const [a, b] = await Promise.all([pullStep("rita", step.id, "wrong customer"), pullStep("rob", step.id, "duplicate")]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.json.created, b.json.created].sort()).toEqual([false, true]);
    expect(a.json.revoke.id).toBe(b.json.revoke.id);
    expect(await prisma.revoke.count({ where: { stepId: step.id } })).toBe(1);
    expect(await prisma.workerTask.count({ where: { stepId: step.id, kind: "COMPENSATE" } })).toBe(1);
    const revoke = await prisma.revoke.findFirstOrThrow({ where: { stepId: step.id } });
    expect(revoke).toMatchObject({ kind: "COMPENSATE", requestedBy: expect.stringMatching(/^(rita|rob)-revokes@example.com$/), role: "reviewer", tool: "charge_card" });
    expect(a.json.revoke.outcome).toBe("requested");

    await worker.runOnce();
    expect(world.ledger.count({ op: "payments.refund", outcome: "effect" })).toBe(1);
    expect(await prisma.step.findUniqueOrThrow({ where: { id: step.id } })).toMatchObject({ status: "COMPENSATED", compensationState: "CONFIRMED" });

    // Pulled once more: the record says who pulled it first; nothing is refunded twice.
    const again = await pullStep("rob", step.id, "again");
    expect(again.json).toMatchObject({ created: false, revoke: { outcome: "confirmed", requestedBy: revoke.requestedBy }, message: expect.stringContaining("nothing was pulled twice") });
    await worker.runOnce();
    expect(world.ledger.count({ op: "payments.refund", outcome: "effect" })).toBe(1);
    const records = await as("sam", revokesRoute.GET, `/api/dashboard/revokes?tool=charge_card&outcome=confirmed`);
    expect(records.json.revokes.map((r: { id: string }) => r.id)).toContain(revoke.id);
    const audit = await prisma.auditEvent.findMany({ where: { runId: run.runId, type: "revoke.pulled" } });
    expect(audit).toHaveLength(1);
    expect(audit[0]?.actor).toBe(`user:${revoke.requestedBy}`);
  });

  it("past the window the pull opens a REVOKE_OUT_OF_WINDOW escalation with who asked and why, and nothing is refunded", async () => {
    const { world, engine, worker, prisma } = await setup();
    const run = await engine.startRun({ title: "late regret", agent: "x" });
    await run.call("charge_card", CHARGE);
    const step = await prisma.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } });
    // The charge happened two days ago; its window is one day.
    await prisma.step.update({ where: { id: step.id }, data: { createdAt: new Date(Date.now() - 48 * 3600_000) } });
    const options = await as("rita", optionsRoute.GET, `/api/dashboard/runs/${run.runId}/revokes`, { params: { runId: run.runId } });
    expect(options.json.steps[0]).toMatchObject({ state: "out_of_window", secondsLeft: 0, whatHappens: expect.stringContaining("opens an escalation for payments-team") });

    const res = await pullStep("rita", step.id, "customer complained on day 2");
    expect(res.json).toMatchObject({ created: true, revoke: { kind: "OUT_OF_WINDOW", outcome: "out_of_window" } });
    const escalation = await prisma.escalation.findFirstOrThrow({ where: { stepId: step.id, kind: "REVOKE_OUT_OF_WINDOW" } });
    expect(escalation).toMatchObject({ status: "OPEN", owner: "payments-team", detail: expect.objectContaining({ askedBy: emails.rita, reason: "customer complained on day 2" }) });
    await worker.runOnce();
    expect(world.ledger.count({ op: "payments.refund" })).toBe(0);
  });

  it("an irreversible email is never taken back silently: the trigger drafts its correction for support", async () => {
    const { world, engine, prisma } = await setup();
    const run = await engine.startRun({ title: "email regret", agent: "x" });
    const mail = { to: "bo@example.com", subject: "Your refund", body: "We refunded you twice." };
    const pivot = await run.requestPivot({ summary: "Tell the customer.", plan: [{ tool: "send_email", args: mail }] });
    await new ReviewerEngine({ store: sharedSagaStore(prisma), registry: createSupportToolRegistry(world) }).decidePivot(pivot.id, { approve: true, actor: { type: "user", id: "rita@example.com" }, planHash: pivot.planHash });
    await run.awaitPivot(pivot.id, { timeoutMs: 2000, pollMs: 10 });
    expect(await run.call("send_email", mail)).toMatchObject({ status: "ok" });
    const step = await prisma.step.findFirstOrThrow({ where: { runId: run.runId, tool: "send_email" } });

    const res = await pullStep("rita", step.id, "the refund was single, not double");
    expect(res.json).toMatchObject({ created: true, revoke: { kind: "CORRECTION", outcome: "correction_drafted" } });
    const correction = await prisma.correction.findUniqueOrThrow({ where: { stepId: step.id } });
    expect(correction).toMatchObject({ status: "DRAFT", draftedBy: `revoke:${res.json.revoke.id}`, subject: "Correction: Your refund" });
    expect(world.ledger.count({ op: "email.send", outcome: "effect" })).toBe(1); // only the original
  });

  it("only roles the tool table names may pull: support gets 403, and an admin-only row refuses a reviewer", async () => {
    const { engine, prisma } = await setup();
    const run = await engine.startRun({ title: "who may pull", agent: "x" });
    await run.call("charge_card", CHARGE);
    const step = await prisma.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } });
    const support = await pullStep("sam", step.id, "support tries");
    expect(support.status).toBe(403);
    expect(support.json.error.message).toContain("Your role (support) cannot pull revoke triggers");
    const options = await as("sam", optionsRoute.GET, `/api/dashboard/runs/${run.runId}/revokes`, { params: { runId: run.runId } });
    expect(options.json).toMatchObject({ canPull: false, steps: [expect.objectContaining({ state: "not_permitted" })] });

    await prisma.toolPolicy.update({ where: { name: "charge_card" }, data: { revokeRoles: ["admin"], policyVersion: { increment: 1 } } });
    try {
      const reviewer = await pullStep("rita", step.id, "reviewer tries");
      expect(reviewer.status).toBe(403);
      expect(reviewer.json.error.message).toContain("lets only admin pull back charge_card");
      const empty = await pullStep("ada", step.id, "  ");
      expect(empty.status).toBe(400);
      expect(empty.json.error.details[0].path).toBe("reason");
      expect(await prisma.revoke.count({ where: { stepId: step.id } })).toBe(0);
    } finally {
      await prisma.toolPolicy.update({ where: { name: "charge_card" }, data: { revokeRoles: ["admin", "reviewer"], policyVersion: { increment: 1 } } });
    }
  });

  it("a whole-run pull checks every step it would touch, UNKNOWN and INTENDED included: a reviewer is refused 403 naming the admin-only step, and nothing is queued", async () => {
    const { engine, prisma } = await setup();
    for (const status of ["UNKNOWN", "INTENDED"] as const) {
      const run = await engine.startRun({ title: `admin-only step left ${status}`, agent: "x" });
      await run.call("charge_card", CHARGE);
      const step = await prisma.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } });
      // As after a timeout: the effect may or may not exist, and an unwind would reconcile and refund it.
      await prisma.step.update({ where: { id: step.id }, data: { status } });
      await prisma.toolPolicy.update({ where: { name: "charge_card" }, data: { revokeRoles: ["admin"], policyVersion: { increment: 1 } } });
      try {
        const reviewer = await pullRun("rita", run.runId, "reviewer pulls the whole run");
        expect(reviewer.status).toBe(403);
        expect(reviewer.json.error.message).toContain(`charge_card, ${status}, ${step.id}`);
        expect(await prisma.revoke.count({ where: { runId: run.runId } })).toBe(0);
        expect(await prisma.workerTask.count({ where: { runId: run.runId, kind: "UNWIND" } })).toBe(0);
        expect((await prisma.run.findUniqueOrThrow({ where: { id: run.runId } })).status).not.toBe("UNWINDING");
      } finally {
        await prisma.toolPolicy.update({ where: { name: "charge_card" }, data: { revokeRoles: ["admin", "reviewer"], policyVersion: { increment: 1 } } });
      }
    }
  });
});

describe("a worker over the API", () => {
  it("refunds a pulled-back charge whose customer saw a receipt, and the correction says which revoke drafted it", async () => {
    const { world, engine, prisma } = await setup();
    const run = await engine.startRun({ title: "receipt charge", agent: "x" });
    await run.call("charge_card", { ...CHARGE, receipt: true });
    const step = await prisma.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } });
    const pulled = await pullStep("rita", step.id, "the customer was charged twice");
    const { secret } = await createAgentToken(prisma, { name: `http-worker-${Date.now()}`, tools: ["charge_card"], role: "worker", createdBy: "test" });
    const transport = { baseUrl: "http://sagaboard.test", token: secret, fetch: routeFetch };
    // Each outcome in its own request, recorded before the call returns: these look at the log right
    // after a call (tests/api/pipelined-calls.test.ts covers the client's default, outcome with the next call).
    const httpEngine = new SagaEngine({ store: new HttpSagaStore({ ...transport, outcomeLingerMs: 0 }), registry: createSupportToolRegistry(world), clock: world.clock, recheckAfterMs: 10, backoffMs: 1 });
    const worker = new Worker({ queue: new HttpTaskQueue(transport), engine: httpEngine, workerId: "http-w", tools: ["charge_card"] });
    expect((await worker.runOnce()).map((o) => o.outcome)).toEqual(["done"]);
    expect(world.ledger.count({ op: "payments.refund", outcome: "effect" })).toBe(1);
    expect(await prisma.correction.findUniqueOrThrow({ where: { stepId: step.id } })).toMatchObject({ status: "DRAFT", draftedBy: `revoke:${pulled.json.revoke.id}` });
  });
});

describe("pulling back a whole run", () => {
  it("a run in progress stops the agent, and the worker unwinds it last step first; steps past their window are escalated instead", async () => {
    const { world, engine, worker, prisma } = await setup();
    const run = await engine.startRun({ title: "pull the run", agent: "x" });
    await run.call("create_ticket_draft", { summary: "reship", orderId: "2001" });
    await run.call("create_email_draft", { to: "bo@example.com", subject: "Reship", body: "We reship." });
    await run.call("charge_card", CHARGE);
    const [ticket, draft, charge] = await prisma.step.findMany({ where: { runId: run.runId }, orderBy: { stepIdx: "asc" } });
    // The ticket draft's window closed long ago.
    await prisma.step.update({ where: { id: ticket!.id }, data: { createdAt: new Date(Date.now() - 72 * 3600_000) } });

    const [first, second] = await Promise.all([pullRun("rita", run.runId, "the agent misread the order"), pullRun("rob", run.runId, "same")]);
    expect([first.json.created, second.json.created].sort()).toEqual([false, true]);
    const pulled = first.json.created ? first.json : second.json;
    expect(pulled.steps.map((s: { tool: string; kind: string }) => [s.tool, s.kind]).sort()).toEqual([
      ["charge_card", "COMPENSATE"],
      ["create_email_draft", "COMPENSATE"],
      ["create_ticket_draft", "OUT_OF_WINDOW"],
    ]);
    expect((await prisma.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("UNWINDING");
    expect(await prisma.workerTask.count({ where: { runId: run.runId, kind: "UNWIND" } })).toBe(1);

    // The agent's next call is told the run is being pulled back; nothing new happens in the world.
    const effectsBefore = world.ledger.count({ outcome: "effect" });
    await expect(run.call("reship_order", { orderId: "2001", reason: "x" })).rejects.toMatchObject({ code: "RUN_CLOSED", message: expect.stringContaining("being pulled back") });
    expect(world.ledger.count({ outcome: "effect" })).toBe(effectsBefore);

    await worker.runOnce();
    const after = await prisma.step.findMany({ where: { runId: run.runId }, orderBy: { stepIdx: "asc" } });
    expect(after.map((s) => [s.tool, s.status])).toEqual([
      ["create_ticket_draft", "CONFIRMED"],
      ["create_email_draft", "COMPENSATED"],
      ["charge_card", "COMPENSATED"],
    ]);
    expect(world.ledger.count({ op: "payments.refund", outcome: "effect" })).toBe(1);
    expect(world.ledger.count({ op: "email.deleteDraft", ref: draft!.externalRef ?? "", outcome: "effect" })).toBe(1);
    expect(world.ledger.count({ op: "ticketing.deleteDraft", outcome: "effect" })).toBe(0);
    // Last step first: the refund's request is recorded before the draft's deletion.
    const order = (await prisma.auditEvent.findMany({ where: { runId: run.runId, type: "compensation.requested" }, orderBy: { seq: "asc" } })).map((e) => e.stepId);
    expect(order).toEqual([charge!.id, draft!.id]);
    expect(await prisma.escalation.findFirstOrThrow({ where: { stepId: ticket!.id } })).toMatchObject({ kind: "REVOKE_OUT_OF_WINDOW", status: "OPEN" });
    expect((await prisma.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("NEEDS_ATTENTION");
    const options = await as("rita", optionsRoute.GET, `/api/dashboard/runs/${run.runId}/revokes`, { params: { runId: run.runId } });
    expect(options.json.runRevoke).toMatchObject({ kind: "RUN", outcome: "done" });
  });
});
