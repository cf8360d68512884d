/**
 * The engine in an agent process over the HTTP client, against the real route handlers and the
 * simulated systems: the seed-003 incident with the same ledger assertions as the in-process suite,
 * the pivot flow with a reviewer deciding on the server, and the server's own policy checks.
 */
import { describe, expect, it, vi } from "vitest";
import { HttpSagaStore } from "@/lib/client/http-store";
import { createSupportToolRegistry } from "@/lib/connectors/sim-tools";
import { createAgentToken } from "@/lib/tokens/create-agent-token";
import { PrismaSagaStore, sharedSagaStore } from "@/lib/db/prisma-saga-store";
import { syncToolPolicies } from "@/lib/harness/policy";
import { ManualClock } from "@/lib/saga/clock";
import { CrashPoints, SimulatedCrash } from "@/lib/saga/crash-points";
import { SagaEngine } from "@/lib/saga/engine";
import { argsHash, stepKey } from "@/lib/saga/keys";
import { World } from "@/lib/sim";
import { refundAndReship } from "../support/support-agent";
import { routeFetch } from "../support/api-router";
import { call, makeToken, useTestDatabase } from "./api-test-kit";
import * as stepsRoute from "@/app/api/v1/runs/[runId]/steps/route";

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
  const server = new SagaEngine({ store: new PrismaSagaStore(prisma), registry, clock });
  return { world, engine, server, token, prisma };
}

