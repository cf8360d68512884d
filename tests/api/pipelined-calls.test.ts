/**
 * One request per step: a confirmed call's outcome goes to the server with the run's next call or its
 * completion (`previous`), recorded first as its own commit. Proved on the real route handlers and the
 * simulated systems' ledger: the requests made, the rows and audit trail (the same as two requests
 * make), an outcome sent alone when the agent thinks, a crash before it was sent, a re-sent request,
 * and a log that disagrees with the agent.
 */
import { describe, expect, it } from "vitest";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { SagaError } from "@/packages/client/src/saga/errors";
import { World } from "@/lib/demo/sim";
import { routeFetch } from "../support/api-router";
import { call, makeToken, useTestDatabase } from "./api-test-kit";
import * as callsRoute from "@/app/api/v1/runs/[runId]/calls/route";

const getPrisma = useTestDatabase("pipelined-calls");
const TOOLS = ["create_ticket"];

/** A fetch that records the path of every request the agent sends. */
function countingFetch(paths: string[]): typeof fetch {
  return async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    paths.push(`${request.method} ${new URL(request.url).pathname.replace(/\/(run|stp)_[^/]+/g, "/:id")}`);
    return routeFetch(request);
  };
}

async function setup(outcomeLingerMs?: number) {
  const clock = new ManualClock();
  const world = new World({ clock, searchLagMs: 0 });
  const registry = createSupportToolRegistry(world);
  const prisma = await getPrisma();
  await syncToolPolicies(prisma, registry);
  const token = await makeToken(TOOLS);
  const paths: string[] = [];
  const agent = (lingerMs = outcomeLingerMs) => {
    const store = new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: countingFetch(paths), ...(lingerMs === undefined ? {} : { outcomeLingerMs: lingerMs }) });
    return { store, engine: new SagaEngine({ store, registry, clock, recheckAfterMs: 0, backoffMs: 1 }) };
  };
  const server = new SagaEngine({ store: new PrismaSagaStore(prisma), registry, clock });
  return { world, prisma, token, paths, agent, server };
}

/** Three logged calls and the finish, as a support agent makes them. */
async function threeCallsAndFinish(engine: SagaEngine, orderId: string) {
  const run = await engine.startRun({ title: `Order ${orderId}`, agent: "x" });
  await run.call("create_ticket", { summary: `Order ${orderId} arrived damaged`, orderId });
  await run.call("create_ticket", { summary: `Order ${orderId}: refund asked`, orderId });
  await run.call("create_ticket", { summary: `Order ${orderId} follow-up`, orderId });
  await run.complete();
  return run.runId;
}

