/**
 * Fault matrix, second pass: permissions changed mid-run. An agent drives a run over the HTTP API
 * (HttpSagaStore against the real route handlers, the simulated systems on a manual clock) and an
 * admin changes what it may do, either between two steps or while a call is in flight (after the
 * server answered "call", before the provider's effect: the charge's connector is wrapped to make the
 * change at that moment). On this run's store (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1).
 *
 *   token-revoked     the agent's token is revoked
 *   tool-disabled     charge_card is disabled in the tool table
 *   class-stricter    charge_card becomes IRREVERSIBLE (owner and correction template set)
 *   reviewer-demoted  a reviewer who opened the pivot loses the reviewer role before approving
 *
 * A token's scope is fixed when it is made (no product path narrows it: an admin revokes the token and
 * makes another), so "the scope loses a tool" is the token-revoked fault here.
 *
 * Between steps the run stops exactly there: the next call is refused (401, TOOL_DISABLED) or held,
 * no row and no effect for it. In flight, the effect is real: a change that does not take the step out of
 * the agent's hands (disabled, stricter) lets its outcome be recorded, CONFIRMED on the provider's id;
 * one that does (revoked) refuses the outcome and the step stays INTENDED, never guessed, until a
 * person unwinds the run from the dashboard, which reconciles it by key before refunding it. Every run
 * ends unwound by that person; the oracle counts the ledger (tests/faults/fault-matrix.ts). For a revoked
 * token the run page says the agent cannot go on, names the step left in flight, and says what to do.
 * Trials: SAGABOARD_FAULT_MATRIX_TRIALS (default 2 per fault and moment).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { requireUser, runWithSessionReader } from "@/lib/server/auth/current-user";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { SagaboardApiError } from "@/packages/client/src/agent/client/transport";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { approvePivot } from "@/lib/desks/pivots/approve-pivot";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";
import { getRunTimeline } from "@/lib/desks/runs/get-run-timeline";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { SagaError } from "@/packages/client/src/saga/errors";
import { RunStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import { World } from "@/lib/demo/sim";
import { revokeAgentToken } from "@/lib/server/tokens/revoke-agent-token";
import { editTool } from "@/lib/server/tools/edit-tool";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { createUser } from "@/lib/server/users/create-user";
import { setUserRole } from "@/lib/server/users/set-user-role";
import { startUserSession } from "@/lib/server/auth/user-sessions";
import { routeFetch } from "../support/api-router";
import { makeToken, useTestDatabase } from "../api/api-test-kit";
import { figuresFor, matrixLine, MATRIX_TRIALS, recordMatrixLine } from "./fault-matrix";

const getPrisma = useTestDatabase("fault-permissions");
const TOOLS = ["create_ticket", "charge_card", "create_email_draft", "send_email"];
const ADMIN = { type: "user" as const, id: "admin@example.com" };
const PERSON = { type: "user" as const, id: "rita@example.com" };
const clock = new ManualClock();
const world = new World({ clock, searchLagMs: 1500 });
const registry = createSupportToolRegistry(world);
let prisma: PrismaClient;
let viewerId: string;

type Change = "token-revoked" | "tool-disabled" | "class-stricter";
const CHANGES: Change[] = ["token-revoked", "tool-disabled", "class-stricter"];

beforeAll(async () => {
  prisma = await getPrisma();
  await syncToolPolicies(prisma, registry);
  viewerId = (await createUser(prisma, { email: `viewer-${process.pid}@example.com`, name: "Vi", role: "viewer", password: "correct horse battery", by: { type: "system", id: "test" } })).id;
});

/** The charge_card row back to what the connectors registered (a previous trial may have changed it). */
async function restoreChargeCard(): Promise<void> {
  const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "charge_card" } });
  if (row.status === "REVIEWED" && row.toolClass === "COMPENSATABLE") return;
  await editTool(prisma, { name: "charge_card", expectedVersion: row.policyVersion, changes: { status: "REVIEWED", toolClass: "COMPENSATABLE" }, reason: "next trial" }, ADMIN);
}

async function applyChange(change: Change, token: { name: string }): Promise<void> {
  const row = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "charge_card" } });
  switch (change) {
    case "token-revoked":
      await revokeAgentToken(prisma, { name: token.name, revokedBy: ADMIN.id });
      return;
    case "tool-disabled":
      await editTool(prisma, { name: "charge_card", expectedVersion: row.policyVersion, changes: { status: "DISABLED" }, reason: "fault matrix: disabled mid-run" }, ADMIN);
      return;
    case "class-stricter": {
      const result = await editTool(
        prisma,
        { name: "charge_card", expectedVersion: row.policyVersion, changes: { toolClass: "IRREVERSIBLE", owner: "payments-team", correctionSubject: "About the charge on your card", correctionBody: "We charged {{amount}} by mistake; it is being refunded." }, reason: "fault matrix: stricter mid-run" },
        ADMIN,
      );
      expect(result, JSON.stringify(result)).toMatchObject({ ok: true });
      return;
    }
  }
}