/** An intent as the API takes it, its keys derived from the run and step as a client derives them. */
function wireIntent(runId: string, stepIdx: number, tool: string, args: Record<string, unknown>, more: Record<string, unknown> = {}) {
  return {
    stepIdx, tool, toolClass: "COMPENSATABLE", stepKey: stepKey(runId, stepIdx, tool), args, argsHash: argsHash(args), phase: "STAGING",
    policyVersion: 1, approvalId: null, planItemIdx: null, compensation: null, compensationKey: null, correction: null, audience: ["customer"],
    ...more,
  };
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
    world.faults.inject("ticketing.create", { kind: "timeout_after_effect" });
    world.faults.inject("payments.charge", { kind: "crash_after_effect" });
    world.faults.inject("warehouse.reship", { kind: "reject", status: 422, code: "out_of_stock" });

    const first = await engine().startRun({ title: "Refund and reship order 1182", agent: "ignored: the token names the agent" });
    await expect(refundAndReship(first)).rejects.toBeInstanceOf(SimulatedCrash);
    const resumed = await engine().resume(first.runId);
    expect(await refundAndReship(resumed)).toBe("failed");
    const report = await resumed.unwind("warehouse rejected the reship");
    expect(report).toMatchObject({ status: "UNWOUND", compensated: [1, 0], corrections: [] });

    expect(world.ledger.count({ op: "ticketing.create" })).toBe(1);
    expect(world.ledger.count({ op: "ticketing.close" })).toBe(1);
    expect(world.ledger.operations({ op: "ticketing.close", outcome: "not_found" })).toHaveLength(0);
    expect(world.ledger.count({ op: "payments.charge" })).toBe(1);
    expect(world.ledger.count({ op: "payments.refund" })).toBe(1);
    expect(world.ledger.count({ op: "payments.receipt" })).toBe(0);
    const rows = await prisma.step.findMany({ where: { runId: first.runId }, orderBy: { stepIdx: "asc" } });
    expect(rows.map((r) => [r.tool, r.status])).toEqual([
      ["create_ticket", "COMPENSATED"],
      ["charge_card", "COMPENSATED"],
      ["reship_order", "FAILED"],
    ]);
    expect((await prisma.run.findUniqueOrThrow({ where: { id: first.runId } })).status).toBe("UNWOUND");
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

  it("the server refuses what the tool table forbids, whatever the client claims", async () => {
    const { token, prisma } = await setup(["send_email", "create_ticket"]);
    const runId = await startRunVia(token.secret, "rogue");
    const args = { to: "ada@example.com", subject: "Hi", body: "x" };
    const intent = wireIntent(runId, 0, "send_email", args, { toolClass: "REVERSIBLE" }); // a lie: the table says IRREVERSIBLE
    const post = (body: unknown) => call(stepsRoute.POST, `/api/v1/runs/${runId}/steps`, { secret: token.secret, body, params: { runId } });

    // The table's class is what is gated and recorded: a client that claims less is held like one that
    // tells the truth (it may carry an old definition of a tool an admin has since made stricter).
    const lied = await post({ intent });
    expect(lied.status).toBe(409);
    expect(lied.json.error).toMatchObject({ code: "APPROVAL_REQUIRED", reason: "IRREVERSIBLE" });
    expect(lied.json.error.escalationId).toMatch(/^esc_/);
    expect(await prisma.step.count({ where: { runId } })).toBe(0);

    const honest = await post({ intent: { ...intent, toolClass: "IRREVERSIBLE" } });
    expect(honest.status).toBe(409);
    expect(honest.json.error).toMatchObject({ code: "APPROVAL_REQUIRED", reason: "IRREVERSIBLE", escalationId: lied.json.error.escalationId });

    const wrongKey = await post({ intent: { ...intent, toolClass: "IRREVERSIBLE", stepKey: "0".repeat(32) } });
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.json.error.details[0].path).toBe("stepKey");

    const outOfScope = await post({ intent: { ...intent, tool: "charge_card", toolClass: "COMPENSATABLE", stepKey: stepKey(runId, 0, "charge_card") } });
    expect(outOfScope.status).toBe(403);
  });

  it("the one-insert fast path sees an edit of the tool table and never records into another agent's run", async () => {
    const { token, prisma } = await setup(["create_ticket"]);
    const other = await makeToken(["create_ticket"], `other-${Date.now()}`);
    const newRun = (secret: string) => startRunVia(secret, "fast path");
    const intentAt = (runId: string, stepIdx: number, toolClass = "COMPENSATABLE") =>
      wireIntent(runId, stepIdx, "create_ticket", { summary: `ticket ${stepIdx}`, orderId: "3107" }, {
        toolClass,
        compensation: toolClass === "IRREVERSIBLE" ? null : { tool: "close_ticket", args: { stepKey: stepKey(runId, stepIdx, "create_ticket") } },
      });
    const post = (secret: string, runId: string, intent: unknown) => call(stepsRoute.POST, `/api/v1/runs/${runId}/steps`, { secret, body: { intent }, params: { runId } });
    const settle = async (stepId: string) => {
      await prisma.step.update({ where: { id: stepId }, data: { status: "CONFIRMED" } });
    };
    const compensator = await ticketCompensator(prisma);

    const runId = await newRun(token.secret);
    const first = await post(token.secret, runId, { ...intentAt(runId, 0), compensation: { tool: compensator, args: {} } });
    expect(first.status).toBe(201);
    await settle(first.json.step.id as string);

    // Another agent's token, its policy cache warm, cannot record into this run: "not found", nothing written.
    const otherRun = await newRun(other.secret);
    expect((await post(other.secret, otherRun, { ...intentAt(otherRun, 0), compensation: { tool: compensator, args: {} } })).status).toBe(201);
    const intruder = await post(other.secret, runId, { ...intentAt(runId, 1), compensation: { tool: compensator, args: {} } });
    expect(intruder.status).toBe(404);

    // An admin changes what answers the tool: an intent naming the old compensator is refused, not
    // staged on the remembered row.
    await prisma.toolPolicy.update({ where: { name: "create_ticket" }, data: { compensator: "archive_ticket", policyVersion: { increment: 1 } } });
    const stale = await post(token.secret, runId, { ...intentAt(runId, 1), compensation: { tool: compensator, args: {} } });
    expect(stale.status).toBe(400);
    expect(stale.json.error.details[0].path).toBe("compensation.tool");
    await prisma.toolPolicy.update({ where: { name: "create_ticket" }, data: { compensator, policyVersion: { increment: 1 } } });

    // An admin makes the tool irreversible: the next intent is held, not staged on the remembered row.
    await prisma.toolPolicy.update({ where: { name: "create_ticket" }, data: { toolClass: "IRREVERSIBLE", policyVersion: { increment: 1 } } });
    const held = await post(token.secret, runId, intentAt(runId, 1, "IRREVERSIBLE"));
    expect(held.status).toBe(409);
    expect(held.json.error).toMatchObject({ code: "APPROVAL_REQUIRED", reason: "IRREVERSIBLE" });
    expect(await prisma.step.count({ where: { runId } })).toBe(1);
    await prisma.toolPolicy.update({ where: { name: "create_ticket" }, data: { toolClass: "COMPENSATABLE", policyVersion: { increment: 1 } } });
  });

  it("an outcome is one fenced update; another agent, a token without the tool, a repeat and an illegal move change nothing", async () => {
    const { token, prisma } = await setup(["create_ticket"]);
    const other = await makeToken(["create_ticket"], `other-${Date.now()}`);
    const unscoped = await createAgentToken(prisma, { name: `worker-${Date.now()}`, tools: ["charge_card"], createdBy: "admin@example.com", role: "worker" });
    const runId = await startRunVia(token.secret, "outcome");
    const intent = wireIntent(runId, 0, "create_ticket", { summary: "ticket", orderId: "3107" }, { compensation: { tool: await ticketCompensator(prisma), args: {} } });
    const created = await call(stepsRoute.POST, `/api/v1/runs/${runId}/steps`, { secret: token.secret, body: { intent }, params: { runId } });
    expect(created.status).toBe(201);
    const stepId = created.json.step.id as string;
    const { PATCH } = await import("@/app/api/v1/steps/[stepId]/route");
    const patch = (secret: string, body: unknown) => call(PATCH, `/api/v1/steps/${stepId}`, { method: "PATCH", secret, body, params: { stepId } });
    const outcome = { fence: { status: ["INTENDED"] }, patch: { status: "CONFIRMED", externalRef: "T-1", result: { id: "T-1" }, attempts: 1 }, event: { type: "step.confirmed" } };
    const events = () => prisma.auditEvent.count({ where: { runId } });
    const before = await events();

    expect((await patch(other.secret, outcome)).status).toBe(404); // another agent's step: "not found"
    expect((await patch(unscoped.secret, outcome)).status).toBe(403); // a worker token (any run) without the tool
    expect((await patch(token.secret, { ...outcome, patch: { status: "COMPENSATED" } })).status).toBe(422);
    expect(await prisma.step.findUniqueOrThrow({ where: { id: stepId } })).toMatchObject({ status: "INTENDED", externalRef: null });
    expect(await events()).toBe(before);

    const reads = vi.spyOn(sharedSagaStore(prisma), "getStep");
    const done = await patch(token.secret, outcome);
    expect(reads).not.toHaveBeenCalled(); // the outcome needed no read of the step or its run
    reads.mockRestore();
    expect(done.status).toBe(200);
    expect(done.json.step).toMatchObject({ id: stepId, status: "CONFIRMED", externalRef: "T-1", result: { id: "T-1" } });
    expect(await events()).toBe(before + 1);
    const repeat = await patch(token.secret, outcome); // the fenced repeat: null, nothing written
    expect(repeat.status).toBe(200);
    expect(repeat.json.step).toBeNull();
    expect(await events()).toBe(before + 1);
  });

  it("50 concurrent identical intents make one row; the one creator's call makes one effect", async () => {
    const { world, token, prisma } = await setup(["create_ticket"]);
    const runId = await startRunVia(token.secret, "burst");
    const key = stepKey(runId, 0, "create_ticket");
    const args = { summary: "Refund for order 1182", orderId: "1182" };
    const intent = wireIntent(runId, 0, "create_ticket", args, {
      compensation: { tool: "close_ticket", args: { reason: "rolled back" } },
      audience: ["support_team"],
    });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(stepsRoute.POST, `/api/v1/runs/${runId}/steps`, {
          secret: token.secret,
          body: { intent },
          params: { runId },
          headers: i % 2 === 0 ? { "idempotency-key": "burst-1" } : {},
        }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.every((s) => s === 201 || s === 200 || s === 409)).toBe(true);
    expect(await prisma.step.count({ where: { runId } })).toBe(1);
    // Only the caller that created the row calls the tool.
    const registry = createSupportToolRegistry(world);
    for (const answer of answers) {
      if (answer.status === 201 && answer.json.created) await registry.tool("create_ticket").call(args, { stepKey: key, runId, stepIdx: 0 });
    }
    expect(world.ledger.count({ op: "ticketing.create" })).toBe(1);
  });
});

