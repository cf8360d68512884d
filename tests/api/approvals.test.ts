/**
 * Approvals outside the one-reviewer dashboard path, on a real database (SQLite, or PostgreSQL with
 * SAGABOARD_TEST_PG=1) and the simulated systems this process hosts: a plan holding a tool whose row
 * asks for two approvers is decided by the second of two different people (the first recorded and
 * shown, the same person twice refused), and the approved plan's email is sent once.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { seedSupportToolTable } from "@/lib/demo/seed/support-tool-table";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { approvePivot } from "@/lib/desks/pivots/approve-pivot";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";
import { SagaEngine } from "@/lib/saga/engine";
import type { CurrentUser } from "@/lib/server/auth/current-user";
import { editTool } from "@/lib/server/tools/edit-tool";
import { createUser } from "@/lib/server/users/create-user";
import { useTestDatabase } from "./api-test-kit";

process.env.SAGABOARD_SIM_SEARCH_LAG_MS = "0";
const getPrisma = useTestDatabase("approvals");
const by = { type: "system" as const, id: "test" };
let n = 0;

async function person(role: "reviewer" | "admin" | "viewer", name: string): Promise<CurrentUser> {
  const user = await createUser(await getPrisma(), { email: `${name}-${++n}-${Date.now().toString(36)}@example.com`, name, role, password: "correct horse battery", by });
  return { id: user.id, email: user.email, name: user.name, role };
}

async function engine(): Promise<SagaEngine> {
  return new SagaEngine({ store: new PrismaSagaStore(await getPrisma()), registry: createSupportToolRegistry(getHostedWorld()), recheckAfterMs: 50, backoffMs: 5 });
}

/** A run waiting at a pivot whose plan sends one email to `to`. */
async function waitingPivot(to: string) {
  const e = await engine();
  const run = await e.startRun({ title: `Reship for ${to}`, agent: "support-agent", onBehalfOf: to });
  const letter = { to, subject: "Your replacement is on its way", body: "We re-shipped order 2001." };
  await run.call("create_email_draft", letter);
  const pivot = await run.requestPivot({ summary: `Email ${to} about the reship.`, plan: [{ tool: "send_email", args: letter }] });
  return { run, pivot, e };
}

beforeAll(async () => {
  resetHostedWorld({ searchLagMs: 0 });
  const prisma = await getPrisma();
  await seedSupportToolTable(prisma, createSupportToolRegistry(getHostedWorld()));
  // An admin says send_email needs two approvers (a new policy version, like any edit of the row).
  const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "send_email" } });
  const edited = await editTool(prisma, { name: "send_email", expectedVersion: row.policyVersion, changes: { twoApprovers: true }, reason: "customer emails need two people" }, { type: "user", id: "admin@example.com" });
  expect(edited).toMatchObject({ ok: true, changed: ["two approvers"] });
});

describe("two approvers", () => {
  it("records the first approval, refuses the same person twice, and the second person's approval commits the plan once", async () => {
    const [rita, rob] = [await person("reviewer", "rita"), await person("reviewer", "rob")];
    const to = `two-${Date.now().toString(36)}@example.com`;
    const { run, pivot } = await waitingPivot(to);

    const first = await approvePivot({ actor: rita, pivotId: pivot.id, planHash: pivot.planHash });
    expect(first).toMatchObject({ ok: false, reason: "second_approver_needed", approvals: { needed: 2, twoApproverTools: ["send_email"], given: [{ by: rita.email, via: "dashboard" }] } });
    const screen = await getPivotScreen({ actor: rob, pivotId: pivot.id });
    expect(screen.pivot.status).toBe("PENDING");
    expect(screen.approvals.given.map((g) => g.by)).toEqual([rita.email]);

    const again = await approvePivot({ actor: rita, pivotId: pivot.id, planHash: pivot.planHash });
    expect(again).toMatchObject({ ok: false, reason: "same_approver" });
    expect((await getPivotScreen({ actor: rob, pivotId: pivot.id })).pivot.status).toBe("PENDING");

    const second = await approvePivot({ actor: rob, pivotId: pivot.id, planHash: pivot.planHash });
    expect(second).toMatchObject({ ok: true, pivot: { status: "APPROVED", decidedBy: rob.email } });
    await run.commitPlan(pivot.id);
    expect(getHostedWorld().ledger.effects({ op: "email.send" }).filter((x) => (x.args as { to?: string }).to === to)).toHaveLength(1);

    const prisma = await getPrisma();
    const events = await prisma.auditEvent.findMany({ where: { scope: `run:${run.runId}`, type: { in: ["pivot.approval_recorded", "pivot.approved"] } }, orderBy: { seq: "asc" } });
    expect(events.map((e) => [e.type, e.actor])).toEqual([
      ["pivot.approval_recorded", `user:${rita.email}`],
      ["pivot.approval_recorded", `user:${rob.email}`],
      ["pivot.approved", `user:${rob.email}`],
    ]);
  });

  it("a plan revised after the first approval needs two approvals of the new plan", async () => {
    const [rita, rob] = [await person("reviewer", "rita"), await person("reviewer", "rob")];
    const to = `revised-${Date.now().toString(36)}@example.com`;
    const { run, pivot } = await waitingPivot(to);
    expect(await approvePivot({ actor: rita, pivotId: pivot.id, planHash: pivot.planHash })).toMatchObject({ reason: "second_approver_needed" });
    // The agent revises the plan: the same pivot, a new hash; Rita's approval was of the old plan.
    const letter = { to, subject: "Your replacement ships Tuesday", body: "We re-shipped order 2001." };
    const revised = await run.requestPivot({ summary: `Email ${to}, corrected.`, plan: [{ tool: "send_email", args: letter }] });
    expect(revised.id).toBe(pivot.id);
    expect(revised.planHash).not.toBe(pivot.planHash);
    expect(await approvePivot({ actor: rob, pivotId: pivot.id, planHash: revised.planHash })).toMatchObject({ ok: false, reason: "second_approver_needed", approvals: { given: [{ by: rob.email }] } });
    expect(await approvePivot({ actor: rita, pivotId: pivot.id, planHash: revised.planHash })).toMatchObject({ ok: true, pivot: { status: "APPROVED" } });
  });

  it("a plan without a two-approver tool is decided by one approval, as before", async () => {
    const rita = await person("reviewer", "rita");
    const e = await engine();
    const run = await e.startRun({ title: "One approver", agent: "support-agent", onBehalfOf: "bo@example.com" });
    await run.call("create_ticket_draft", { summary: "Reship order 2001", orderId: "2001" });
    const pivot = await run.requestPivot({ summary: "Open the ticket.", plan: [{ tool: "create_ticket", args: { summary: "Reship order 2001", orderId: "2001" } }] });
    expect(await approvePivot({ actor: rita, pivotId: pivot.id, planHash: pivot.planHash })).toMatchObject({ ok: true, pivot: { status: "APPROVED", decidedBy: rita.email } });
    expect(await (await getPrisma()).pivotApproval.count({ where: { pivotId: pivot.id } })).toBe(0);
  });
});