/** How the next call after the change must end. */
function expectStopped(change: Change, outcome: unknown, error: unknown): void {
  if (change === "class-stricter") {
    expect(error).toBeNull();
    expect(outcome).toMatchObject({ status: "approval_required" });
    return;
  }
  expect(outcome).toBeNull();
  const code = error instanceof SagaboardApiError || error instanceof SagaError ? error.code : String(error);
  const expected = { "token-revoked": ["UNAUTHORIZED"], "tool-disabled": ["TOOL_DISABLED"] }[change];
  expect(expected, `refusal code ${code}: ${String((error as Error | null)?.message)}`).toContain(code);
}

async function attempt<T>(fn: () => Promise<T>): Promise<{ outcome: T | null; error: unknown }> {
  try {
    return { outcome: await fn(), error: null };
  } catch (error) {
    return { outcome: null, error };
  }
}

/** One trial: a ticket, then the change, then a charge (`moment` says when the change lands). */
async function trial(change: Change, moment: "between" | "in-flight", n: number): Promise<string> {
  await restoreChargeCard();
  const token = await makeToken(TOOLS, `perm-${change}-${moment}-${n}-${process.pid}`);
  // Each outcome in its own request, recorded before the call returns: these look at the log right
  // after a call (tests/api/pipelined-calls.test.ts covers the client's default, outcome with the next call).
  const agent = new SagaEngine({ store: new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: routeFetch, outcomeLingerMs: 0 }), registry, clock, recheckAfterMs: 2000, backoffMs: 10 });
  const store = new PrismaSagaStore(prisma);
  const person = new SagaEngine({ store, registry, clock, recheckAfterMs: 2000, backoffMs: 10 });
  const run = await agent.startRun({ title: `${change} ${moment} ${n}`, agent: token.name });
  expect(await run.call("create_ticket", { summary: `Refund ${n}`, orderId: String(n) })).toMatchObject({ status: "ok" });
  const charge = { customerId: "cus_ada", amount: 1000 + n, currency: "eur", reason: `fee ${n}` };
  const chargesBefore = world.ledger.effects({ op: "payments.charge" }).length;

  if (moment === "between") {
    await applyChange(change, token);
    const { outcome, error } = await attempt(() => run.call("charge_card", charge));
    expectStopped(change, outcome, error);
    const steps = await store.listSteps(run.runId);
    expect(steps.map((s) => [s.tool, s.status]), "the run stopped right after the ticket").toEqual([["create_ticket", StepStatus.CONFIRMED]]);
    expect(world.ledger.effects({ op: "payments.charge" }).length - chargesBefore).toBe(0);
  } else {
    const payments = world.payments;
    const original = payments.charge;
    payments.charge = async (...args: Parameters<typeof original>) => {
      payments.charge = original;
      await applyChange(change, token);
      return original.apply(payments, args);
    };
    const { error } = await attempt(() => run.call("charge_card", charge));
    payments.charge = original;
    const effects = world.ledger.effects({ op: "payments.charge" }).slice(chargesBefore);
    expect(effects, "the provider charged once").toHaveLength(1);
    const step = (await store.listSteps(run.runId)).find((s) => s.tool === "charge_card")!;
    if (change === "token-revoked") {
      expect(error, "the outcome report is refused").not.toBeNull();
      expect(step.status, "left in flight, never guessed").toBe(StepStatus.INTENDED);
    } else {
      expect(error).toBeNull();
      expect(step).toMatchObject({ status: StepStatus.CONFIRMED, externalRef: effects[0]!.ref });
    }
    // And the agent's next call of it stops the run there too.
    const next = await attempt(() => run.call("charge_card", { ...charge, amount: charge.amount + 1 }));
    if (change === "class-stricter") expect(next.outcome).not.toMatchObject({ status: "ok", replayed: false });
    else expect(next.error ?? next.outcome).toBeTruthy();
    expect(world.ledger.effects({ op: "payments.charge" }).length - chargesBefore, "no second charge").toBe(1);
  }

  if (change === "token-revoked") {
    // The run page tells a person the agent is gone, what was left in flight, and what to do.
    const page = await runWithSessionReader(async () => viewerId, async () => getRunTimeline({ actor: await requireUser("read"), runId: run.runId }));
    expect(page.progress.waitingOn).toBe("person");
    expect(page.progress.expected).toMatch(/token was revoked.*Pull back the whole run/);
    if (moment === "in-flight") expect(page.progress.expected).toMatch(/step 2 \(charge_card\)/);
  }
  // A person unwinds the run from the dashboard: an in-flight step is reconciled by key first.
  const report = await person.unwind(run.runId, PERSON, `${change}: pulled back`);
  expect(report.compensationFailed.length + report.unresolved.length, JSON.stringify(report)).toBe(0);
  if (change === "class-stricter") {
    // The held charge waited for a person's decision; the unwind closes it, saying why, since the
    // run takes no more calls and no approval could ever send it.
    const open = await store.listEscalations({ runId: run.runId, status: ["OPEN", "CLAIMED"] });
    expect(open).toEqual([]);
    const closed = (await store.listEscalations({ runId: run.runId })).filter((e) => e.kind === "APPROVAL_REQUIRED");
    expect(closed.map((e) => e.resolution)).toEqual([expect.objectContaining({ approved: false, closedBecause: "run_unwound" })]);
  }
  expect(report.status).toBe(RunStatus.UNWOUND);
  const chargeStep = (await store.listSteps(run.runId)).find((s) => s.tool === "charge_card");
  if (chargeStep) expect(chargeStep.status, "a real charge is refunded").toBe(StepStatus.COMPENSATED);
  return run.runId;
}