describe("a revoked token", () => {
  it("is refused on its very next request while the run's rows stay intact", async () => {
    const { engine, token, prisma } = await setup();
    const run = await engine().startRun({ title: "Before revocation", agent: "x" });
    await run.call("create_ticket", { summary: "Order 1182 refund", orderId: "1182" });
    const { revokeAgentToken } = await import("@/lib/tokens/revoke-agent-token");
    await revokeAgentToken(prisma, { name: token.name, revokedBy: "admin@example.com" });

    await expect(run.call("create_ticket", { summary: "again", orderId: "1182" })).rejects.toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    await expect(run.call("create_ticket", { summary: "and again", orderId: "1182" })).rejects.toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    const rows = await prisma.step.findMany({ where: { runId: run.runId } });
    expect(rows.map((r) => [r.tool, r.status])).toEqual([["create_ticket", "CONFIRMED"]]);
    expect(await prisma.auditEvent.count({ where: { runId: run.runId } })).toBeGreaterThanOrEqual(3);
  });

  it("is refused between an intent and its outcome: the outcome is not recorded (the write checks the token itself)", async () => {
    const { token, prisma } = await setup(["create_ticket"]);
    const runId = await startRunVia(token.secret, "revoked midway");
    const compensation = { tool: await ticketCompensator(prisma), args: {} };
    const intent = (stepIdx: number) => wireIntent(runId, stepIdx, "create_ticket", { summary: "ticket", orderId: "3107" }, { compensation });
    const post = (stepIdx: number) => call(stepsRoute.POST, `/api/v1/runs/${runId}/steps`, { secret: token.secret, body: { intent: intent(stepIdx) }, params: { runId } });
    const first = await post(0); // reads the token; the next requests need not
    expect(first.status).toBe(201);
    const stepId = first.json.step.id as string;
    const { PATCH } = await import("@/app/api/v1/steps/[stepId]/route");
    const outcome = { fence: { status: ["INTENDED"] }, patch: { status: "CONFIRMED", externalRef: "T-1", attempts: 1 }, event: { type: "step.confirmed" } };
    const { revokeAgentToken } = await import("@/lib/tokens/revoke-agent-token");
    await revokeAgentToken(prisma, { name: token.name, revokedBy: "admin@example.com" });
    const events = await prisma.auditEvent.count({ where: { runId } });

    const refused = await call(PATCH, `/api/v1/steps/${stepId}`, { method: "PATCH", secret: token.secret, body: outcome, params: { stepId } });
    expect(refused.status).toBe(401);
    expect(refused.json.error.message).toMatch(/revoked/);
    expect((await post(1)).status).toBe(401);
    expect(await prisma.step.findMany({ where: { runId }, select: { status: true } })).toEqual([{ status: "INTENDED" }]);
    expect(await prisma.auditEvent.count({ where: { runId } })).toBe(events);
  });
});
