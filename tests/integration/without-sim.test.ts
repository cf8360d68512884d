/**
 * The dashboard with the simulated systems off (SAGABOARD_SIM unset, as in a real deployment): the
 * server holds no connector, so no screen may reach into the demo. Runs are recorded by an agent
 * whose connectors run elsewhere (here: in this test, over its own simulated world); the screens read
 * the log and the tool table only. Also: which system a tool belongs to is the tool table's data.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { serverToolRegistry } from "@/lib/demo/connectors/server-connectors";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { checkRealSystem, getRealSystemCheck } from "@/lib/desks/escalations/check-real-system";
import { claimEscalation } from "@/lib/desks/escalations/claim-escalation";
import { findEscalations } from "@/lib/desks/escalations/find-escalations";
import { getEscalation } from "@/lib/desks/escalations/get-escalation";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { findRuns } from "@/lib/desks/runs/find-runs";
import { getRunTimeline } from "@/lib/desks/runs/get-run-timeline";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import type { WorldLike } from "@/lib/demo/sim/remote";
import { World } from "@/lib/demo/sim/world";
import { findTools } from "@/lib/server/tools/find-tools";
import { fillToolSystems } from "@/lib/server/tools/fill-tool-systems";
import { prismaTaskQueue } from "@/lib/server/worker/queue";
import { Worker } from "@/packages/client/src/agent/worker";
import { useTestDatabase } from "../api/api-test-kit";

/** The reviewer who works the dashboard in this file. */
const rina = { id: "usr_rina", email: "rina@example.com", name: "Rina Reviewer", role: "reviewer" as const };

const getPrisma = useTestDatabase("nosim");
const previous = process.env.SAGABOARD_SIM;
/** The agent's own world: the server never sees it. */
const world = new World({ searchLagMs: 0 });

beforeAll(async () => {
  delete process.env.SAGABOARD_SIM;
  const prisma = await getPrisma();
  await prisma.user.create({ data: { ...rina } });
});

afterAll(() => {
  if (previous === undefined) delete process.env.SAGABOARD_SIM;
  else process.env.SAGABOARD_SIM = previous;
});

async function agentEngine(): Promise<SagaEngine> {
  return new SagaEngine({ store: new PrismaSagaStore(await getPrisma()), registry: createSupportToolRegistry(world), recheckAfterMs: 10, backoffMs: 1 });
}

