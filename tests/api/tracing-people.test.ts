/**
 * Traces of what happens to a run after the agent's requests, received by an in-process OTLP
 * receiver: a held call's raise is a `raise_escalation` span under the agent's request that was held,
 * and the stuck sweep's under the run's kept context; a reviewer's approval of the agent's pivot is a
 * `decide_pivot` span under the agent's `request_pivot` span; a held call's escalation worked by a
 * reviewer is a `resolve_escalation` span in the agent's trace; a revoke is a `revoke` span there,
 * and the COMPENSATE task it enqueues carries its context, so the worker's task is a `worker_task`
 * span under the revoke and its compensation (over the API) a `compensate` span under that; the MCP
 * gateway forwards its client's `_meta.traceparent` (not tracing) or makes a `tools/call` span under
 * it whose context Sagaboard's spans for the call nest under (tracing). Who acted is a role, never
 * an email.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as approveRoute from "@/app/api/dashboard/pivots/[pivotId]/approve/route";
import * as claimRoute from "@/app/api/dashboard/escalations/[escalationId]/claim/route";
import * as resolveRoute from "@/app/api/dashboard/escalations/[escalationId]/resolve/route";
import * as stepRevokeRoute from "@/app/api/dashboard/steps/[stepId]/revoke/route";
import { runWithSessionReader } from "@/lib/server/auth/current-user";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { HttpTaskQueue } from "@/packages/client/src/agent/client/http-task-queue";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { startTracing, stopTracing } from "@/packages/client/src/protocol/tracing";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { World } from "@/lib/demo/sim";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { createUser } from "@/lib/server/users/create-user";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { traceWorkerTask } from "@/packages/client/src/agent/worker-spans";
import { sweepStuckRuns } from "@/lib/server/worker/sweep-stuck-runs";
import { Worker } from "@/packages/client/src/agent/worker";
import { Gateway } from "@/packages/mcp-gateway/src/gateway";
import { Sagaboard } from "@/packages/mcp-gateway/src/sagaboard";
import { manifestFor, staticTools } from "@/packages/mcp-gateway/src/tool-watch";
import type { Upstream } from "@/packages/mcp-gateway/src/upstream";
import { ToolRegistry } from "@/packages/client/src/saga/tools";
import { routeFetch } from "../support/api-router";
import { call, makeToken, useTestDatabase, type CallResult } from "./api-test-kit";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./tracing-receiver";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const getPrisma = useTestDatabase("tracing-people");
const AGENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const AGENT_SPAN = "00f067aa0ba902b7";
const AGENT_PARENT = `00-${AGENT_TRACE}-${AGENT_SPAN}-01`;
const HELD_CALL_SPAN = "2222222222222222";
const users: Record<string, string> = {};
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const prisma = await getPrisma();
  const user = await createUser(prisma, { email: "rita-tracing@example.com", name: "Rita", role: "reviewer", password: "correct horse battery", by: { type: "system", id: "test" } });
  users.rita = user.id;
});

afterAll(async () => {
  await stopTracing();
  await receiver.close();
});

/** Calls a dashboard route as Rita, the reviewer (same origin, as the browser). */
function asRita(handler: Parameters<typeof call>[0], path: string, options: { body?: unknown; params?: Record<string, string> } = {}): Promise<CallResult> {
  return runWithSessionReader(async () => users.rita ?? null, () => call(handler, path, { ...options, headers: options.body === undefined ? {} : { origin: "http://localhost" } }));
}

/** Exports what is buffered and returns the spans received since `from`. */
async function flushed(from: number): Promise<ReceivedSpan[]> {
  await stopTracing();
  return receiver.spans.slice(from);
}

function one(spans: ReceivedSpan[], name: string, where: (s: ReceivedSpan) => boolean = () => true): ReceivedSpan {
  const found = spans.filter((s) => s.name === name && where(s));
  expect(found, `${name} spans`).toHaveLength(1);
  return found[0]!;
}

/** No attribute of any span names a person: roles only. */
function expectNoEmails(spans: ReceivedSpan[]): void {
  for (const s of spans) for (const v of Object.values(s.attributes)) expect(String(v), s.name).not.toContain("@");
}

