/**
 * GET /api/metrics: scraped before and after a scripted set of runs driven through the agent API (the
 * seed-003 incident with a crash, an unknown outcome, a refusal and an unwind; a refund the provider
 * refuses; an irreversible call held until a reviewer approves its pivot). Each figure must move by
 * exactly what the saga log's rows say happened, and by what the script did; the latency histogram
 * by the requests the agent sent; an anonymous caller is refused.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { createWebhook } from "@/lib/server/notifications/create-webhook";
import { Notifier } from "@/lib/server/notifications/notifier";
import { webhookTargetPolicy } from "@/lib/server/notifications/webhook-target";
import { sweepStuckRuns } from "@/lib/server/worker/sweep-stuck-runs";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { CrashPoints } from "@/packages/client/src/saga/crash-points";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { World } from "@/lib/demo/sim";
import { playSeed003 } from "../support/support-agent";
import { requestCounts, routeFetch } from "../support/api-router";
import { makeToken, useTestDatabase } from "./api-test-kit";
import * as metricsRoute from "@/app/api/metrics/route";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const getPrisma = useTestDatabase("metrics");
const TOKEN = "scrape-secret-for-this-test";
const reviewer = { type: "user" as const, id: "rita@example.com" };

afterEach(() => {
  delete process.env.SAGABOARD_METRICS_TOKEN;
});

async function scrapeResponse(authorization?: string): Promise<Response> {
  return metricsRoute.GET(new Request("http://localhost/api/metrics", { headers: authorization ? { authorization } : {} }));
}

/** The scrape as `name{labels}` -> value (labels in the order written). */
async function scrape(): Promise<Map<string, number>> {
  const response = await scrapeResponse(`Bearer ${TOKEN}`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain; version=0.0.4");
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

const moved = (before: Map<string, number>, after: Map<string, number>, key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
const requests = (key: string) => requestCounts.get(key) ?? 0;

describe("the metrics endpoint", () => {
  it("is off without a token, and refuses a caller without the right one", async () => {
    expect((await scrapeResponse(`Bearer ${TOKEN}`)).status).toBe(404);
    process.env.SAGABOARD_METRICS_TOKEN = TOKEN;
    const anonymous = await scrapeResponse();
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toContain("Bearer");
    expect((await scrapeResponse("Bearer not-the-token")).status).toBe(401);
    expect((await scrapeResponse(`Basic ${TOKEN}`)).status).toBe(401);
    expect((await scrapeResponse(`Bearer ${TOKEN}`)).status).toBe(200);
  });

  it("moves each figure by exactly the events the saga log's rows record", async () => {
    process.env.SAGABOARD_METRICS_TOKEN = TOKEN;
    const prisma = await getPrisma();
    const clock = new ManualClock();
    const world = new World({ clock, searchLagMs: 1500 });
    const registry = createSupportToolRegistry(world);
    await syncToolPolicies(prisma, registry);
    const token = await makeToken(["search_orders", "create_ticket", "charge_card", "reship_order", "send_email"]);
    const crashPoints = new CrashPoints();
    // Each outcome in its own request, recorded before the call returns: these look at the log right
    // after a call (tests/api/pipelined-calls.test.ts covers the client's default, outcome with the next call).
    const store = new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: routeFetch, outcomeLingerMs: 0 });
    const engine = () => new SagaEngine({ store, registry, clock, crashPoints, recheckAfterMs: 2000, backoffMs: 10 });
    const server = new ReviewerEngine({ store: new PrismaSagaStore(prisma), registry, clock });

    const before = await scrape();
    const beginsBefore = requests("POST /api/v1/runs/:runId/calls");
    const outcomesBefore = requests("POST /api/v1/steps/:stepId/outcome");

    // 1. Seed 003: the ticket's outcome is unknown (reconciled), the charge crashes after its effect
    //    (resumed), the reship is refused, and the unwind compensates the ticket and the charge.
    const first = await playSeed003(world, engine, "x");
    expect(first.report).toMatchObject({ status: "UNWOUND" });

    // 2. A charge whose refund the provider refuses: the compensation fails and a person is asked.
    const second = await engine().startRun({ title: "Charge, then a refused refund", agent: "x" });
    await second.call("charge_card", { customerId: "cus_bob", amount: 900, currency: "eur", reason: "fee", receipt: false });
    world.faults.inject("payments.refund", { kind: "reject", status: 402, code: "insufficient_balance" });
    expect(await second.unwind("changed our mind")).toMatchObject({ status: "NEEDS_ATTENTION" });

    // 3. An irreversible email held, then approved at the pivot and sent; the agent then goes quiet
    //    (a stuck run), and the webhook told of the waiting pivot cannot be reached (a failed delivery).
    await createWebhook(prisma, { name: "metrics-hook", url: "http://127.0.0.1:9/hook", topics: ["pivot_waiting"], createdBy: "admin@example.com", targetPolicy: { ...webhookTargetPolicy(), allowPrivate: true } });
    const third = await engine().startRun({ title: "Apology", agent: "x" });
    const mail = { to: "ada@example.com", subject: "Sorry", body: "Your order is on its way." };
    expect(await third.call("send_email", mail)).toMatchObject({ status: "approval_required" });
    const pivot = await third.requestPivot({ summary: "Send the apology.", plan: [{ tool: "send_email", args: mail }] });
    await server.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    expect(await third.call("send_email", mail)).toMatchObject({ status: "ok" });
    const notifier = new Notifier({ prisma, store: new PrismaSagaStore(prisma), notifierId: "n-metrics", mailer: null, baseUrl: "http://sagaboard.test", slas: false, maxAttempts: 1 });
    expect((await notifier.runOnce()).attempts.map((a) => a.ok)).toEqual([false]);
    await new Promise((r) => setTimeout(r, 400)); // quiet for longer than the threshold below, by the database's clock
    expect((await sweepStuckRuns({ prisma, store: new PrismaSagaStore(prisma), workerId: "w-metrics", stuckAfterMs: 300 })).stuck.map((r) => r.runId)).toEqual([third.runId]);

    const after = await scrape();
    const runIds = [first.runId, second.runId, third.runId];

    // Calls by tool and class: the step rows of these runs, and what the script did.
    const steps = await prisma.step.findMany({ where: { runId: { in: runIds } } });
    const byTool = new Map<string, { cls: string; n: number }>();
    for (const s of steps) byTool.set(s.tool, { cls: s.toolClass.toLowerCase(), n: (byTool.get(s.tool)?.n ?? 0) + 1 });
    expect(Object.fromEntries([...byTool].map(([t, v]) => [t, v.n]))).toEqual({ create_ticket: 1, charge_card: 2, reship_order: 1, send_email: 1 });
    for (const [tool, { cls, n }] of byTool) expect(moved(before, after, `sagaboard_tool_calls_total{tool="${tool}",class="${cls}"}`), tool).toBe(n);
    for (const s of steps) {
      const count = steps.filter((o) => o.tool === s.tool && o.status === s.status).length;
      expect(moved(before, after, `sagaboard_tool_call_outcomes{tool="${s.tool}",class="${s.toolClass.toLowerCase()}",outcome="${s.status.toLowerCase()}"}`)).toBe(count);
    }

    // Compensations: requested before each compensator call, confirmed by reading back, or failed.
    const comp = (state: string) => steps.filter((s) => s.compensationState === state).length;
    expect([comp("CONFIRMED"), comp("FAILED"), comp("REQUESTED")]).toEqual([2, 1, 0]);
    expect(moved(before, after, "sagaboard_compensations_requested_total")).toBe(comp("CONFIRMED") + comp("FAILED"));
    expect(moved(before, after, "sagaboard_compensations_confirmed")).toBe(2);
    expect(moved(before, after, "sagaboard_compensations_failed")).toBe(1);
    expect(after.get("sagaboard_steps_unknown")).toBe(await prisma.step.count({ where: { status: "UNKNOWN" } }));

    // Escalations raised and open, by kind, against their rows.
    const escalations = await prisma.escalation.findMany({ where: { runId: { in: runIds } } });
    for (const kind of ["COMPENSATION_FAILED", "APPROVAL_REQUIRED", "OUTCOME_UNKNOWN", "STUCK_AFTER_PIVOT"]) {
      const rows = escalations.filter((e) => e.kind === kind);
      expect(moved(before, after, `sagaboard_escalations_raised_total{kind="${kind.toLowerCase()}"}`), kind).toBe(rows.length);
      expect(moved(before, after, `sagaboard_escalations_open{kind="${kind.toLowerCase()}"}`), kind).toBe(rows.filter((e) => e.status !== "RESOLVED").length);
    }
    expect(escalations.filter((e) => e.kind === "COMPENSATION_FAILED" && e.status === "OPEN")).toHaveLength(1);
    expect(escalations.filter((e) => e.kind === "APPROVAL_REQUIRED")).toHaveLength(1);

    // The pivot: decided once; its time from request to decision is the row's, in its bucket only.
    const decided = await prisma.pivot.findUniqueOrThrow({ where: { id: pivot.id } });
    const seconds = (decided.decidedAt!.getTime() - decided.createdAt.getTime()) / 1000;
    expect(moved(before, after, 'sagaboard_pivot_decision_seconds_count{decision="approved"}')).toBe(1);
    expect(moved(before, after, 'sagaboard_pivot_decision_seconds_sum{decision="approved"}')).toBeCloseTo(seconds, 6);
    const bounds = [60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 129600];
    for (const le of bounds) expect(moved(before, after, `sagaboard_pivot_decision_seconds_bucket{decision="approved",le="${le}"}`), `le ${le}`).toBe(seconds <= le ? 1 : 0);
    expect(after.get("sagaboard_pivots_waiting")).toBe(0);

    expect(moved(before, after, "sagaboard_runs_stuck")).toBe(1);
    const failedDeliveries = await prisma.notificationDelivery.count({ where: { channel: "webhook", status: "FAILED" } });
    expect(failedDeliveries).toBe(1);
    expect(moved(before, after, 'sagaboard_notification_deliveries{channel="webhook",status="failed"}')).toBe(failedDeliveries);

    // Runs by status, against the rows.
    for (const status of ["UNWOUND", "NEEDS_ATTENTION", "COMPLETED", "RUNNING"]) {
      const n = await prisma.run.count({ where: { id: { in: runIds }, status } });
      expect(moved(before, after, `sagaboard_runs{status="${status.toLowerCase()}"}`), status).toBe(n);
    }

    // The hot path's histogram counted every intent and outcome request the agent sent, once.
    const begins = requests("POST /api/v1/runs/:runId/calls") - beginsBefore;
    const outcomes = requests("POST /api/v1/steps/:stepId/outcome") - outcomesBefore;
    expect(begins).toBeGreaterThanOrEqual(steps.length);
    expect(moved(before, after, 'sagaboard_agent_api_request_duration_seconds_count{operation="beginCall"}')).toBe(begins);
    expect(moved(before, after, 'sagaboard_agent_api_request_duration_seconds_count{operation="reportOutcome"}')).toBe(outcomes);
    expect(after.get('sagaboard_agent_api_request_duration_seconds_bucket{operation="beginCall",le="+Inf"}')).toBe(after.get('sagaboard_agent_api_request_duration_seconds_count{operation="beginCall"}'));
  });

  it("serves every metric the Grafana dashboard in docs/ reads", async () => {
    process.env.SAGABOARD_METRICS_TOKEN = TOKEN;
    const text = await (await scrapeResponse(`Bearer ${TOKEN}`)).text();
    const families = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) => (type === "histogram" ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!])));
    const dashboard = readFileSync("docs/grafana-saga-health.json", "utf8");
    const read = new Set([...dashboard.matchAll(/\bsagaboard_[a-z_]+/g)].map(([name]) => name));
    expect(read.size).toBeGreaterThan(10);
    expect([...read].filter((name) => !families.has(name))).toEqual([]);
  });
});
