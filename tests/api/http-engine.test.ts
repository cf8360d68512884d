/**
 * The engine in an agent process over the HTTP client, against the real route handlers and the
 * simulated systems: the seed-003 incident with the same ledger assertions as the in-process suite,
 * the pivot flow with a reviewer deciding on the server, and the server's own policy checks.
 */
import { describe, expect, it, vi } from "vitest";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { PrismaSagaStore, sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { CrashPoints } from "@/packages/client/src/saga/crash-points";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { stepKey } from "@/packages/client/src/saga/keys";
import { World } from "@/lib/demo/sim";
import { playSeed003 } from "../support/support-agent";
import { routeFetch } from "../support/api-router";
import { call, makeToken, useTestDatabase } from "./api-test-kit";
import * as callsRoute from "@/app/api/v1/runs/[runId]/calls/route";
import * as outcomeRoute from "@/app/api/v1/steps/[stepId]/outcome/route";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const getPrisma = useTestDatabase("http-engine");
const ALL_TOOLS = ["search_orders", "create_ticket", "create_ticket_draft", "create_email_draft", "charge_card", "authorize_payment", "capture_payment", "reship_order", "update_crm_record", "send_email"];
const reviewer = { type: "user" as const, id: "rita@example.com" };

async function setup(tools = ALL_TOOLS) {
  const clock = new ManualClock();
  const world = new World({ clock, searchLagMs: 1500 });
  const registry = createSupportToolRegistry(world);
  const prisma = await getPrisma();
  await syncToolPolicies(prisma, registry);
  const token = await makeToken(tools);
  const crashPoints = new CrashPoints();
  const store = new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: routeFetch });
  const engine = () => new SagaEngine({ store, registry, clock, crashPoints, recheckAfterMs: 2000, backoffMs: 10 });
  // The dashboard's side: a reviewer decides with the server's own store.
  const server = new ReviewerEngine({ store: new PrismaSagaStore(prisma), registry, clock });
  return { world, engine, server, token, prisma };
}

/** Begins a call through the API with `secret`. */
function beginVia(secret: string, runId: string, body: unknown, headers: Record<string, string> = {}) {
  return call(callsRoute.POST, `/api/v1/runs/${runId}/calls`, { secret, body, params: { runId }, headers });
}

/** Reports an outcome through the API with `secret`. */
function outcomeVia(secret: string, stepId: string, body: unknown) {
  return call(outcomeRoute.POST, `/api/v1/steps/${stepId}/outcome`, { secret, body, params: { stepId } });
}

/** Starts a run through the API with `secret`; its id. */
async function startRunVia(secret: string, title: string): Promise<string> {
  return (await call((await import("@/app/api/v1/runs/route")).POST, "/api/v1/runs", { secret, body: { title } })).json.run.id as string;
}

/** The compensator the tool table names for create_ticket. */
async function ticketCompensator(prisma: Awaited<ReturnType<typeof getPrisma>>): Promise<string | null> {
  return (await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "create_ticket" } })).compensator;
}

