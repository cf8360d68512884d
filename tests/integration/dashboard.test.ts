/**
 * The reviewer dashboard's use cases (lib/desks/dashboard, lib/desks/runs) against a real database (SQLite, or
 * PostgreSQL in the SAGABOARD_TEST_PG=1 run) and the simulated systems this process hosts: pivot
 * decisions bound to the plan hash, claim-once, only the claimer resolves, viewers change nothing,
 * and "check the real system" / settle-with-evidence.
 * The signed-in user is chosen per call by mocking `@/lib/server/auth/current-user`; the permission map is
 * the real one (lib/server/auth/roles).
 */
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ZodError } from "zod";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { EscalationKind } from "@/packages/client/src/saga/vocabulary";
import { type RunContext } from "@/packages/client/src/saga/run-context";
import { ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import { auditHash } from "@/packages/client/src/saga/keys";
import { auditHashedContent, GENESIS_HASH, type AuditEventRecord } from "@/packages/client/src/saga/store";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import type { WorldLike } from "@/lib/demo/sim/remote";
import { approvePivot } from "@/lib/desks/pivots/approve-pivot";
import { checkRealSystem } from "@/lib/desks/escalations/check-real-system";
import type { TRealSystemCheck, TRealSystemCheckState } from "@/lib/desks/escalations/views";
import { claimEscalation } from "@/lib/desks/escalations/claim-escalation";
import { findEscalations } from "@/lib/desks/escalations/find-escalations";
import { getEscalation } from "@/lib/desks/escalations/get-escalation";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";
import { rejectPivot } from "@/lib/desks/pivots/reject-pivot";
import { releaseEscalation } from "@/lib/desks/escalations/release-escalation";
import { resolveEscalation } from "@/lib/desks/escalations/resolve-escalation";
import { findRuns } from "@/lib/desks/runs/find-runs";
import { POST as approveRoute } from "@/app/api/dashboard/pivots/[pivotId]/approve/route";
import { GET as findRunsRoute } from "@/app/api/dashboard/runs/route";
import { call, useTestDatabase } from "../api/api-test-kit";
import type { CurrentUser } from "@/lib/server/auth/current-user";
import { seedSupportToolTable } from "@/lib/demo/seed/support-tool-table";

process.env.SAGABOARD_SIM_SEARCH_LAG_MS = "0";

/** Who the routes' `requireUser` returns, and who `me()` passes to a use case (read when the call is made, so concurrent calls can differ). */
const auth = vi.hoisted(() => ({ user: null as null | { id: string; email: string; name: string; role: "admin" | "reviewer" | "support" | "viewer" } }));

vi.mock("@/lib/server/auth/current-user", async (importOriginal) => {
  const { ApiError: Err } = await import("@/packages/client/src/protocol/errors");
  const { can } = await import("@/lib/server/auth/roles");
  return {
    ...(await importOriginal<typeof import("@/lib/server/auth/current-user")>()),
    requireUser: (action: Parameters<typeof can>[1]) => {
      const user = auth.user;
      if (!user) return Promise.reject(new Err("UNAUTHORIZED", "Sign in first."));
      if (!can(user.role, action)) return Promise.reject(new Err("FORBIDDEN", `Your role (${user.role}) cannot do ${action}.`));
      return Promise.resolve(user);
    },
    requirePageUser: () => Promise.resolve({ user: auth.user, denied: null }),
  };
});

const getPrisma = useTestDatabase("dashboard");

const rita = { id: "usr_rita", email: "rita@example.com", name: "Rita Reviewer", role: "reviewer" as const };
const rob = { id: "usr_rob", email: "rob@example.com", name: "Rob Reviewer", role: "reviewer" as const };
const vic = { id: "usr_vic", email: "vic@example.com", name: "Vic Viewer", role: "viewer" as const };

function as(user: typeof rita | typeof rob | typeof vic): void {
  auth.user = user;
}

/** The person `as` chose, passed to each use case as the route would pass the session's person. */
function me(): CurrentUser {
  if (!auth.user) throw new Error("say who acts first: as(rita)");
  return auth.user;
}

const apology = { to: "bo@example.com", subject: "Your replacement is on its way", body: "We re-shipped order 2001." };

async function engine(registry = createSupportToolRegistry(getHostedWorld())): Promise<SagaEngine> {
  return new SagaEngine({ store: new PrismaSagaStore(await getPrisma()), registry, recheckAfterMs: 50, backoffMs: 5 });
}

async function stage(run: RunContext): Promise<string> {
  await run.call("create_email_draft", apology);
  await run.call("create_ticket_draft", { summary: "Reship order 2001", orderId: "2001" });
  const auth = await run.call("authorize_payment", { customerId: "cus_bo", amount: 1800, currency: "eur" });
  if (auth.status !== "ok") throw new Error("an authorisation stages freely");
  return (auth.result as { paymentIntentId: string }).paymentIntentId;
}

/** Problems with a run's audit chain: seq gaps, broken links, hashes that do not match content. */
function chainProblems(events: readonly AuditEventRecord[]): string[] {
  const problems: string[] = [];
  let prev = GENESIS_HASH;
  events.forEach((e, i) => {
    if (e.seq !== i + 1) problems.push(`event ${i + 1} has seq ${e.seq}`);
    if (e.prevHash !== prev) problems.push(`event ${e.seq} (${e.type}) does not link to the previous one`);
    if (auditHash(e.prevHash, auditHashedContent(e)) !== e.hash) problems.push(`event ${e.seq} (${e.type}): hash does not match content`);
    prev = e.hash;
  });
  return problems;
}

/** A registry whose ticketing lookups fail, so reconcile escalates instead of settling. */
function registryWithBrokenTicketSearch() {
  const world = getHostedWorld();
  const broken = { searchByLabel: () => Promise.reject(new Error("JQL search is down (503)")) } as unknown as WorldLike["ticketing"];
  return createSupportToolRegistry({ payments: world.payments, ticketing: broken, email: world.email, warehouse: world.warehouse, crm: world.crm });
}

/** A create_ticket step left UNKNOWN by `fault`, escalated as OUTCOME_UNKNOWN because the lookup is down. */
async function unknownTicket(fault: "timeout_after_effect" | "timeout_before_effect") {
  const e = await engine();
  const run = await e.startRun({ title: `Ticket with ${fault}`, agent: "support-agent", onBehalfOf: "ada@example.com" });
  getHostedWorld().faults.inject("ticketing.create", { kind: fault });
  await expect(run.call("create_ticket", { summary: "Price match order 1182", orderId: "1182" })).rejects.toBeInstanceOf(ToolOutcomeUnknown);
  const store = new PrismaSagaStore(await getPrisma());
  const [step] = await store.listSteps(run.runId);
  if (!step) throw new Error("the intent was logged");
  await (await engine(registryWithBrokenTicketSearch())).reconcile(step.id);
  const [escalation] = await store.listEscalations({ runId: run.runId });
  if (!escalation) throw new Error("reconcile escalated");
  expect(escalation.kind).toBe("OUTCOME_UNKNOWN");
  return { runId: run.runId, step, escalation, store };
}

beforeAll(async () => {
  resetHostedWorld({ searchLagMs: 0 });
  const prisma = await getPrisma();
  for (const u of [rita, rob, vic]) await prisma.user.create({ data: { ...u } });
  await seedSupportToolTable(prisma, createSupportToolRegistry(getHostedWorld()));
});

beforeEach(() => {
  auth.user = null;
});

describe("pivot decisions", () => {
  it("shows staged effects by system and audience, the plan with policy versions, and binds approval to the plan hash", async () => {
    const e = await engine();
    const run = await e.startRun({ title: "Reship order 2001", agent: "support-agent", onBehalfOf: "bo@example.com" });
    const paymentIntentId = await stage(run);
    const deadline = new Date(Date.now() + 3 * 24 * 3600 * 1000);
    const first = await run.requestPivot({
      summary: "Capture the hold and email Bo.",
      plan: [
        { tool: "capture_payment", args: { paymentIntentId, amount: 1800 } },
        { tool: "send_email", args: apology },
      ],
      deadline,
    });

    as(rita);
    const screen = await getPivotScreen({ actor: me(), pivotId: first.id });
    expect(screen.abilities.canDecide).toBe(true);
    expect(screen.staged.map((s) => [s.tool, s.system])).toEqual([
      ["create_email_draft", "email"],
      ["create_ticket_draft", "ticketing"],
      ["authorize_payment", "payments"],
    ]);
    expect(screen.bySystem.map((g) => g.system)).toEqual(["email", "ticketing", "payments"]);
    expect(screen.byAudience.map((g) => g.label)).toEqual(["internal"]);
    const auth = screen.staged[2]!;
    expect(auth.release).toEqual({ tool: "cancel_authorization", args: {} });
    // 24 h class default window from the staging time, capped by nothing (the deadline is later).
    expect(new Date(auth.revocableUntil!).getTime() - new Date(auth.stagedAt).getTime()).toBe(24 * 3600 * 1000);
    expect(auth.releasableUntil).toBe(auth.revocableUntil);
    expect(screen.plan.map((i) => [i.tool, i.toolClass, i.planPolicyVersion, i.currentPolicyVersion, i.audienceRank])).toEqual([
      ["capture_payment", "COMPENSATABLE", 1, 1, 0],
      ["send_email", "IRREVERSIBLE", 1, 1, 2],
    ]);
    expect(screen.irreversibleCount).toBe(1);
    expect(screen.pivot.deadline).toBe(deadline.toISOString());

    // The agent revises its proposal while the reviewer looks at the first one.
    const revisedMail = { ...apology, body: "We re-shipped order 2001. Also: 20% off your next order!" };
    const revised = await run.requestPivot({
      summary: "Capture the hold and email Bo with a discount.",
      plan: [
        { tool: "capture_payment", args: { paymentIntentId, amount: 1800 } },
        { tool: "send_email", args: revisedMail },
      ],
      deadline,
    });
    expect(revised.id).toBe(first.id);
    expect(revised.planHash).not.toBe(first.planHash);

    const stale = await approvePivot({ actor: me(), pivotId: first.id, planHash: first.planHash });
    expect(stale).toMatchObject({ ok: false, reason: "plan_changed", current: { planHash: revised.planHash, status: "PENDING" } });
    if (stale.ok || stale.reason !== "plan_changed") throw new Error("expected plan_changed");
    expect(stale.current.plan[1]?.args).toEqual(revisedMail);
    const prisma = await getPrisma();
    expect((await prisma.pivot.findUniqueOrThrow({ where: { id: first.id } })).status).toBe("PENDING");
    expect((await prisma.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("AWAITING_PIVOT");

    const approved = await approvePivot({ actor: me(), pivotId: first.id, planHash: revised.planHash });
    expect(approved).toMatchObject({ ok: true, pivot: { status: "APPROVED", decidedBy: rita.email } });
    const row = await prisma.pivot.findUniqueOrThrow({ where: { id: first.id } });
    expect([row.status, row.decidedBy, row.planHash]).toEqual(["APPROVED", rita.email, revised.planHash]);
    expect((await prisma.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("COMMITTING");
    const events = await new PrismaSagaStore(prisma).listAuditEvents(run.runId);
    expect(events.filter((ev) => ev.type === "pivot.approved").map((ev) => ev.actor)).toEqual([`user:${rita.email}`]);
    expect(chainProblems(events)).toEqual([]);

    // The agent proceeds with exactly the approved calls; the email reaches the (simulated) world once.
    expect((await getPivotScreen({ actor: me(), pivotId: first.id })).committed).toEqual([]);
    expect(await run.call("capture_payment", { paymentIntentId, amount: 1800 })).toMatchObject({ status: "ok" });
    expect((await getPivotScreen({ actor: me(), pivotId: first.id })).committed).toEqual([{ idx: 0, stepIdx: expect.any(Number), status: "CONFIRMED" }]);
    expect(await run.call("send_email", revisedMail)).toMatchObject({ status: "ok" });
    expect((await getPivotScreen({ actor: me(), pivotId: first.id })).committed.map((c) => [c.idx, c.status])).toEqual([
      [0, "CONFIRMED"],
      [1, "CONFIRMED"],
    ]);
    const world = getHostedWorld();
    expect(world.ledger.effects({ op: "email.send" }).filter((x) => (x.args as { to?: string }).to === apology.to)).toHaveLength(1);
    expect(world.ledger.effects({ op: "payments.capture", ref: paymentIntentId })).toHaveLength(1);

    // A second decision is refused as a value.
    as(rob);
    expect(await approvePivot({ actor: me(), pivotId: first.id, planHash: revised.planHash })).toMatchObject({ ok: false, reason: "already_decided", pivot: { decidedBy: rita.email } });
  });

  it("treats a tool policy edited since the plan was made as a changed plan", async () => {
    const e = await engine();
    const run = await e.startRun({ title: "Tell Cy", agent: "support-agent", onBehalfOf: "cy@example.com" });
    const mail = { to: "cy@example.com", subject: "Your desk ships tomorrow", body: "We re-shipped order 3107." };
    const pivot = await run.requestPivot({ summary: "Tell Cy.", plan: [{ tool: "send_email", args: mail }] });
    const prisma = await getPrisma();
    const before = await prisma.toolPolicy.findUniqueOrThrow({ where: { name: "send_email" } });
    await prisma.toolPolicy.update({ where: { name: "send_email" }, data: { policyVersion: before.policyVersion + 1, updatedBy: "admin@example.com" } });
    try {
      as(rita);
      const screen = await getPivotScreen({ actor: me(), pivotId: pivot.id });
      expect(screen.policyChanged).toBe(true);
      expect(screen.plan[0]).toMatchObject({ planPolicyVersion: before.policyVersion, currentPolicyVersion: before.policyVersion + 1, policyChanged: true });
      const refused = await approvePivot({ actor: me(), pivotId: pivot.id, planHash: pivot.planHash });
      expect(refused).toMatchObject({ ok: false, reason: "plan_changed", policyChanges: [{ tool: "send_email", planVersion: before.policyVersion, currentVersion: before.policyVersion + 1 }] });
      expect((await prisma.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");
    } finally {
      await prisma.toolPolicy.update({ where: { name: "send_email" }, data: { policyVersion: before.policyVersion, updatedBy: before.updatedBy } });
    }
  });

  it("needs a reason to reject, and the reason goes back to the agent", async () => {
    const e = await engine();
    const run = await e.startRun({ title: "Reship order 2001 again", agent: "support-agent", onBehalfOf: "bo@example.com" });
    const paymentIntentId = await stage(run);
    const pivot = await run.requestPivot({ summary: "Capture.", plan: [{ tool: "capture_payment", args: { paymentIntentId, amount: 1800 } }] });
    const prisma = await getPrisma();

    as(rita);
    await expect(rejectPivot({ actor: me(), pivotId: pivot.id, planHash: pivot.planHash, reason: "   " })).rejects.toBeInstanceOf(ZodError);
    expect((await prisma.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");

    const rejected = await rejectPivot({ actor: me(), pivotId: pivot.id, planHash: pivot.planHash, reason: "The customer wants store credit instead." });
    expect(rejected).toMatchObject({ ok: true, pivot: { status: "REJECTED", reason: "The customer wants store credit instead." } });
    expect((await prisma.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("RUNNING");
    const seen = await run.awaitPivot(pivot.id, { timeoutMs: 1000 });
    expect([seen.status, seen.reason, seen.decidedBy]).toEqual(["REJECTED", "The customer wants store credit instead.", rita.email]);

    // The agent unwinds: the authorisation hold is released in the world.
    await run.unwind("reviewer rejected the pivot");
    expect(getHostedWorld().ledger.effects({ op: "payments.cancelAuthorization", ref: paymentIntentId })).toHaveLength(1);
    expect(getHostedWorld().ledger.effects({ op: "payments.capture", ref: paymentIntentId })).toHaveLength(0);
  });
});

describe("escalation queue", () => {
  async function heldEmail(title: string) {
    const e = await engine();
    const run = await e.startRun({ title, agent: "support-agent", onBehalfOf: "ada@example.com" });
    const mail = { to: "ada@example.com", subject: "Delay on order 1182", body: `Your order is delayed (${title}).` };
    const outcome = await run.call("send_email", mail);
    if (outcome.status !== "approval_required" || !outcome.escalationId) throw new Error("an irreversible call outside a pivot is held");
    return { run, mail, escalationId: outcome.escalationId };
  }

  it("lets exactly one of two reviewers claim an item; the other is told who holds it", async () => {
    const { run, escalationId } = await heldEmail("claim race");
    as(rita);
    const first = claimEscalation({ actor: me(), escalationId });
    as(rob);
    const second = claimEscalation({ actor: me(), escalationId });
    const results = await Promise.all([first, second]);
    const winners = results.filter((r) => r.ok);
    expect(winners).toHaveLength(1);
    const winner = results[0]!.ok ? rita : rob;
    const loser = results.find((r) => !r.ok);
    expect(loser).toMatchObject({ ok: false, reason: "held", heldBy: winner.email, heldByName: winner.name });

    const prisma = await getPrisma();
    const row = await prisma.escalation.findUniqueOrThrow({ where: { id: escalationId } });
    expect([row.status, row.claimedBy]).toEqual(["CLAIMED", winner.email]);
    expect(row.claimedAt).toBeInstanceOf(Date);

    // Claiming what you hold again changes nothing.
    as(winner);
    expect(await claimEscalation({ actor: me(), escalationId })).toMatchObject({ ok: true, escalation: { claimedBy: winner.email } });
    const events = await new PrismaSagaStore(prisma).listAuditEvents(run.runId);
    expect(events.filter((ev) => ev.type === "escalation.claimed").map((ev) => ev.actor)).toEqual([`user:${winner.email}`]);
    expect(chainProblems(events)).toEqual([]);

    const queue = await findEscalations({ actor: me() });
    const item = queue.items.find((i) => i.id === escalationId);
    expect(item).toMatchObject({ kind: "APPROVAL_REQUIRED", status: "CLAIMED", claimedBy: winner.email, owner: "support-leads", tool: "send_email", system: "email" });
    expect(queue.openByKind.APPROVAL_REQUIRED).toBeGreaterThanOrEqual(1);
    expect(queue.mine).toBeGreaterThanOrEqual(1);
  });

  it("lets only the claimer resolve; an approved held call then runs once", async () => {
    const { run, mail, escalationId } = await heldEmail("only the claimer");
    const prisma = await getPrisma();

    as(rita);
    expect(await resolveEscalation({ actor: me(), escalationId, kind: "APPROVAL_REQUIRED", approve: true })).toEqual({ ok: false, reason: "not_claimer", heldBy: null });
    expect(await claimEscalation({ actor: me(), escalationId })).toMatchObject({ ok: true });

    as(rob);
    expect(await resolveEscalation({ actor: me(), escalationId, kind: "APPROVAL_REQUIRED", approve: true })).toEqual({ ok: false, reason: "not_claimer", heldBy: rita.email });
    expect(await releaseEscalation({ actor: me(), escalationId })).toMatchObject({ ok: false, reason: "held", heldBy: rita.email });
    expect((await prisma.escalation.findUniqueOrThrow({ where: { id: escalationId } })).status).toBe("CLAIMED");

    as(rita);
    await expect(resolveEscalation({ actor: me(), escalationId, kind: "APPROVAL_REQUIRED", approve: false })).rejects.toBeInstanceOf(ZodError);
    const detail = await getEscalation({ actor: me(), escalationId });
    expect(detail.abilities).toEqual({ canClaim: true, canResolve: true, isClaimer: true });
    expect(detail.heldCall).toMatchObject({ tool: "send_email", args: mail, reason: "IRREVERSIBLE" });

    const resolved = await resolveEscalation({ actor: me(), escalationId, kind: "APPROVAL_REQUIRED", approve: true, note: "Customer asked to be told." });
    expect(resolved).toMatchObject({ ok: true, escalation: { status: "RESOLVED", resolvedBy: rita.email } });
    const row = await prisma.escalation.findUniqueOrThrow({ where: { id: escalationId } });
    expect([row.status, row.resolvedBy, row.resolution]).toEqual(["RESOLVED", rita.email, { approved: true, note: "Customer asked to be told." }]);
    expect(await resolveEscalation({ actor: me(), escalationId, kind: "APPROVAL_REQUIRED", approve: true })).toEqual({ ok: false, reason: "resolved", resolvedBy: rita.email });

    const before = getHostedWorld().ledger.effects({ op: "email.send" }).length;
    expect(await run.call("send_email", mail)).toMatchObject({ status: "ok" });
    expect(getHostedWorld().ledger.effects({ op: "email.send" }).length).toBe(before + 1);
    const events = await new PrismaSagaStore(prisma).listAuditEvents(run.runId);
    expect(events.filter((ev) => ev.type === "escalation.resolved").map((ev) => ev.actor)).toEqual([`user:${rita.email}`]);
    expect(chainProblems(events)).toEqual([]);
  });

  it("gives a released item back to the queue for someone else", async () => {
    const { escalationId } = await heldEmail("release");
    as(rita);
    await claimEscalation({ actor: me(), escalationId });
    expect(await releaseEscalation({ actor: me(), escalationId })).toMatchObject({ ok: true, escalation: { status: "OPEN", claimedBy: null } });
    as(rob);
    expect(await claimEscalation({ actor: me(), escalationId })).toMatchObject({ ok: true, escalation: { claimedBy: rob.email } });
  });

  it("records a manual repair of a failed compensation with a note", async () => {
    const e = await engine();
    const run = await e.startRun({ title: "Goodwill credit", agent: "support-agent", onBehalfOf: "bo@example.com" });
    await run.call("charge_card", { customerId: "cus_bo", amount: 700, currency: "eur", reason: "express upgrade" });
    getHostedWorld().faults.inject("payments.refund", { kind: "reject", status: 402, code: "insufficient_balance" });
    await run.unwind("customer cancelled");
    const prisma = await getPrisma();
    const esc = await prisma.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "COMPENSATION_FAILED" } });
    as(rita);
    await claimEscalation({ actor: me(), escalationId: esc.id });
    await expect(resolveEscalation({ actor: me(), escalationId: esc.id, kind: "COMPENSATION_FAILED", note: "" })).rejects.toBeInstanceOf(ZodError);
    const done = await resolveEscalation({ actor: me(), escalationId: esc.id, kind: "COMPENSATION_FAILED", note: "Refunded 7.00 EUR by hand in the console.", repairRef: "re_manual_1" });
    expect(done).toMatchObject({ ok: true });
    const row = await prisma.escalation.findUniqueOrThrow({ where: { id: esc.id } });
    expect(row.resolution).toEqual({ note: "Refunded 7.00 EUR by hand in the console.", repair: "manual", repairRef: "re_manual_1" });
  });
});

/** The answer of a check this server ran itself (it holds the demo's connectors). */
function checked(state: TRealSystemCheckState): TRealSystemCheck {
  if (state.state !== "checked") throw new Error(`expected the server to check at once, got ${state.state}`);
  return state.check;
}

describe("unknown outcomes", () => {
  it("checks the real system without changing anything, then settles CONFIRMED with evidence written back to the step", async () => {
    const { step, escalation, store } = await unknownTicket("timeout_after_effect");
    const [effect] = getHostedWorld().ledger.effects({ op: "ticketing.create", key: step.stepKey });
    expect(effect?.ref).toBeTruthy();

    as(rita);
    const check = checked(await checkRealSystem({ actor: me(), escalationId: escalation.id }));
    expect(check).toMatchObject({ checkedBy: "this server", found: true, externalRef: effect!.ref, tool: "create_ticket", system: "ticketing", stepKey: step.stepKey, stepStatus: "UNKNOWN", error: null });
    expect((await store.getStep(step.id))?.status).toBe("UNKNOWN");
    expect((await store.getEscalation(escalation.id))?.status).toBe("OPEN");

    await claimEscalation({ actor: me(), escalationId: escalation.id });
    await expect(resolveEscalation({ actor: me(), escalationId: escalation.id, kind: "OUTCOME_UNKNOWN", outcome: "CONFIRMED", evidence: " " })).rejects.toBeInstanceOf(ZodError);
    const evidence = `Lookup of key ${step.stepKey} found ${check.externalRef}.`;
    const settled = await resolveEscalation({ actor: me(), escalationId: escalation.id, kind: "OUTCOME_UNKNOWN", outcome: "CONFIRMED", evidence, externalRef: check.externalRef });
    expect(settled).toMatchObject({ ok: true, escalation: { status: "RESOLVED" } });

    const after = await store.getStep(step.id);
    expect([after?.status, after?.externalRef]).toEqual(["CONFIRMED", effect!.ref]);
    expect(after?.result).toEqual({ settledBy: rita.email, evidence });
    expect((await store.getEscalation(escalation.id))?.resolution).toEqual({ outcome: "CONFIRMED", evidence });
    const events = await store.listAuditEvents(step.runId);
    expect(events.filter((ev) => ev.type === "step.settled").map((ev) => [ev.actor, ev.stepId])).toEqual([[`user:${rita.email}`, step.id]]);
    expect(chainProblems(events)).toEqual([]);
    // Still exactly one ticket in the world for this key.
    expect(getHostedWorld().ledger.effects({ op: "ticketing.create", key: step.stepKey })).toHaveLength(1);
  });

  it("reports an effect that never happened as not found (after a second look), and settles NOT_EXECUTED", async () => {
    const { step, escalation, store } = await unknownTicket("timeout_before_effect");
    as(rob);
    const check = checked(await checkRealSystem({ actor: me(), escalationId: escalation.id }));
    expect(check).toMatchObject({ found: false, externalRef: null, lookups: 2, error: null });
    await claimEscalation({ actor: me(), escalationId: escalation.id });
    await resolveEscalation({ actor: me(), escalationId: escalation.id, kind: "OUTCOME_UNKNOWN", outcome: "NOT_EXECUTED", evidence: "No ticket carries the saga label." });
    expect((await store.getStep(step.id))?.status).toBe("NOT_EXECUTED");
    expect(getHostedWorld().ledger.effects({ op: "ticketing.create", key: step.stepKey })).toHaveLength(0);
  });
});

describe("viewers", () => {
  it("get 403 on every mutation and change nothing, and see no decision abilities", async () => {
    const e = await engine();
    const run = await e.startRun({ title: "Viewer cannot touch", agent: "support-agent", onBehalfOf: "bo@example.com" });
    const paymentIntentId = await stage(run);
    const held = await run.call("send_email", apology);
    expect(held.status).toBe("approval_required");
    const pivot = await run.requestPivot({ summary: "Capture.", plan: [{ tool: "capture_payment", args: { paymentIntentId, amount: 1800 } }] });
    const { escalation } = await unknownTicket("timeout_after_effect");
    const prisma = await getPrisma();
    const heldEsc = await prisma.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "APPROVAL_REQUIRED" } });

    as(vic);
    const forbidden = (p: Promise<unknown>) => expect(p).rejects.toSatisfy((err: unknown) => err instanceof ApiError && err.httpStatus === 403);
    await forbidden(approvePivot({ actor: me(), pivotId: pivot.id, planHash: pivot.planHash }));
    await forbidden(rejectPivot({ actor: me(), pivotId: pivot.id, planHash: pivot.planHash, reason: "no" }));
    await forbidden(claimEscalation({ actor: me(), escalationId: heldEsc.id }));
    await forbidden(releaseEscalation({ actor: me(), escalationId: heldEsc.id }));
    await forbidden(resolveEscalation({ actor: me(), escalationId: heldEsc.id, kind: "APPROVAL_REQUIRED", approve: true }));
    await forbidden(checkRealSystem({ actor: me(), escalationId: escalation.id }));

    // Forcing the approval through the route is refused the same way.
    const res = await call(approveRoute, `/api/dashboard/pivots/${pivot.id}/approve`, {
      body: { planHash: pivot.planHash },
      headers: { origin: "http://localhost" },
      params: { pivotId: pivot.id },
    });
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe("FORBIDDEN");

    expect((await prisma.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");
    expect(await prisma.escalation.findUniqueOrThrow({ where: { id: heldEsc.id } })).toMatchObject({ status: "OPEN", claimedBy: null });
    expect((await getPivotScreen({ actor: me(), pivotId: pivot.id })).abilities).toEqual({ canDecide: false });
    expect((await findEscalations({ actor: me() })).abilities).toEqual({ canClaim: false, canResolve: false });
    expect((await getEscalation({ actor: me(), escalationId: heldEsc.id })).abilities).toEqual({ canClaim: false, canResolve: false, isClaimer: false });
  });

  it("are refused when signed out: the route reads no person, so no use case runs", async () => {
    const res = await call(findRunsRoute, "/api/dashboard/runs");
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe("UNAUTHORIZED");
  });
});

describe("runs list", () => {
  it("filters by needs-attention, searches by customer and external ref, and counts what waits for people", async () => {
    as(vic);
    const all = await findRuns({ actor: me() });
    expect(all.waiting.pendingPivots).toBeGreaterThanOrEqual(1);
    expect(all.waiting.openEscalationTotal).toBeGreaterThanOrEqual(1);
    expect(all.waiting.openEscalations.OUTCOME_UNKNOWN).toBeGreaterThanOrEqual(1);
    const waiting = await findRuns({ actor: me(), needsAttention: true });
    expect(waiting.runs.length).toBeGreaterThan(0);
    expect(waiting.runs.every((r) => r.pendingPivotId || r.openEscalationCount > 0 || r.correctionDraftCount > 0 || r.status === "NEEDS_ATTENTION")).toBe(true);
    expect(waiting.runs.length).toBeLessThan(all.runs.length);

    const cy = await findRuns({ actor: me(), q: "cy@example" });
    expect(cy.runs.map((r) => r.onBehalfOf)).toEqual(["cy@example.com"]);
    // Any case, on both stores (PostgreSQL's LIKE is case-sensitive; the search asks for ILIKE there).
    expect((await findRuns({ actor: me(), q: "CY@Example" })).runs.map((r) => r.onBehalfOf)).toEqual(["cy@example.com"]);
    // Shorter than a trigram: SQLite's search index cannot help, and the scan finds it all the same.
    expect((await findRuns({ actor: me(), q: "cy" })).runs.map((r) => r.onBehalfOf)).toContain("cy@example.com");
    const prisma = await getPrisma();
    const step = await prisma.step.findFirstOrThrow({ where: { tool: "authorize_payment", externalRef: { not: null } } });
    const byRef = await findRuns({ actor: me(), q: step.externalRef! });
    expect(byRef.runs.map((r) => r.id)).toEqual([step.runId]);
    expect((await findRuns({ actor: me(), status: "AWAITING_PIVOT" })).runs.every((r) => r.status === "AWAITING_PIVOT" && r.pendingPivotId)).toBe(true);
  });

  it("pages through every run newest first with a cursor, same-millisecond runs included, and counts what waits as the rows do", async () => {
    as(vic);
    const prisma = await getPrisma();
    // Three runs created in the same millisecond: the id breaks the tie, so no page repeats or skips one.
    const at = new Date(Date.now() + 60_000);
    for (const id of ["run_tie_a", "run_tie_b", "run_tie_c"]) {
      await prisma.run.create({ data: { id, title: "tie", agent: "paging", onBehalfOf: null, metadata: {}, status: "RUNNING", createdAt: at } });
    }
    const expected = (await prisma.run.findMany({ orderBy: [{ createdAt: "desc" }, { id: "desc" }], select: { id: true } })).map((r) => r.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = await findRuns({ actor: me(), take: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.runs.map((r) => r.id));
      if (!page.nextCursor) break;
      expect(page.runs).toHaveLength(2);
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(expected);
    expect(seen.slice(0, 3)).toEqual(["run_tie_c", "run_tie_b", "run_tie_a"]);
    // Filters page the same way.
    const paging = await findRuns({ actor: me(), agent: "paging", take: 2 });
    expect(paging.runs.map((r) => r.id)).toEqual(["run_tie_c", "run_tie_b"]);
    expect((await findRuns({ actor: me(), agent: "paging", take: 2, cursor: paging.nextCursor! })).runs.map((r) => r.id)).toEqual(["run_tie_a"]);
    // Needs attention: pages of 1 (each found by scanning the newest runs) add up to the list gathered whole.
    const waitingWhole = (await findRuns({ actor: me(), needsAttention: true, take: 200 })).runs.map((r) => r.id);
    expect(waitingWhole.length).toBeGreaterThanOrEqual(2);
    const waitingPaged: string[] = [];
    let after: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof findRuns>> = await findRuns({ actor: me(), needsAttention: true, take: 1, ...(after ? { cursor: after } : {}) });
      waitingPaged.push(...page.runs.map((r) => r.id));
      after = page.nextCursor;
    } while (after && waitingPaged.length < 300);
    expect(waitingPaged).toEqual(waitingWhole);
    // A cursor naming no run gives an empty page, not the first one again.
    expect(await findRuns({ actor: me(), cursor: "run_nope" })).toMatchObject({ runs: [], nextCursor: null });
    const first = await findRuns({ actor: me() });
    expect(first.runs[0]).toMatchObject({ id: "run_tie_c", stepCount: 0, openEscalationCount: 0, correctionDraftCount: 0, pendingPivotId: null });
    expect(first.runs[0]!.createdAt).toBe(at.toISOString());

    // What waits for people, against the rows read in plain code.
    const open = await prisma.escalation.findMany({ where: { status: { in: ["OPEN", "CLAIMED"] } }, select: { kind: true } });
    const pivots = await prisma.pivot.findMany({ where: { status: "PENDING" }, select: { run: { select: { status: true } } } });
    expect(first.waiting).toEqual({
      pendingPivots: pivots.filter((p) => p.run.status === "AWAITING_PIVOT").length,
      openEscalations: Object.fromEntries(Object.values(EscalationKind).map((k) => [k, open.filter((e) => e.kind === k).length])),
      openEscalationTotal: open.length,
      correctionDrafts: await prisma.correction.count({ where: { status: "DRAFT" } }),
    });
    await prisma.run.deleteMany({ where: { agent: "paging" } });
  });

  it("gives each listed run its own step count, open escalations, correction drafts and newest pending pivot", async () => {
    as(vic);
    const prisma = await getPrisma();
    const { runs } = await findRuns({ actor: me(), take: 200 });
    expect(runs.some((r) => r.openEscalationCount > 0)).toBe(true);
    expect(runs.some((r) => r.pendingPivotId)).toBe(true);
    for (const run of runs) {
      const pending = await prisma.pivot.findFirst({ where: { runId: run.id, status: "PENDING" }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
      expect(run).toMatchObject({
        stepCount: await prisma.step.count({ where: { runId: run.id } }),
        openEscalationCount: await prisma.escalation.count({ where: { runId: run.id, status: { in: ["OPEN", "CLAIMED"] } } }),
        correctionDraftCount: await prisma.correction.count({ where: { runId: run.id, status: "DRAFT" } }),
        pendingPivotId: pending?.id ?? null,
      });
    }
  });
});