describe("with SAGABOARD_SIM off", () => {
  it("the server holds no connector", () => {
    expect(serverToolRegistry().list()).toEqual([]);
    expect(serverToolRegistry({ SAGABOARD_SIM: "1" }).has("charge_card")).toBe(true);
  });

  it("the runs list, a run's timeline, the pivot screen, the tool table and the queue all answer", async () => {
    const prisma = await getPrisma();
    await syncToolPolicies(prisma, createSupportToolRegistry(world));
    // The tool table says where each tool's effects live; one row says something the names would not.
    await fillToolSystems(prisma, { create_email_draft: "email", create_ticket_draft: "jira", authorize_payment: "stripe" });
    const run = await (await agentEngine()).startRun({ title: "Reship order 2001", agent: "support-agent", onBehalfOf: "bo@example.com" });
    await run.call("create_email_draft", { to: "bo@example.com", subject: "Your replacement", body: "We re-shipped order 2001." });
    await run.call("create_ticket_draft", { summary: "Reship order 2001", orderId: "2001" });
    await run.call("authorize_payment", { customerId: "cus_bo", amount: 1800, currency: "eur" });
    const pivot = await run.requestPivot({ summary: "Reship and charge", plan: [{ tool: "send_email", args: { to: "bo@example.com", subject: "Shipped", body: "On its way." } }] });
    expect(pivot.status).toBe("PENDING");

    const screen = await getPivotScreen({ actor: rina, pivotId: pivot.id });
    expect(screen.staged.map((s) => [s.tool, s.system])).toEqual([
      ["create_email_draft", "email"],
      ["create_ticket_draft", "jira"],
      ["authorize_payment", "stripe"],
    ]);
    expect(screen.bySystem.map((g) => g.system)).toEqual(["email", "jira", "stripe"]);
    expect(screen.plan.map((i) => i.system)).toEqual(["other"]); // send_email's row names none: nothing is guessed from its name

    expect((await findRuns({ actor: rina })).runs.map((r) => r.id)).toContain(run.runId);
    expect((await getRunTimeline({ actor: rina, runId: run.runId })).steps).toHaveLength(3);
    expect((await findTools({ actor: rina })).tools.find((t) => t.name === "create_ticket_draft")?.system).toBe("jira");
  });

  it("'check the real system' asks a worker that holds the tool's connector, and shows its answer (the server never reaches into the demo)", async () => {
    const e = await agentEngine();
    const run = await e.startRun({ title: "Ticket with a timeout", agent: "support-agent", onBehalfOf: "ada@example.com" });
    world.faults.inject("ticketing.create", { kind: "timeout_after_effect" });
    await expect(run.call("create_ticket", { summary: "Price match order 1182", orderId: "1182" })).rejects.toBeInstanceOf(ToolOutcomeUnknown);
    const prisma = await getPrisma();
    const store = new PrismaSagaStore(prisma);
    const [step] = await store.listSteps(run.runId);
    // The agent's lookup is down too, so reconcile escalates the outcome to a person.
    const broken = { searchByLabel: () => Promise.reject(new Error("JQL search is down (503)")) } as unknown as WorldLike["ticketing"];
    const lookupDown = createSupportToolRegistry({ payments: world.payments, ticketing: broken, email: world.email, warehouse: world.warehouse, crm: world.crm });
    await new SagaEngine({ store, registry: lookupDown, recheckAfterMs: 10, backoffMs: 1 }).reconcile(step!.id);
    const escalation = (await store.listEscalations({ runId: run.runId })).find((x) => x.kind === "OUTCOME_UNKNOWN");
    if (!escalation) throw new Error("reconcile escalated the unknown outcome");

    // The queue names the system the tool table gives (not one guessed from the tool's name).
    await fillToolSystems(prisma, { create_ticket: "jira" });
    expect((await findEscalations({ actor: rina })).items.find((i) => i.id === escalation.id)?.system).toBe("jira");
    expect((await getEscalation({ actor: rina, escalationId: escalation.id })).escalation).toMatchObject({ id: escalation.id, system: "jira" });
    await claimEscalation({ actor: rina, escalationId: escalation.id });
    expect(await getRealSystemCheck({ actor: rina, escalationId: escalation.id })).toEqual({ state: "none" });

    // No connector here: the check becomes a LOOKUP task for a worker holding create_ticket.
    const asked = await checkRealSystem({ actor: rina, escalationId: escalation.id });
    expect(asked).toMatchObject({ state: "waiting", tool: "create_ticket", system: "jira", askedBy: `user:${rina.email}`, claimedBy: null });
    if (asked.state !== "waiting") throw new Error("asked a worker");
    expect(await checkRealSystem({ actor: rina, escalationId: escalation.id })).toMatchObject({ state: "waiting", taskId: asked.taskId }); // asked once, not twice
    const task = await prisma.workerTask.findUniqueOrThrow({ where: { id: asked.taskId } });
    expect([task.kind, task.stepId, task.tools]).toEqual(["LOOKUP", step!.id, ["create_ticket"]]);

    // A worker that holds other tools leaves it; the agent team's worker (its search is back up) answers.
    const elsewhere = new Worker({ queue: prismaTaskQueue(prisma), engine: await agentEngine(), workerId: "payments-worker", tools: ["charge_card"] });
    expect(await elsewhere.runOnce()).toEqual([]);
    const worker = new Worker({ queue: prismaTaskQueue(prisma), engine: await agentEngine(), workerId: "ticketing-worker", tools: ["create_ticket"] });
    expect((await worker.runOnce()).map((o) => o.outcome)).toEqual(["done"]);

    const [effect] = world.ledger.effects({ op: "ticketing.create", key: step!.stepKey });
    const answer = await getRealSystemCheck({ actor: rina, escalationId: escalation.id });
    expect(answer).toMatchObject({ state: "checked", check: { found: true, externalRef: effect!.ref, system: "jira", stepKey: step!.stepKey, checkedBy: "ticketing-worker", error: null } });
    // Nothing changed: the step is still UNKNOWN until the person settles it.
    expect((await store.getStep(step!.id))?.status).toBe("UNKNOWN");
    expect(world.ledger.effects({ op: "ticketing.create", key: step!.stepKey })).toHaveLength(1);
  });
});