/** The agent over the API with its own span's traceparent (`traceparent()`, AGENT_PARENT by default), on the support tools. */
async function agent(tools: string[], traceparent: () => string = () => AGENT_PARENT) {
  const world = new World({ clock: new ManualClock() });
  const registry = createSupportToolRegistry(world);
  const token = await makeToken(tools);
  const store = new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: routeFetch, traceparent });
  return { world, registry, token, engine: new SagaEngine({ store, registry, clock: world.clock, recheckAfterMs: 10, backoffMs: 1 }) };
}

describe("traces of people's decisions", () => {
  it("a reviewer's approval of the agent's pivot is a decide_pivot span under its request_pivot span; a held call worked by the reviewer is a resolve_escalation span in the agent's trace", async () => {
    const from = receiver.spans.length;
    startTracing({ url: receiver.url });
    const prisma = await getPrisma();
    // The agent's span changes from call to call, as an agent's tool spans do; the run keeps the first.
    let agentSpan = AGENT_PARENT;
    const { engine } = await agent(["create_email_draft", "create_ticket_draft", "authorize_payment", "send_email", "reship_order"], () => agentSpan);
    const run = await engine.startRun({ title: "Reship order 2001", agent: "x" });
    await run.call("create_email_draft", { to: "bo@example.com", subject: "Your replacement", body: "We re-shipped order 2001." });
    // An irreversible call before the pivot is held for a person, inside the agent's request for it.
    agentSpan = `00-${AGENT_TRACE}-${HELD_CALL_SPAN}-01`;
    const held = await run.call("send_email", { to: "bo@example.com", subject: "Hello", body: "A word before the plan." });
    expect(held).toMatchObject({ status: "approval_required" });
    agentSpan = AGENT_PARENT;
    const escalation = await prisma.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "APPROVAL_REQUIRED" } });
    expect((await asRita(claimRoute.POST, `/api/dashboard/escalations/${escalation.id}/claim`, { body: {}, params: { escalationId: escalation.id } })).status).toBe(200);
    const resolved = await asRita(resolveRoute.POST, `/api/dashboard/escalations/${escalation.id}/resolve`, { body: { kind: "APPROVAL_REQUIRED", approve: false, note: "not before the plan" }, params: { escalationId: escalation.id } });
    expect(resolved.status).toBe(200);

    const pivot = await run.requestPivot({ summary: "Reship order 2001.", plan: [{ tool: "reship_order", args: { orderId: "2001" } }] });
    const approved = await asRita(approveRoute.POST, `/api/dashboard/pivots/${pivot.id}/approve`, { body: { planHash: pivot.planHash }, params: { pivotId: pivot.id } });
    expect(approved.status).toBe(200);
    // The approved run's agent goes quiet: the stuck sweep raises it.
    const swept = await sweepStuckRuns({ prisma, store: sharedSagaStore(prisma), workerId: "tracing-sweep", stuckAfterMs: 0 });
    const stuck = swept.stuck.find((s) => s.runId === run.runId);
    expect(stuck?.created).toBe(true);
    const spans = await flushed(from);

    const requested = one(spans, "request_pivot");
    expect([requested.traceId, requested.parentSpanId]).toEqual([AGENT_TRACE, AGENT_SPAN]);
    const decided = one(spans, "decide_pivot");
    expect([decided.traceId, decided.parentSpanId]).toEqual([AGENT_TRACE, requested.spanId]);
    expect(decided.attributes).toMatchObject({
      "sagaboard.run.id": run.runId,
      "sagaboard.pivot.id": pivot.id,
      "sagaboard.pivot.decision": "approve",
      "sagaboard.pivot.result": "decided",
      "sagaboard.pivot.status": "approved",
      "sagaboard.pivot.plan_items": 1,
      "sagaboard.actor.type": "user",
      "sagaboard.actor.role": "reviewer",
    });
    expect(decided.attributes["sagaboard.pivot.wait_seconds"]).toBeGreaterThanOrEqual(0);
    // The held call was worked before the pivot request: a child of the agent's span kept at the run's creation.
    // The held call's raise is a child of the agent's request that was held, not of the run's kept context.
    const raised = one(spans, "raise_escalation", (s) => s.attributes["sagaboard.escalation.id"] === escalation.id);
    expect([raised.traceId, raised.parentSpanId]).toEqual([AGENT_TRACE, HELD_CALL_SPAN]);
    expect(raised.attributes).toMatchObject({
      "sagaboard.run.id": run.runId,
      "sagaboard.escalation.kind": "approval_required",
      "sagaboard.escalation.source": "held_call",
      "sagaboard.actor.type": "agent",
    });
    // The stuck run's raise, by the sweep, is a child of the run's kept context: the pivot request.
    const stuckRaise = one(spans, "raise_escalation", (s) => s.attributes["sagaboard.escalation.id"] === stuck!.escalationId);
    expect([stuckRaise.traceId, stuckRaise.parentSpanId]).toEqual([AGENT_TRACE, requested.spanId]);
    expect(stuckRaise.attributes).toMatchObject({ "sagaboard.escalation.kind": "stuck_after_pivot", "sagaboard.escalation.source": "stuck_sweep", "sagaboard.actor.type": "system" });
    const worked = one(spans, "resolve_escalation");
    expect([worked.traceId, worked.parentSpanId]).toEqual([AGENT_TRACE, AGENT_SPAN]);
    expect(worked.attributes).toMatchObject({
      "sagaboard.run.id": run.runId,
      "sagaboard.escalation.id": escalation.id,
      "sagaboard.escalation.kind": "approval_required",
      "sagaboard.escalation.decision": "rejected",
      "sagaboard.actor.role": "reviewer",
    });
    expectNoEmails(spans);
  });

  it("a revoke is a span in the agent's trace; the worker's task is a worker_task span under it, and its compensation over the API a compensate span under that", async () => {
    const from = receiver.spans.length;
    startTracing({ url: receiver.url });
    const prisma = await getPrisma();
    const { world, registry, engine } = await agent(["charge_card"]);
    const run = await engine.startRun({ title: "charge then regret", agent: "x" });
    await run.call("charge_card", { customerId: "cus_bo", amount: 1500, currency: "eur", reason: "reship fee", receipt: false });
    await run.complete();
    const step = await prisma.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } });
    const pulled = await asRita(stepRevokeRoute.POST, `/api/dashboard/steps/${step.id}/revoke`, { body: { reason: "wrong customer" }, params: { stepId: step.id } });
    expect(pulled.status).toBe(200);

    const { secret } = await createAgentToken(prisma, { name: `tracing-worker-${Date.now()}`, tools: ["charge_card"], role: "worker", createdBy: "test" });
    const transport = { baseUrl: "http://sagaboard.test", token: secret, fetch: routeFetch };
    const workerEngine = new SagaEngine({ store: new HttpSagaStore(transport), registry, clock: world.clock, recheckAfterMs: 10, backoffMs: 1 });
    const worker = new Worker({ queue: new HttpTaskQueue(transport), engine: workerEngine, workerId: "traced-w", tools: ["charge_card"], traceTask: traceWorkerTask });
    expect((await worker.runOnce()).map((o) => o.outcome)).toEqual(["done"]);
    expect(world.ledger.count({ op: "payments.refund", outcome: "effect" })).toBe(1);
    const spans = await flushed(from);

    const revoke = one(spans, "revoke");
    expect([revoke.traceId, revoke.parentSpanId]).toEqual([AGENT_TRACE, AGENT_SPAN]);
    expect(revoke.attributes).toMatchObject({
      "sagaboard.run.id": run.runId,
      "sagaboard.step.id": step.id,
      "sagaboard.revoke.scope": "step",
      "sagaboard.revoke.kind": "compensate",
      "sagaboard.revoke.in_window": true,
      "sagaboard.revoke.created": true,
      "sagaboard.actor.role": "reviewer",
    });
    const task = await prisma.workerTask.findFirstOrThrow({ where: { stepId: step.id, kind: "COMPENSATE" } });
    expect((task.payload as { traceparent?: string }).traceparent).toBe(`00-${AGENT_TRACE}-${revoke.spanId}-01`);
    // The worker's task is its own span under the revoke, and the server's compensation nests under it.
    const worked = one(spans, "worker_task compensate");
    expect([worked.traceId, worked.parentSpanId]).toEqual([AGENT_TRACE, revoke.spanId]);
    expect(worked.attributes).toMatchObject({ "sagaboard.task.id": task.id, "sagaboard.task.kind": "compensate", "sagaboard.task.attempt": 1, "sagaboard.task.outcome": "done", "sagaboard.run.id": run.runId, "sagaboard.step.id": step.id });
    const compensated = one(spans, "compensate charge_card");
    expect([compensated.traceId, compensated.parentSpanId]).toEqual([AGENT_TRACE, worked.spanId]);
    expect(compensated.attributes).toMatchObject({ "sagaboard.step.id": step.id, "sagaboard.compensation.state": "confirmed" });
    expectNoEmails(spans);
  });

  it("an unwind the agent asks of a worker carries the trace context of the agent's request", async () => {
    startTracing({ url: receiver.url });
    const prisma = await getPrisma();
    const { engine, token } = await agent(["charge_card"]);
    const run = await engine.startRun({ title: "to be unwound", agent: "x" });
    // Later in the agent's trace, another of its spans asks for the unwind: the task is that span's child.
    const later = `00-${AGENT_TRACE}-1111111111111111-01`;
    const store = new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: routeFetch, traceparent: () => later });
    const { taskId } = await store.requestUnwind(run.runId, "the customer cancelled");
    await stopTracing();
    const task = await prisma.workerTask.findUniqueOrThrow({ where: { id: taskId } });
    expect(task.payload).toMatchObject({ reason: "the customer cancelled", traceparent: later });
  });
});