describe("the engine over HTTP", () => {
  it("replays the seed-003 incident: one ticket closed once, one charge refunded once, no apology", async () => {
    const { world, engine, prisma } = await setup();
    const { runId, report } = await playSeed003(world, engine, "ignored: the token names the agent");
    expect(report).toMatchObject({ status: "UNWOUND", compensated: [1, 0], corrections: [] });

    expect(world.ledger.count({ op: "ticketing.create" })).toBe(1);
    expect(world.ledger.count({ op: "ticketing.close" })).toBe(1);
    expect(world.ledger.operations({ op: "ticketing.close", outcome: "not_found" })).toHaveLength(0);
    expect(world.ledger.count({ op: "payments.charge" })).toBe(1);
    expect(world.ledger.count({ op: "payments.refund" })).toBe(1);
    expect(world.ledger.count({ op: "payments.receipt" })).toBe(0);
    const rows = await prisma.step.findMany({ where: { runId }, orderBy: { stepIdx: "asc" } });
    expect(rows.map((r) => [r.tool, r.status])).toEqual([
      ["create_ticket", "COMPENSATED"],
      ["charge_card", "COMPENSATED"],
      ["reship_order", "FAILED"],
    ]);
    expect((await prisma.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe("UNWOUND");
  });

  it("holds irreversible calls until a reviewer approves the pivot on the server, then runs the plan only", async () => {
    const { world, engine, server } = await setup();
    const run = await engine().startRun({ title: "Apology", agent: "x" });
    const mail = { to: "ada@example.com", subject: "Sorry", body: "Your order is on its way." };
    const held = await run.call("send_email", mail);
    expect(held).toMatchObject({ status: "approval_required", reason: "IRREVERSIBLE" });
    expect(world.ledger.count({ op: "email.send" })).toBe(0);

    const pivot = await run.requestPivot({ summary: "Send the apology.", plan: [{ tool: "send_email", args: mail }] });
    const waiting = run.awaitPivot(pivot.id, { timeoutMs: 5000, pollMs: 20 });
    await server.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    expect((await waiting).status).toBe("APPROVED");
    expect(await run.call("send_email", { ...mail, body: "changed" })).toMatchObject({ status: "approval_required", reason: "NOT_IN_PLAN" });
    expect(await run.call("send_email", mail)).toMatchObject({ status: "ok" });
    expect(world.ledger.count({ op: "email.send" })).toBe(1);
    expect(await server.irreversibleBeforePivot(run.runId)).toBe(0);
  });

  it("the server decides the class, key and hash from the tool table, whatever the client knows", async () => {
    const { token, prisma } = await setup(["send_email", "create_ticket"]);
    const runId = await startRunVia(token.secret, "rogue");
    const args = { to: "ada@example.com", subject: "Hi", body: "x" };
    const begin = (body: Record<string, unknown>) => beginVia(token.secret, runId, { tool: "send_email", args, cursor: 0, ...body });

    // The table's class is what is gated and recorded: nothing the client sends can make it less.
    const held = await begin({});
    expect(held.status).toBe(200);
    expect(held.json).toMatchObject({ answer: "held", reason: "IRREVERSIBLE", cursor: 0 });
    expect(held.json.escalationId).toMatch(/^esc_/);
    expect(await prisma.step.count({ where: { runId } })).toBe(0);
    expect((await begin({})).json).toMatchObject({ answer: "held", escalationId: held.json.escalationId });

    // Fields the server derives are not the client's to send: refused by name, nothing written.
    for (const field of ["stepKey", "argsHash", "toolClass", "phase", "approvalId", "planItemIdx", "stepIdx"]) {
      const refused = await begin({ [field]: field === "stepIdx" ? 0 : "x" });
      expect(refused.status, field).toBe(400);
      expect(JSON.stringify(refused.json.error.details), field).toContain(field);
    }
    expect((await beginVia(token.secret, runId, { tool: "charge_card", args: {}, cursor: 0 })).status).toBe(403); // outside the token's scope
    expect((await beginVia(token.secret, runId, { tool: "send_email", args: {}, cursor: 7 })).json.error).toMatchObject({ code: "INVALID_ARGS" }); // a cursor past the log
    expect(await prisma.step.count({ where: { runId } })).toBe(0);
  });

  it("the one-insert fast path sees an edit of the tool table and never records into another agent's run", async () => {
    const { token, prisma } = await setup(["create_ticket"]);
    const other = await makeToken(["create_ticket"], `other-${Date.now()}`);
    const newRun = (secret: string) => startRunVia(secret, "fast path");
    const compensator = await ticketCompensator(prisma);
    const ticket = (cursor: number, tool = compensator) => ({ tool: "create_ticket", args: { summary: `ticket ${cursor}`, orderId: "3107" }, cursor, compensation: { tool, args: {} } });
    const settle = async (stepId: string) => {
      await prisma.step.update({ where: { id: stepId }, data: { status: "CONFIRMED" } });
    };

    const runId = await newRun(token.secret);
    const first = await beginVia(token.secret, runId, ticket(0));
    expect(first.json).toMatchObject({ answer: "call", cursor: 0, step: { stepKey: stepKey(runId, 0, "create_ticket"), status: "INTENDED" } });
    expect(first.json.send).toMatchObject({ idempotencyKey: stepKey(runId, 0, "create_ticket") });
    await settle(first.json.step.id as string);

    // Another agent's token, its policy cache warm, cannot record into this run: "not found", nothing written.
    const otherRun = await newRun(other.secret);
    expect((await beginVia(other.secret, otherRun, ticket(0))).json.answer).toBe("call");
    const intruder = await beginVia(other.secret, runId, ticket(1));
    expect(intruder.status).toBe(404);

    // An admin changes what answers the tool: a proposal naming the old compensator is refused, not
    // staged on the remembered row.
    await prisma.toolPolicy.update({ where: { name: "create_ticket" }, data: { compensator: "archive_ticket", policyVersion: { increment: 1 } } });
    const stale = await beginVia(token.secret, runId, ticket(1));
    expect(stale.status).toBe(400);
    expect(stale.json.error.details[0].path).toBe("compensation.tool");
    await prisma.toolPolicy.update({ where: { name: "create_ticket" }, data: { compensator, policyVersion: { increment: 1 } } });

    // An admin makes the tool irreversible: the next call is held, not staged on the remembered row.
    await prisma.toolPolicy.update({ where: { name: "create_ticket" }, data: { toolClass: "IRREVERSIBLE", policyVersion: { increment: 1 } } });
    const held = await beginVia(token.secret, runId, ticket(1));
    expect(held.json).toMatchObject({ answer: "held", reason: "IRREVERSIBLE" });
    expect(await prisma.step.count({ where: { runId } })).toBe(1);
    await prisma.toolPolicy.update({ where: { name: "create_ticket" }, data: { toolClass: "COMPENSATABLE", policyVersion: { increment: 1 } } });

    // Replay: the recorded step at cursor 0 answers with its result, whatever the new wording.
    expect((await beginVia(token.secret, runId, { ...ticket(0), args: { summary: "reworded", orderId: "3107" } })).json).toMatchObject({ answer: "replay", cursor: 1 });
  });

  it("an outcome is one fenced update; another agent, a token without the tool, a step not in flight and a repeat change nothing", async () => {
    const { token, prisma } = await setup(["create_ticket"]);
    const other = await makeToken(["create_ticket"], `other-${Date.now()}`);
    const unscoped = await createAgentToken(prisma, { name: `worker-${Date.now()}`, tools: ["charge_card"], createdBy: "admin@example.com", role: "worker" });
    const runId = await startRunVia(token.secret, "outcome");
    const created = await beginVia(token.secret, runId, { tool: "create_ticket", args: { summary: "ticket", orderId: "3107" }, cursor: 0, compensation: { tool: await ticketCompensator(prisma), args: {} } });
    expect(created.json.answer).toBe("call");
    const stepId = created.json.step.id as string;
    const report = (secret: string, body: unknown) => outcomeVia(secret, stepId, body);
    const confirmed = { outcome: "confirmed", externalRef: "T-1", result: { id: "T-1" }, attempts: 1 };
    const events = () => prisma.auditEvent.count({ where: { runId } });
    const before = await events();

    expect((await report(other.secret, confirmed)).status).toBe(404); // another agent's step: "not found"
    expect((await report(unscoped.secret, confirmed)).status).toBe(403); // a worker token (any run) without the tool
    expect((await report(token.secret, { ...confirmed, outcome: "compensated" })).status).toBe(400); // not an outcome
    expect(await prisma.step.findUniqueOrThrow({ where: { id: stepId } })).toMatchObject({ status: "INTENDED", externalRef: null });
    expect(await events()).toBe(before);

    const reads = vi.spyOn(sharedSagaStore(prisma), "getStep");
    const done = await report(token.secret, confirmed);
    expect(reads).not.toHaveBeenCalled(); // the outcome needed no read of the step or its run
    reads.mockRestore();
    expect(done.status).toBe(200);
    expect(done.json.step).toMatchObject({ id: stepId, status: "CONFIRMED", externalRef: "T-1", result: { id: "T-1" } });
    expect(await events()).toBe(before + 1);
    const repeat = await report(token.secret, confirmed); // a repeat (its answer was lost): the row, nothing written
    expect(repeat.status).toBe(200);
    expect(repeat.json.step).toMatchObject({ status: "CONFIRMED" });
    const notInFlight = await report(token.secret, { outcome: "unknown", message: "late timeout", attempts: 1 });
    expect(notInFlight.status).toBe(409);
    expect(notInFlight.json.error).toMatchObject({ code: "STEP_NOT_IN_FLIGHT" });
    expect(await events()).toBe(before + 1);
  });

  it("a run with an unsettled step cannot be completed; reconcile settles it and then it can", async () => {
    const { token, prisma } = await setup(["create_ticket"]);
    const runId = await startRunVia(token.secret, "complete");
    const begun = await beginVia(token.secret, runId, { tool: "create_ticket", args: { summary: "ticket", orderId: "3107" }, cursor: 0, compensation: { tool: await ticketCompensator(prisma), args: {} } });
    const stepId = begun.json.step.id as string;
    const { POST: complete } = await import("@/app/api/v1/runs/[runId]/complete/route");
    const refused = await call(complete, `/api/v1/runs/${runId}/complete`, { secret: token.secret, params: { runId } });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: "RUN_NOT_SETTLED" });
    expect((await prisma.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe("RUNNING");

    // A cursor past the unsettled step is refused by name, not answered with a new step.
    const skipping = await beginVia(token.secret, runId, { tool: "create_ticket", args: { summary: "next", orderId: "3107" }, cursor: 1 });
    expect(skipping.status).toBe(409);
    expect(skipping.json.error).toMatchObject({ code: "STEP_UNRESOLVED", details: [{ path: "cursor" }] });
    // The next begin at the same cursor says "reconcile" (the step is still INTENDED).
    expect((await beginVia(token.secret, runId, { tool: "create_ticket", args: { summary: "ticket", orderId: "3107" }, cursor: 0 })).json).toMatchObject({ answer: "reconcile", lookup: { stepKey: stepKey(runId, 0, "create_ticket") } });
    const { POST: reconcile } = await import("@/app/api/v1/steps/[stepId]/reconcile/route");
    const settled = await call(reconcile, `/api/v1/steps/${stepId}/reconcile`, { secret: token.secret, body: { found: false, lookups: 2 }, params: { stepId } });
    expect(settled.json.step).toMatchObject({ status: "NOT_EXECUTED" });
    const done = await call(complete, `/api/v1/runs/${runId}/complete`, { secret: token.secret, params: { runId } });
    expect(done.json.run).toMatchObject({ status: "COMPLETED" });
  });

  it("50 concurrent identical begins make one row; only the one told to call makes the effect", async () => {
    const { world, token, prisma } = await setup(["create_ticket"]);
    const runId = await startRunVia(token.secret, "burst");
    const key = stepKey(runId, 0, "create_ticket");
    const args = { summary: "Refund for order 1182", orderId: "1182" };
    const body = { tool: "create_ticket", args, cursor: 0, compensation: { tool: "close_ticket", args: { reason: "rolled back" } }, audience: ["support_team"] };
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => beginVia(token.secret, runId, body, i % 2 === 0 ? { "idempotency-key": "burst-1" } : {})));
    const kinds = answers.map((a) => (a.json.answer as string | undefined) ?? `${a.status} ${a.json.error?.code}`);
    expect(kinds.filter((k) => k === "call")).toHaveLength(1);
    expect(kinds.filter((k) => !["call", "reconcile", "409 IDEMPOTENCY_IN_FLIGHT"].includes(k))).toEqual([]); // the keyed repeats of one request wait for its answer
    expect(await prisma.step.count({ where: { runId } })).toBe(1);
    const registry = createSupportToolRegistry(world);
    for (const answer of answers) {
      if (answer.json.answer === "call") await registry.tool("create_ticket").call(args, { stepKey: key, runId, stepIdx: 0 });
    }
    expect(world.ledger.count({ op: "ticketing.create" })).toBe(1);
  });
});

