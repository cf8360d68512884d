/**
 * Traces: an in-process OTLP/HTTP receiver takes what the server exports while an agent (the HTTP
 * client, sending its own span's W3C traceparent) runs a clean run and the seed-003 incident (an
 * unknown outcome, a crash after the charge and a resume, a refusal, the unwind). Each logged call's
 * outcome is one `execute_tool` span, each reconcile one `reconcile` span, each compensation one
 * `compensate` span and the pivot request one `request_pivot` span, all children of the agent's span,
 * carrying the GenAI tool attributes and the step's own (key, class, phase, outcome, reconcile result).
 *
 * An engine that decides in process (the dashboard's, `npm run worker` beside the database) makes
 * the same spans through its observer: its logged calls under the run's kept context, a call its
 * gate holds a `raise_escalation` span, and a person's unwind `compensate` spans under that person's span.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { ManualClock, systemClock } from "@/packages/client/src/saga/clock";
import { CrashPoints } from "@/packages/client/src/saga/crash-points";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { World } from "@/lib/demo/sim";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { recordRunTrace } from "@/lib/core/observability/run-trace";
import { sagaSpans } from "@/lib/core/observability/saga-spans";
import { withTraceparent } from "@/packages/client/src/protocol/trace-scope";
import { startTracing, stopTracing } from "@/packages/client/src/protocol/tracing";
import { playSeed003 } from "../support/support-agent";
import { routeFetch } from "../support/api-router";
import { makeToken, useTestDatabase } from "./api-test-kit";
import { startOtlpReceiver, type OtlpReceiver } from "./tracing-receiver";

const getPrisma = useTestDatabase("tracing");
const AGENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const AGENT_SPAN = "00f067aa0ba902b7";
const PERSON_SPAN = "3333333333333333";

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await stopTracing();
  await receiver.close();
});

describe("traces of logged calls", () => {
  it("exports one execute_tool span per logged call, one per reconcile, compensation and pivot request, under the agent's traceparent", async () => {
    startTracing({ url: receiver.url });
    const prisma = await getPrisma();
    const clock = new ManualClock();
    const world = new World({ clock, searchLagMs: 1500 });
    const registry = createSupportToolRegistry(world);
    await syncToolPolicies(prisma, registry);
    const token = await makeToken(["search_orders", "create_ticket", "charge_card", "reship_order"]);
    const crashPoints = new CrashPoints();
    const store = new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: routeFetch, traceparent: () => `00-${AGENT_TRACE}-${AGENT_SPAN}-01` });
    const engine = () => new SagaEngine({ store, registry, clock, crashPoints, recheckAfterMs: 2000, backoffMs: 10 });

    const clean = await engine().startRun({ title: "Clean", agent: "x" });
    await clean.call("create_ticket", { summary: "Refund for order 7", orderId: "7" });
    await clean.call("charge_card", { customerId: "cus_ada", amount: 500, currency: "eur", reason: "fee", receipt: false });
    const pivot = await clean.requestPivot({ summary: "Reship order 7.", plan: [{ tool: "reship_order", args: { orderId: "7" } }] });

    const first = await playSeed003(world, engine, "x");
    expect(first.report).toMatchObject({ status: "UNWOUND" });
    await stopTracing(); // flushes the batch

    const received = receiver.spans;
    expect(new Set(receiver.contentTypes)).toEqual(new Set(["application/json"]));
    for (const s of received) expect([s.traceId, s.parentSpanId], s.name).toEqual([AGENT_TRACE, AGENT_SPAN]);
    expect(new Set(received.map((s) => s.spanId)).size).toBe(received.length);

    const steps = await prisma.step.findMany({ where: { runId: { in: [clean.runId, first.runId] } }, orderBy: [{ createdAt: "asc" }, { stepIdx: "asc" }] });
    const byId = new Map(steps.map((s) => [s.id, s]));
    // The pivot request is a span of its own.
    const pivotSpans = received.filter((s) => s.name === "request_pivot");
    expect(pivotSpans.map((s) => [s.attributes["sagaboard.pivot.id"], s.attributes["sagaboard.run.id"], s.attributes["sagaboard.pivot.plan_items"]])).toEqual([[pivot.id, clean.runId, 1]]);
    // Every other span names a step of these runs, and carries that row's key, class and phase.
    const stepSpans = received.filter((s) => s.name !== "request_pivot");
    for (const s of stepSpans) {
      const row = byId.get(String(s.attributes["gen_ai.tool.call.id"]));
      expect(row, s.name).toBeDefined();
      expect(s.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": row!.tool,
        "sagaboard.run.id": row!.runId,
        "sagaboard.step.id": row!.id,
        "sagaboard.step.key": row!.stepKey,
        "sagaboard.step.idx": row!.stepIdx,
        "sagaboard.tool.class": row!.toolClass.toLowerCase(),
        "sagaboard.phase": row!.phase.toLowerCase(),
      });
      expect(s.name).toBe(`${s.attributes["sagaboard.operation"]} ${row!.tool}`);
      if (s.attributes["sagaboard.operation"] === "compensate") expect(s.attributes["sagaboard.compensation.key"]).toBe(row!.compensationKey);
    }
    const seen = stepSpans.map((s) => [s.name, s.attributes["sagaboard.outcome"], s.attributes["sagaboard.reconcile.result"] ?? s.attributes["sagaboard.compensation.state"] ?? null]).sort();
    expect(seen).toEqual(
      [
        // The clean run: one span per logged call, confirmed.
        ["execute_tool create_ticket", "confirmed", null],
        ["execute_tool charge_card", "confirmed", null],
        // Seed 003: the ticket timed out (unknown), the next call reconciled it (found); the charge's
        // process died before its outcome was reported, and the resume reconciled it; the reship was refused.
        ["execute_tool create_ticket", "unknown", null],
        ["reconcile create_ticket", "confirmed", "confirmed"],
        ["reconcile charge_card", "confirmed", "confirmed"],
        ["execute_tool reship_order", "failed", null],
        // The unwind: each compensation confirmed by reading the real system back.
        ["compensate create_ticket", "compensated", "confirmed"],
        ["compensate charge_card", "compensated", "confirmed"],
      ].sort(),
    );
    // One execute_tool span per logged call of the clean run: its rows, no more, no fewer.
    const cleanSpans = stepSpans.filter((s) => s.attributes["sagaboard.run.id"] === clean.runId);
    expect(cleanSpans.map((s) => s.attributes["gen_ai.tool.call.id"]).sort()).toEqual(steps.filter((s) => s.runId === clean.runId).map((s) => s.id).sort());
  });
});

describe("traces of an in-process engine", () => {
  it("makes execute_tool spans for its calls, a raise_escalation span for a held call, and compensate spans for a person's unwind", async () => {
    const from = receiver.spans.length;
    startTracing({ url: receiver.url });
    const prisma = await getPrisma();
    // The wall clock (spans are in wall time), and a refund the provider takes 30 ms to carry out.
    const world = new World({ clock: systemClock });
    world.faults.inject("payments.refund", { kind: "slow", ms: 30 });
    const registry = createSupportToolRegistry(world);
    await syncToolPolicies(prisma, registry); // idempotent: the tool table of the test above
    const engine = new SagaEngine({ store: sharedSagaStore(prisma), registry, clock: systemClock, recheckAfterMs: 10, backoffMs: 1, observer: sagaSpans(prisma) });

    const run = await engine.startRun({ title: "Refund and regret", agent: "x" });
    await recordRunTrace(prisma, run.runId, `00-${AGENT_TRACE}-${AGENT_SPAN}-01`); // as the agent API keeps it at the run's creation
    await run.call("create_ticket", { summary: "Refund for order 9", orderId: "9" });
    await run.call("charge_card", { customerId: "cus_cy", amount: 700, currency: "eur", reason: "fee", receipt: false });
    const held = await run.call("send_email", { to: "cy@example.com", subject: "Hello", body: "A word before the plan." });
    expect(held).toMatchObject({ status: "approval_required" });
    // A person unwinds the run from the dashboard: the engine's work runs under the person's span.
    const report = await withTraceparent(`00-${AGENT_TRACE}-${PERSON_SPAN}-01`, () => engine.unwind(run.runId, { type: "user", id: "rita@example.com" }, "wrong customer"));
    expect(report.compensated).toHaveLength(2);
    expect(world.ledger.count({ op: "payments.refund", outcome: "effect" })).toBe(1);
    await stopTracing();

    const spans = receiver.spans.slice(from);
    const steps = await prisma.step.findMany({ where: { runId: run.runId } });
    const byTool = new Map(steps.map((s) => [s.tool, s]));
    const seen = spans.map((s) => [s.name, s.parentSpanId, s.attributes["sagaboard.outcome"] ?? s.attributes["sagaboard.escalation.source"]]).sort();
    expect(seen).toEqual(
      [
        ["execute_tool create_ticket", AGENT_SPAN, "confirmed"],
        ["execute_tool charge_card", AGENT_SPAN, "confirmed"],
        ["raise_escalation", AGENT_SPAN, "held_call"],
        ["compensate charge_card", PERSON_SPAN, "compensated"],
        ["compensate create_ticket", PERSON_SPAN, "compensated"],
      ].sort(),
    );
    for (const s of spans) expect(s.traceId, s.name).toBe(AGENT_TRACE);
    for (const s of spans.filter((s) => s.name !== "raise_escalation")) {
      const row = byTool.get(String(s.attributes["gen_ai.tool.name"]))!;
      expect(s.attributes, s.name).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.call.id": row.id,
        "sagaboard.run.id": run.runId,
        "sagaboard.step.key": row.stepKey,
        "sagaboard.step.idx": row.stepIdx,
        "sagaboard.tool.class": row.toolClass.toLowerCase(),
        "sagaboard.phase": row.phase.toLowerCase(),
      });
      if (s.name.startsWith("compensate")) expect(s.attributes).toMatchObject({ "sagaboard.compensation.key": row.compensationKey, "sagaboard.compensation.state": "confirmed" });
    }
    // The refund's compensate span covers its send, slow as it was (the provider's ledger, same clock).
    const refunded = spans.find((s) => s.name === "compensate charge_card")!;
    const [refund] = world.ledger.effects({ op: "payments.refund", key: String(refunded.attributes["sagaboard.compensation.key"]) });
    expect(refund!.at.getTime() - refunded.startMs).toBeGreaterThanOrEqual(30);
    expect(refunded.endMs).toBeGreaterThanOrEqual(refund!.at.getTime());
    const escalation = await prisma.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "APPROVAL_REQUIRED" } });
    const raised = spans.find((s) => s.name === "raise_escalation")!;
    expect(raised.attributes).toMatchObject({ "sagaboard.escalation.id": escalation.id, "sagaboard.escalation.kind": "approval_required", "sagaboard.actor.type": "agent", "sagaboard.run.id": run.runId });
  });
});