describe("the MCP gateway", () => {
  it("sends its client's _meta.traceparent with its requests for that call, and none for a call without one", async () => {
    const token = await makeToken(["send_email"]);
    const seen: { path: string; traceparent: string | null }[] = [];
    const recording: typeof fetch = (input, init) => {
      seen.push({ path: new URL(String(input)).pathname, traceparent: new Headers(init?.headers).get("traceparent") });
      return routeFetch(input, init);
    };
    const sagaboard = new Sagaboard({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: recording });
    const run = await sagaboard.startRun("MCP session", null, {});
    const upstream = { client: { callTool: async () => ({ content: [{ type: "text", text: "sent" }] }) }, transport: { forget: () => undefined, answerFor: async () => null } };
    const gateway = new Gateway({
      sagaboard,
      upstream: upstream as unknown as Upstream,
      tools: staticTools([{ name: "send_letter", inputSchema: { type: "object" } }]),
      namespace: "team",
      runId: run.id,
      dashboardUrl: "http://sagaboard.test",
      lookups: {},
      holdWaitMs: 0,
    });
    await gateway.load();
    const clientParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    seen.length = 0;
    await gateway.call("send_letter", { to: "ada@example.com" }, { traceparent: clientParent }, new AbortController().signal);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.some((r) => r.path === `/api/v1/runs/${run.id}/calls`)).toBe(true);
    expect(seen.map((r) => r.traceparent)).toEqual(seen.map(() => clientParent));

    seen.length = 0;
    await gateway.call("send_letter", { to: "bo@example.com" }, { traceparent: "not a traceparent" }, new AbortController().signal);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.map((r) => r.traceparent)).toEqual(seen.map(() => null));
  });
});