describe("a revoked token", () => {
  it("is refused on its very next request while the run's rows stay intact", async () => {
    const { engine, token, prisma } = await setup();
    const run = await engine().startRun({ title: "Before revocation", agent: "x" });
    await run.call("create_ticket", { summary: "Order 1182 refund", orderId: "1182" });
    const { revokeAgentToken } = await import("@/lib/server/tokens/revoke-agent-token");
    await revokeAgentToken(prisma, { name: token.name, revokedBy: "admin@example.com" });

    await expect(run.call("create_ticket", { summary: "again", orderId: "1182" })).rejects.toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    await expect(run.call("create_ticket", { summary: "and again", orderId: "1182" })).rejects.toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    // The confirmation was recorded before call() returned, ahead of the revocation; nothing after it was.
    const rows = await prisma.step.findMany({ where: { runId: run.runId } });
    expect(rows.map((r) => [r.tool, r.status])).toEqual([["create_ticket", "CONFIRMED"]]);
    expect(await prisma.auditEvent.count({ where: { runId: run.runId } })).toBeGreaterThanOrEqual(2);
  });

  it("is refused between an intent and its outcome: the outcome is not recorded (the write checks the token itself)", async () => {
    const { token, prisma } = await setup(["create_ticket"]);
    const runId = await startRunVia(token.secret, "revoked midway");
    const compensation = { tool: await ticketCompensator(prisma), args: {} };
    const begin = (cursor: number) => beginVia(token.secret, runId, { tool: "create_ticket", args: { summary: "ticket", orderId: "3107" }, cursor, compensation });
    const first = await begin(0); // reads the token; the next requests need not
    expect(first.json.answer).toBe("call");
    const stepId = first.json.step.id as string;
    const { revokeAgentToken } = await import("@/lib/server/tokens/revoke-agent-token");
    await revokeAgentToken(prisma, { name: token.name, revokedBy: "admin@example.com" });
    const events = await prisma.auditEvent.count({ where: { runId } });

    const refused = await outcomeVia(token.secret, stepId, { outcome: "confirmed", externalRef: "T-1", result: null, attempts: 1 });
    expect(refused.status).toBe(401);
    expect(refused.json.error.message).toMatch(/revoked/);
    expect((await begin(1)).status).toBe(401);
    expect(await prisma.step.findMany({ where: { runId }, select: { status: true } })).toEqual([{ status: "INTENDED" }]);
    expect(await prisma.auditEvent.count({ where: { runId } })).toBe(events);
  });
});

