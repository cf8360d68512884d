/**
 * After the pivot, an approved plan is committed whoever runs it (SQLite, or PostgreSQL with
 * SAGABOARD_TEST_PG=1), counted in the hosted simulated systems' ledgers:
 * - the demo agent as `npm start` runs it waits at its pivot; a reviewer approves; it commits;
 * - the demo agent killed while it waits; a fresh agent process (`--commit-approved`) commits
 *   without replaying the earlier steps;
 * - no agent at all: the app's stuck-run duty raises the escalation, a person picks "let a worker
 *   commit", two worker processes race the COMMIT_PLAN task, each item has one effect;
 * - bad input: committing a pending, rejected or committed pivot, another item's arguments, or a
 *   tool outside the token's scope gets a named 4xx and changes no row.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import type { PivotRecord, StepRecord } from "@/packages/client/src/saga/store";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { RemoteWorld } from "@/lib/demo/sim/remote";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { claimEscalation } from "@/lib/desks/escalations/claim-escalation";
import { resolveEscalation } from "@/lib/desks/escalations/resolve-escalation";
import { startStuckRunDuty } from "@/lib/server/worker/stuck-run-duty";
import { getPrisma as appPrisma } from "@/lib/core/db/prisma";
import { makeToken, useTestDatabase } from "../api/api-test-kit";
import { startTestServer, type TestServer } from "../support/http-server";
import { launchScript } from "../support/script-process";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

/** The reviewer who decides the stuck run. */
const rita = { id: "usr_rita", email: "rita@example.com", name: "Rita Reviewer", role: "reviewer" as const };

const getPrisma = useTestDatabase("commit-plan");
const DEMO = path.join(process.cwd(), "scripts", "demo.ts");
const WORKER = path.join(process.cwd(), "scripts", "worker.ts");
const reviewer = { type: "user" as const, id: "rita@example.com" };
let server: TestServer;

beforeAll(async () => {
  resetHostedWorld({ searchLagMs: 50 });
  server = await startTestServer();
  await syncToolPolicies(await getPrisma(), createSupportToolRegistry(getHostedWorld()));
});
afterAll(async () => server?.close());

async function dbEngine(): Promise<ReviewerEngine> {
  return new ReviewerEngine({ store: new PrismaSagaStore(await getPrisma()), registry: createSupportToolRegistry(getHostedWorld()) });
}

/** The demo's happy-path run of `agent` and its pending pivot. */
async function happyPath(agent: string): Promise<{ runId: string; pivot: PivotRecord }> {
  const prisma = await getPrisma();
  const run = await prisma.run.findFirstOrThrow({ where: { agent, title: "Reship order 2001 with an apology" } });
  const pivot = (await new PrismaSagaStore(prisma).listPivots(run.id)).at(-1)!;
  expect(pivot.status).toBe("PENDING");
  return { runId: run.id, pivot };
}

/** Each plan item's step is CONFIRMED and has exactly one effect in the ledgers, under its key. */
async function expectOneEffectPerItem(runId: string, pivot: PivotRecord): Promise<StepRecord[]> {
  const steps = await new PrismaSagaStore(await getPrisma()).listSteps(runId);
  const items = pivot.plan.map((_, index) => steps.filter((s) => s.approvalId === pivot.id && s.planItemIdx === index));
  for (const [index, rows] of items.entries()) {
    expect(rows, `plan item ${index}`).toHaveLength(1);
    expect(rows[0]!.status).toBe("CONFIRMED");
    expect(getHostedWorld().ledger.count({ key: rows[0]!.stepKey }), `effects of plan item ${index}`).toBe(1);
  }
  return items.map((r) => r[0]!);
}