describe("the MCP gateway, tracing", () => {
  it("makes a tools/call span under its client's _meta.traceparent, and Sagaboard's spans for the call nest under it", async () => {
    const from = receiver.spans.length;
    startTracing({ url: receiver.url });
    const prisma = await getPrisma();
    const namespace = `traced${Date.now().toString(36)}`;
    const token = await makeToken([], namespace);
    const seen: (string | null)[] = [];
    const recording: typeof fetch = (input, init) => {
      if (new URL(String(input)).pathname.endsWith("/calls")) seen.push(new Headers(init?.headers).get("traceparent"));
      return routeFetch(input, init);
    };
    const sagaboard = new Sagaboard({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: recording });
    const upstreamTools = [{ name: "send_letter", inputSchema: { type: "object" as const } }];
    await sagaboard.declare(manifestFor(upstreamTools, "mail-team", {}));
    const run = await sagaboard.startRun("MCP session, traced", null, {});
    const upstream = { client: { callTool: async () => ({ content: [{ type: "text", text: "sent" }] }) }, transport: { forget: () => undefined, answerFor: async () => null } };
    const gateway = new Gateway({ sagaboard, upstream: upstream as unknown as Upstream, tools: staticTools(upstreamTools), namespace, runId: run.id, dashboardUrl: "http://sagaboard.test", lookups: {}, holdWaitMs: 0 });
    await gateway.load();
    const clientTrace = "0af7651916cd43dd8448eb211c80319c";
    const clientSpan = (n: number) => `b7ad6b716920333${n}`;
    const call = (n: number) => gateway.call("send_letter", { to: "cy@example.com" }, { traceparent: `00-${clientTrace}-${clientSpan(n)}-01` }, new AbortController().signal);
    // A new tool is held for a reviewer; approved, the client sends the call again.
    const held = await call(1);
    expect(held._meta?.["dev.sagaboard/held"]).toBe(true);
    const escalationId = held._meta?.["dev.sagaboard/escalationId"] as string;
    await new ReviewerEngine({ store: sharedSagaStore(prisma), registry: new ToolRegistry() }).decideHeldCall(escalationId, { approve: true, actor: { type: "user", id: "rita-tracing@example.com" } });
    const sent = await call(2);
    expect(sent.isError, JSON.stringify(sent)).toBeFalsy();
    const spans = await flushed(from);

    const forwarded = spans.filter((s) => s.name === "tools/call send_letter");
    expect(forwarded.map((s) => [s.traceId, s.parentSpanId])).toEqual([1, 2].map((n) => [clientTrace, clientSpan(n)]));
    for (const s of forwarded) expect(s.attributes).toMatchObject({ "mcp.method.name": "tools/call", "gen_ai.tool.name": "send_letter", "gen_ai.operation.name": "execute_tool", "sagaboard.run.id": run.id });
    const [first, second] = forwarded as [ReceivedSpan, ReceivedSpan];
    // What the gateway sent Sagaboard carried its own span's context, not the client's.
    expect(new Set(seen)).toEqual(new Set([`00-${clientTrace}-${first.spanId}-01`, `00-${clientTrace}-${second.spanId}-01`]));
    const raised = one(spans, "raise_escalation", (s) => s.attributes["sagaboard.escalation.id"] === escalationId);
    expect([raised.traceId, raised.parentSpanId]).toEqual([clientTrace, first.spanId]);
    expect(raised.attributes["sagaboard.escalation.source"]).toBe("held_call");
    const executed = one(spans, `execute_tool ${namespace}.send_letter`);
    expect([executed.traceId, executed.parentSpanId]).toEqual([clientTrace, second.spanId]);
    expect(executed.attributes).toMatchObject({ "sagaboard.run.id": run.id, "sagaboard.outcome": "confirmed" });
  });
});

describe("a stopping process", () => {
  it("sends its buffered spans on SIGTERM, whether it handles the signal itself (then exits with its own code) or not (143)", async () => {
    const stop = async (args: string[]): Promise<{ pid: number; code: number | null }> => {
      const child = spawn(process.execPath, ["--import", "tsx", "tests/api/tracing-exit-child.ts", ...args], {
        env: { ...process.env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "60000" },
        stdio: ["ignore", "pipe", "inherit"],
      });
      await new Promise<void>((resolve) => child.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve()));
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      child.kill("SIGTERM");
      return { pid: child.pid!, code: await exited };
    };
    const [alone, handled] = await Promise.all([stop([]), stop(["--own-handler"])]);
    expect([alone.code, handled.code]).toEqual([143, 0]);
    const names = receiver.spans.map((s) => s.name);
    expect(names).toContain(`last words ${alone.pid}`);
    expect(names).toContain(`last words ${handled.pid}`);
  });
});