describe("one tool table for both deciding sides", () => {
  /** The same call in process (the engine on the server's own store) and over HTTP: what each answered, and the intents it left. */
  async function callBothWays(setupResult: Awaited<ReturnType<typeof setup>>, label: string) {
    const { engine, prisma, world } = setupResult;
    const local = new ReviewerEngine({ store: new PrismaSagaStore(prisma), registry: createSupportToolRegistry(world), clock: new ManualClock() });
    const answers: Record<string, unknown> = {};
    for (const [side, e] of [["in process", local], ["over HTTP", engine()]] as const) {
      const run = await e.startRun({ title: `${label} ${side}`, agent: "table-agent" });
      try {
        const outcome = await run.call("create_ticket", { summary: `${label} ${side}`, orderId: "4410" });
        answers[side] = outcome.status === "approval_required" ? { held: outcome.reason } : { ran: outcome.status };
      } catch (e) {
        answers[side] = { refused: (e as { code?: string }).code };
      }
      answers[`${side} intents`] = await prisma.step.count({ where: { runId: run.runId } });
    }
    return answers;
  }

  it("an admin's edit governs a call whichever side decides it: held, refused or run alike in process and over HTTP", async () => {
    const s = await setup(["create_ticket"]);
    const edit = (data: Record<string, unknown>) => s.prisma.toolPolicy.update({ where: { name: "create_ticket" }, data: { ...data, policyVersion: { increment: 1 } } });
    const tickets = () => s.world.ledger.effects({ op: "ticketing.create" }).length;

    expect(await callBothWays(s, "as registered")).toEqual({ "in process": { ran: "ok" }, "in process intents": 1, "over HTTP": { ran: "ok" }, "over HTTP intents": 1 });

    await edit({ alwaysRequireApproval: true });
    expect(await callBothWays(s, "always approve")).toEqual({ "in process": { held: "ALWAYS_APPROVE" }, "in process intents": 0, "over HTTP": { held: "ALWAYS_APPROVE" }, "over HTTP intents": 0 });
    await edit({ alwaysRequireApproval: false, toolClass: "IRREVERSIBLE" });
    expect(await callBothWays(s, "irreversible")).toEqual({ "in process": { held: "IRREVERSIBLE" }, "in process intents": 0, "over HTTP": { held: "IRREVERSIBLE" }, "over HTTP intents": 0 });
    await edit({ toolClass: "COMPENSATABLE", status: "DISABLED", disabledBy: "ada@example.com" });
    expect(await callBothWays(s, "disabled")).toEqual({ "in process": { refused: "TOOL_DISABLED" }, "in process intents": 0, "over HTTP": { refused: "TOOL_DISABLED" }, "over HTTP intents": 0 });
    await edit({ status: "UNREVIEWED", disabledBy: null });
    expect(await callBothWays(s, "unreviewed")).toEqual({ "in process": { held: "UNREVIEWED" }, "in process intents": 0, "over HTTP": { held: "UNREVIEWED" }, "over HTTP intents": 0 });

    // Only the two calls made while the row allowed them reached the ticket system.
    expect(tickets()).toBe(2);
  });
});