describe("pipelined outcomes", () => {
  it("by default every outcome is durable before call() returns: a read right after it shows the step CONFIRMED", async () => {
    const { prisma, paths, agent } = await setup();
    const run = await agent().engine.startRun({ title: "Order 1300", agent: "x" });
    await run.call("create_ticket", { summary: "Order 1300 arrived damaged", orderId: "1300" });
    expect((await prisma.step.findFirstOrThrow({ where: { runId: run.runId } })).status).toBe("CONFIRMED");
    expect(paths.filter((p) => p.endsWith("/outcome"))).toHaveLength(1);
  });

  it("complete() through a second engine of the same process sends the first engine's waiting outcome first, and succeeds", async () => {
    const { prisma, agent, world } = await setup(60_000);
    const first = agent();
    const run = await first.engine.startRun({ title: "Order 1310", agent: "x" });
    await run.call("create_ticket", { summary: "Order 1310 arrived damaged", orderId: "1310" });
    expect((await prisma.step.findFirstOrThrow({ where: { runId: run.runId } })).status).toBe("INTENDED");
    const second = agent();
    const finished = await (await second.engine.resume(run.runId)).complete();
    expect(finished.status).toBe("COMPLETED");
    const step = await prisma.step.findFirstOrThrow({ where: { runId: run.runId } });
    expect(step.status).toBe("CONFIRMED");
    expect(world.ledger.count({ key: step.stepKey })).toBe(1);
  });

  it("a run that cannot finish says which step, its status and what to do", async () => {
    const { agent } = await setup(0);
    const { engine, store } = agent();
    const run = await engine.startRun({ title: "Order 1311", agent: "x" });
    // An intent whose outcome this process never reports (as if the reporting process died).
    const begun = await store.calls.begin({ runId: run.runId, tool: "create_ticket", args: { summary: "Order 1311 arrived damaged", orderId: "1311" }, cursor: 0, proposal: { compensation: { tool: "close_ticket", args: { reason: "rolled back" } } }, actor: { type: "agent", id: "x" } } as never);
    expect(begun.kind).toBe("call");
    const refused = await run.complete().then(() => null, (e: unknown) => e as SagaError);
    expect(refused).toMatchObject({ code: "RUN_NOT_SETTLED" });
    expect(refused!.message).toMatch(/step 0 \(create_ticket\) is INTENDED: its outcome was never reported\. Report it .*or let a worker reconcile it/);
  });

  it("a run of three calls and its finish is four requests when pipelining is on, with the rows and audit trail two requests per step make", async () => {
    const { prisma, paths, agent, world } = await setup(250);
    const pipelined = await threeCallsAndFinish(agent().engine, "1301");
    const callPaths = paths.filter((p) => p !== "POST /api/v1/runs");
    expect(callPaths).toEqual(["POST /api/v1/runs/:id/calls", "POST /api/v1/runs/:id/calls", "POST /api/v1/runs/:id/calls", "POST /api/v1/runs/:id/complete"]);

    paths.length = 0;
    const twoRequests = await threeCallsAndFinish(agent(0).engine, "1302");
    expect(paths.filter((p) => p.endsWith("/outcome"))).toHaveLength(3);

    const trail = async (runId: string) => (await prisma.auditEvent.findMany({ where: { runId }, orderBy: { seq: "asc" } })).map((e) => e.type);
    expect(await trail(pipelined)).toEqual(await trail(twoRequests));
    const steps = await prisma.step.findMany({ where: { runId: pipelined }, orderBy: { stepIdx: "asc" } });
    expect(steps.map((s) => s.status)).toEqual(["CONFIRMED", "CONFIRMED", "CONFIRMED"]);
    expect(steps.every((s) => s.externalRef)).toBe(true);
    expect((await prisma.run.findUniqueOrThrow({ where: { id: pipelined } })).status).toBe("COMPLETED");
    // One effect per key in the provider's ledger.
    const keys = steps.map((s) => s.stepKey);
    for (const key of keys) expect(world.ledger.count({ key })).toBe(1);
  });

  it("an agent that thinks longer than the linger gets its outcome sent alone, and reads its own writes", async () => {
    const { prisma, paths, agent } = await setup(30);
    const { engine, store } = agent();
    const run = await engine.startRun({ title: "Order 1303", agent: "x" });
    await run.call("create_ticket", { summary: "Order 1303 arrived damaged", orderId: "1303" });
    expect((await prisma.step.findFirstOrThrow({ where: { runId: run.runId } })).status).toBe("INTENDED");
    await new Promise((r) => setTimeout(r, 200));
    expect((await prisma.step.findFirstOrThrow({ where: { runId: run.runId } })).status).toBe("CONFIRMED");
    expect(paths.filter((p) => p.endsWith("/outcome"))).toHaveLength(1);

    // A read right after a call first sends what waits: the agent sees its own call confirmed.
    const second = await engine.startRun({ title: "Order 1304", agent: "x" });
    await second.call("create_ticket", { summary: "Order 1304 arrived damaged", orderId: "1304" });
    expect((await store.listSteps(second.runId)).map((s) => s.status)).toEqual(["CONFIRMED"]);
  });

  it("a process that dies before its outcome was sent leaves a step in flight, reconciled by key on resume: one effect", async () => {
    const { prisma, agent, world } = await setup(60_000);
    const first = agent();
    const run = await first.engine.startRun({ title: "Order 1305", agent: "x" });
    await run.call("create_ticket", { summary: "Order 1305 arrived damaged", orderId: "1305" });
    const [step] = await prisma.step.findMany({ where: { runId: run.runId } });
    expect(step!.status).toBe("INTENDED");

    // A new process resumes from the log alone.
    const resumed = await agent().engine.resume(run.runId);
    const replayed = await resumed.call("create_ticket", { summary: "Order 1305 arrived damaged", orderId: "1305" });
    expect(replayed).toMatchObject({ status: "ok", replayed: true });
    expect((await prisma.step.findFirstOrThrow({ where: { runId: run.runId } })).status).toBe("CONFIRMED");
    expect(world.ledger.count({ key: step!.stepKey })).toBe(1);
    // The dead process's outcome, arriving late after all, is answered from the log.
    await first.store.flush();
    expect((await prisma.step.findFirstOrThrow({ where: { runId: run.runId } })).status).toBe("CONFIRMED");
  });

  it("a request carrying an outcome, sent twice (its answer lost), records the outcome once and the next intent once", async () => {
    const { prisma, token, agent } = await setup(0);
    const run = await agent().engine.startRun({ title: "Order 1306", agent: "x" });
    const begin = (body: unknown) => call(callsRoute.POST, `/api/v1/runs/${run.runId}/calls`, { secret: token.secret, body, params: { runId: run.runId } });
    const undo = { compensation: { tool: "close_ticket", args: { reason: "rolled back" } } };
    const first = await begin({ tool: "create_ticket", args: { summary: "Order 1306 arrived damaged", orderId: "1306" }, cursor: 0, ...undo });
    expect(first.json.answer).toBe("call");
    const stepId = (first.json.step as { id: string }).id;
    const next = { tool: "create_ticket", args: { summary: "Order 1306: refund asked", orderId: "1306" }, cursor: 1, ...undo, previous: { stepId, outcome: "confirmed", externalRef: "TCK-1306", result: { id: "TCK-1306" } } };
    const [a, b] = [await begin(next), await begin(next)];
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.json.previous).toMatchObject({ step: { id: stepId, status: "CONFIRMED", externalRef: "TCK-1306" } });
    // The repeat finds its own intent in flight: look its key up first (as any repeated begin is answered).
    expect(b.json).toMatchObject({ answer: "reconcile", step: { id: (a.json.step as { id: string }).id } });
    expect(await prisma.step.count({ where: { runId: run.runId } })).toBe(2);
    expect(await prisma.auditEvent.count({ where: { runId: run.runId, type: "step.confirmed" } })).toBe(1);
    expect(await prisma.auditEvent.count({ where: { runId: run.runId, type: "step.intended" } })).toBe(2);

    // An outcome that contradicts the log stops the request before its call: nothing new is recorded.
    const contradicting = { ...next, cursor: 2, args: { summary: "Order 1306: third", orderId: "1306" }, previous: { ...next.previous, externalRef: "TCK-9999" } };
    const refused = await begin(contradicting);
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: "OUTCOME_CONFLICT" });
    expect((refused.json.error as { details: { path: string }[] }).details[0]!.path).toMatch(/^previous\./);
    expect(await prisma.step.count({ where: { runId: run.runId } })).toBe(2);
  });

  it("a step someone else settled while its confirmation waited: the next call is refused naming it, and begins nothing", async () => {
    const { prisma, agent, server } = await setup(60_000);
    const { engine } = agent();
    const run = await engine.startRun({ title: "Order 1307", agent: "x" });
    await run.call("create_ticket", { summary: "Order 1307 arrived damaged", orderId: "1307" });
    const step = await prisma.step.findFirstOrThrow({ where: { runId: run.runId } });
    // A person's reconcile in the dashboard finds the ticket first and records it.
    await server.reconcile(step.id, { type: "user", id: "rita@example.com" });
    expect((await prisma.step.findUniqueOrThrow({ where: { id: step.id } })).status).toBe("CONFIRMED");
    // The same effect: the waiting confirmation is answered from the log, and the run goes on.
    await run.call("create_ticket", { summary: "Order 1307: refund asked", orderId: "1307" });
    expect(await prisma.step.count({ where: { runId: run.runId } })).toBe(2);

    // Settled as never having happened while the agent believed it did: refused, nothing begun.
    await run.call("create_ticket", { summary: "Order 1307 follow-up", orderId: "1307" });
    const third = await prisma.step.findFirstOrThrow({ where: { runId: run.runId, stepIdx: 2 } });
    await prisma.step.update({ where: { id: third.id }, data: { status: "NOT_EXECUTED" } });
    const refused = await run.call("create_ticket", { summary: "Order 1307: closing", orderId: "1307" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SagaError);
    expect(refused).toMatchObject({ code: "STEP_NOT_IN_FLIGHT" });
    expect((refused as SagaError).message).toMatch(/^previous: /);
    expect(await prisma.step.count({ where: { runId: run.runId } })).toBe(3);
  });
});