describe("committing after the pivot", () => {
  it("the demo agent waits at its pivot, a reviewer approves, and it commits: COMPLETED, one email for the step's key", async () => {
    const token = await makeToken(createSupportToolRegistry(getHostedWorld()).list().map((t) => t.name), "demo-waits");
    const demo = launchScript(DEMO, [], { SAGABOARD_URL: server.url, SAGABOARD_TOKEN: token.secret });
    await demo.waitFor("Waiting for a reviewer to decide pivot");
    const { runId, pivot } = await happyPath("demo-waits");
    await (await dbEngine()).decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });

    const { code, out } = await demo.exit;
    expect(code, out).toBe(0);
    expect(out).not.toContain("DETERMINISM");
    expect(out).toContain("Run completed.");
    expect((await (await getPrisma()).run.findUniqueOrThrow({ where: { id: runId } })).status).toBe("COMPLETED");
    const [, email] = await expectOneEffectPerItem(runId, pivot);
    expect(email!.tool).toBe("send_email");
    expect(getHostedWorld().ledger.count({ op: "email.send", key: email!.stepKey })).toBe(1);
  }, 180_000);

  it("the demo agent killed before the approval; a fresh agent process commits without replaying the earlier steps", async () => {
    const token = await makeToken(createSupportToolRegistry(getHostedWorld()).list().map((t) => t.name), "demo-killed");
    const demo = launchScript(DEMO, [], { SAGABOARD_URL: server.url, SAGABOARD_TOKEN: token.secret });
    await demo.waitFor("Waiting for a reviewer to decide pivot");
    demo.child.kill("SIGKILL");
    await demo.exit;
    const { runId, pivot } = await happyPath("demo-killed");
    await (await dbEngine()).decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    const stepsBefore = (await new PrismaSagaStore(await getPrisma()).listSteps(runId)).length;

    const fresh = launchScript(DEMO, ["--commit-approved"], { SAGABOARD_URL: server.url, SAGABOARD_TOKEN: token.secret });
    const { code, out } = await fresh.exit;
    expect(code, out).toBe(0);
    expect(out).toContain("Committed 1 approved plan(s).");
    expect((await (await getPrisma()).run.findUniqueOrThrow({ where: { id: runId } })).status).toBe("COMPLETED");
    const items = await expectOneEffectPerItem(runId, pivot);
    expect(items.map((s) => s.stepIdx)).toEqual([stepsBefore, stepsBefore + 1]); // appended after the staged steps

    // Run again: nothing is waiting, nothing runs twice.
    const again = await launchScript(DEMO, ["--commit-approved"], { SAGABOARD_URL: server.url, SAGABOARD_TOKEN: token.secret }).exit;
    expect(again.out).toContain("No approved plan was waiting to be committed.");
    await expectOneEffectPerItem(runId, pivot);
  }, 180_000);

  it("no agent at all: the app's sweep raises the run, a person lets a worker commit, two workers race: one effect per item", async () => {
    const prisma = await getPrisma();
    const tools = ["create_ticket", "send_email"];
    const agentToken = await makeToken(tools, "gone-agent");
    const engine = new SagaEngine({ store: new HttpSagaStore({ baseUrl: server.url, token: agentToken.secret }), registry: createSupportToolRegistry(new RemoteWorld(server.url)), recheckAfterMs: 200 });
    const run = await engine.startRun({ title: "Tell Dee her refund is on its way", agent: "gone-agent" });
    await run.call("create_ticket", { summary: "Refund for Dee", orderId: "4401" });
    const mail = { to: "dee@example.com", subject: "Your refund", body: "It is on its way." };
    const pivot = await run.requestPivot({ summary: "Email Dee", plan: [{ tool: "send_email", args: mail }, { tool: "create_ticket", args: { summary: "Follow up with Dee", orderId: "4401" } }] });
    await (await dbEngine()).decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    // The agent is gone. The app's duty (what instrumentation.ts starts in every app instance) sweeps.
    await new Promise((r) => setTimeout(r, 1_200));
    const duty = startStuckRunDuty({ prisma: appPrisma, stuckAfterMs: 1_000, everyMs: 60_000, sweeperId: "app-test", log: () => undefined });
    const swept = await duty.sweepNow();
    duty.stop();
    const raised = swept.stuck.find((s) => s.runId === run.runId);
    expect(raised?.created).toBe(true);
    const escalation = await prisma.escalation.findUniqueOrThrow({ where: { id: raised!.escalationId } });
    expect(escalation).toMatchObject({ kind: "STUCK_AFTER_PIVOT", stepId: null, status: "OPEN" });

    expect(await claimEscalation({ actor: rita, escalationId: escalation.id })).toMatchObject({ ok: true });
    const resolved = await resolveEscalation({ actor: rita, escalationId: escalation.id, kind: "STUCK_AFTER_PIVOT", decision: "commit_by_worker", note: "The agent crashed; commit what I approved." });
    expect(resolved).toMatchObject({ ok: true });
    const task = await prisma.workerTask.findFirstOrThrow({ where: { runId: run.runId, kind: "COMMIT_PLAN" } });
    expect(task.payload).toMatchObject({ pivotId: pivot.id });
    const events = await prisma.auditEvent.findMany({ where: { scope: `run:${run.runId}`, type: { in: ["task.enqueued", "escalation.resolved"] } } });
    expect(events.map((e) => [e.type, e.actor])).toEqual(
      expect.arrayContaining([
        ["task.enqueued", "user:rita@example.com"],
        ["escalation.resolved", "user:rita@example.com"],
      ]),
    );

    const worker = await createAgentToken(prisma, { name: "commit-worker", tools, role: "worker", createdBy: "admin@example.com" });
    const env = { SAGABOARD_URL: server.url, SAGABOARD_TOKEN: worker.secret };
    const [a, b] = await Promise.all([launchScript(WORKER, ["--once"], { ...env, SAGABOARD_WORKER_ID: "w-a" }).exit, launchScript(WORKER, ["--once"], { ...env, SAGABOARD_WORKER_ID: "w-b" }).exit]);
    expect(a.code, a.out).toBe(0);
    expect(b.code, b.out).toBe(0);
    expect((await prisma.workerTask.findUniqueOrThrow({ where: { id: task.id } })).status).toBe("DONE");
    expect((await prisma.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("COMPLETED");
    await expectOneEffectPerItem(run.runId, pivot);
  }, 180_000);

  it("refuses a pending, rejected or committed pivot, other arguments and a tool outside the scope, with a named 4xx and no row", async () => {
    const prisma = await getPrisma();
    const agentToken = await makeToken(["create_ticket", "send_email"], "bad-input-agent");
    const http = (runId: string, body: unknown, secret = agentToken.secret) =>
      fetch(`${server.url}/api/v1/runs/${runId}/calls`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const engine = new SagaEngine({ store: new HttpSagaStore({ baseUrl: server.url, token: agentToken.secret }), registry: createSupportToolRegistry(new RemoteWorld(server.url)) });
    const run = await engine.startRun({ title: "Bad input", agent: "bad-input-agent" });
    await run.call("create_ticket", { summary: "Staged", orderId: "9" });
    const mail = { to: "eve@example.com", subject: "Hello", body: "Hi." };
    const pivot = await run.requestPivot({ summary: "Email Eve", plan: [{ tool: "send_email", args: mail }] });
    const item = (args: unknown, index = 0) => ({ tool: "send_email", args, planItem: { pivotId: pivot.id, index } });
    const rows = async () => prisma.step.count({ where: { runId: run.runId } });
    const before = await rows();
    const codeOf = async (res: Response) => ({ status: res.status, code: ((await res.json()) as { error?: { code?: string } }).error?.code });

    expect(await codeOf(await http(run.runId, item(mail)))).toEqual({ status: 409, code: "PIVOT_NOT_APPROVED" });
    expect(await codeOf(await http(run.runId, { ...item(mail), cursor: 0 }))).toEqual({ status: 400, code: "VALIDATION_FAILED" });
    await (await dbEngine()).decidePivot(pivot.id, { approve: false, actor: reviewer, planHash: pivot.planHash, reason: "not now" });
    expect(await codeOf(await http(run.runId, item(mail)))).toEqual({ status: 409, code: "PIVOT_NOT_APPROVED" });

    const second = await run.requestPivot({ summary: "Email Eve, take two", plan: [{ tool: "send_email", args: { ...mail, body: "Hi again." } }] });
    await (await dbEngine()).decidePivot(second.id, { approve: true, actor: reviewer, planHash: second.planHash });
    const item2 = (args: unknown, index = 0) => ({ tool: "send_email", args, planItem: { pivotId: second.id, index } });
    expect(await codeOf(await http(run.runId, item2({ ...mail, to: "someone.else@elsewhere.example" })))).toEqual({ status: 409, code: "PLAN_ITEM_MISMATCH" });
    expect(await codeOf(await http(run.runId, item2({ ...mail, body: "Hi again." }, 5)))).toEqual({ status: 400, code: "INVALID_ARGS" });
    const narrow = await makeToken(["create_ticket"]);
    expect((await codeOf(await http(run.runId, item2({ ...mail, body: "Hi again." }), narrow.secret))).status).toBe(403);
    expect(await rows()).toBe(before);

    expect(await (await engine.resume(run.runId)).commitPlan(second.id)).toMatchObject({ status: "committed" });
    const after = await rows();
    expect(await codeOf(await http(run.runId, item2({ ...mail, body: "Hi again." })))).toEqual({ status: 409, code: "PLAN_ALREADY_COMMITTED" });
    expect(await rows()).toBe(after);
  }, 120_000);
});