async function fault(name: string, runTrial: (t: number) => Promise<string>): Promise<void> {
  const from = world.ledger.operations().length;
  const runIds: string[] = [];
  for (let t = 0; t < MATRIX_TRIALS; t++) runIds.push(await runTrial(t));
  const { figures, escalations } = await figuresFor(new PrismaSagaStore(prisma), world.ledger.operations().slice(from), runIds);
  const line = matrixLine({ name: `permissions-mid-run:${name}`, trials: MATRIX_TRIALS, figures, escalated: escalations.length });
  recordMatrixLine(line);
  expect(figures.violations, line).toEqual([]);
}

describe("permissions changed mid-run", () => {
  for (const change of CHANGES) {
    for (const moment of ["between", "in-flight"] as const) {
      it(`${change} ${moment}: the run stops at that point; an in-flight step is settled or left in flight, never guessed`, async () => {
        await fault(`${change}:${moment}`, (t) => trial(change, moment, 10 * CHANGES.indexOf(change) + (moment === "between" ? 0 : 5) + t));
      });
    }
  }

  it("reviewer-demoted: a reviewer who loses the role between opening and approving is refused; nothing runs", async () => {
    const store = new PrismaSagaStore(prisma);
    const person = new SagaEngine({ store, registry, clock, recheckAfterMs: 2000, backoffMs: 10 });
    await fault("reviewer-demoted", async (t) => {
      await restoreChargeCard();
      const run = await person.startRun({ title: `demoted ${t}`, agent: "fault-agent" });
      expect((await run.call("create_email_draft", { to: "bo@example.com", subject: `Order ${t}`, body: "Draft." })).status).toBe("ok");
      const mail = { to: "bo@example.com", subject: `Order ${t}`, body: "On its way." };
      const pivot = await run.requestPivot({ summary: "Tell Bo.", plan: [{ tool: "send_email", args: mail }] });
      const user = await createUser(prisma, { email: `rev-${t}-${Date.now()}@example.com`, name: "Rev", role: "reviewer", password: "correct horse battery", by: { type: "system", id: "test" } });
      const sessionId = await startUserSession(prisma, user.id);
      const as = <T,>(fn: () => Promise<T>) => runWithSessionReader(async () => ({ userId: user.id, sessionId }), fn);
      await as(async () => getPivotScreen({ actor: await requireUser("read"), pivotId: pivot.id }));
      await setUserRole(prisma, { email: user.email, role: "viewer", by: ADMIN });
      const refused = await as(async () => approvePivot({ actor: await requireUser("read"), pivotId: pivot.id, planHash: pivot.planHash })).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).code).toBe("FORBIDDEN");
      expect((await store.getPivot(pivot.id))?.status).toBe("PENDING");
      expect(world.ledger.effects({ op: "email.send" }).filter((e) => (e.args as { subject?: string }).subject === mail.subject)).toHaveLength(0);
      expect((await person.unwind(run.runId, PERSON, "nobody may approve")).status).toBe(RunStatus.UNWOUND);
      return run.runId;
    });
  });
});
