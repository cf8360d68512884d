/**
 * Approvals outside the one-reviewer dashboard path, on a real database (SQLite, or PostgreSQL with
 * SAGABOARD_TEST_PG=1) and the simulated systems this process hosts:
 * - two approvers: a plan holding a tool whose row asks for two is decided by the second of two
 *   different people (the first recorded and shown, the same person twice refused), and the approved
 *   plan's email is sent once;
 * - approvals by email, through a real local SMTP server and the route handlers a browser reaches: a
 *   scanner's GET and HEAD decide nothing, the approver decides only by the confirm page's POST, the
 *   link then answers 409, a forwarded one 403, and a plan edit or the expiry ends it (410), each
 *   refusal in the audit log; a held call's escalation is approved the same way, and its link dies
 *   when another reviewer takes the call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as approveLinkRoute from "@/app/approve/[token]/route";
import * as linkDecisionRoute from "@/app/api/approvals/[linkId]/route";
import { runWithSessionReader } from "@/lib/server/auth/current-user";
import { startUserSession } from "@/lib/server/auth/user-sessions";
import { claimEscalation } from "@/lib/desks/escalations/claim-escalation";
import { editPlanItem } from "@/lib/desks/pivots/edit-plan-item";
import { Notifier } from "@/lib/server/notifications/notifier";
import { approvalSecretIn, startSmtpInbox, type SmtpInbox } from "../support/smtp-inbox";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { seedSupportToolTable } from "@/lib/demo/seed/support-tool-table";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { approvePivot } from "@/lib/desks/pivots/approve-pivot";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";
import { SagaEngine } from "@/packages/client/src/saga/engine";
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

describe("approvals by email", () => {
  let inbox: SmtpInbox;
  beforeAll(async () => {
    inbox = await startSmtpInbox();
  });
  afterAll(() => inbox.close());

  /** A waiting pivot whose plan opens a ticket (one approver), announced by email to every reviewer. */
  async function announcedPivot(tag: string) {
    const e = await engine();
    const run = await e.startRun({ title: `Ticket ${tag}`, agent: "support-agent", onBehalfOf: "bo@example.com" });
    await run.call("create_ticket_draft", { summary: `Reship ${tag}`, orderId: "2001" });
    const pivot = await run.requestPivot({ summary: `Open the ticket for ${tag}.`, plan: [{ tool: "create_ticket", args: { summary: `Reship ${tag}`, orderId: "2001" } }] });
    const prisma = await getPrisma();
    const notifier = new Notifier({ prisma, store: new PrismaSagaStore(prisma), notifierId: `mail-${tag}`, mailer: inbox.mailer, baseUrl: "http://sagaboard.test", slas: false });
    // Rounds until everything due is sent (a round sends 20 deliveries at most).
    for (let round = await notifier.runOnce(); round.attempts.length > 0 || round.fannedOut > 0; round = await notifier.runOnce());
    return { run, pivot };
  }

  /** Calls a route as `user` with one open session (null: no session, as a mail scanner). */
  async function as<T>(user: CurrentUser | null, fn: () => Promise<T>): Promise<T> {
    const sessionId = user ? await startUserSession(await getPrisma(), user.id) : null;
    return runWithSessionReader(async () => (user && sessionId ? { userId: user.id, sessionId } : null), fn);
  }

  const open = (user: CurrentUser | null, secret: string, method: "GET" | "HEAD" = "GET") =>
    as(user, async () => {
      const res = await approveLinkRoute[method](new Request(`http://localhost/approve/${secret}`, { method }), { params: Promise.resolve({ token: secret }) });
      return { status: res.status, headers: res.headers, text: await res.text() };
    });
  const decide = (user: CurrentUser, linkId: string, cookie: string | null, form: Record<string, string>) =>
    as(user, async () => {
      const res = await linkDecisionRoute.POST(
        new Request(`http://localhost/api/approvals/${linkId}`, {
          method: "POST",
          headers: { origin: "http://localhost", "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
          body: new URLSearchParams(form).toString(),
        }),
        { params: Promise.resolve({ linkId }) },
      );
      return { status: res.status, location: res.headers.get("location"), text: await res.text() };
    });

  it("a scanner's GET and HEAD leave the pivot pending; the approver decides by the confirm page's POST; the link then answers 409", async () => {
    const [rita, rob] = [await person("reviewer", "rita"), await person("reviewer", "rob")];
    const { pivot } = await announcedPivot(`mail-${Date.now().toString(36)}`);
    const mail = await inbox.waitFor(rita.email, pivot.id);
    expect(mail.subject).toContain("Pivot waiting for a reviewer");
    expect(mail.text).toMatch(/works once, until .* UTC/);
    const secret = approvalSecretIn(mail.text)!;
    expect(secret).toMatch(/^[\w-]{43}$/);
    const prisma = await getPrisma();
    const link = await prisma.approvalLink.findFirstOrThrow({ where: { pivotId: pivot.id, userId: rita.id } });
    // Stored hashed: the secret itself is nowhere in the row.
    expect(JSON.stringify(link)).not.toContain(secret);
    expect(link).toMatchObject({ planHash: pivot.planHash, usedAt: null });
    expect(link.expiresAt.getTime() - link.createdAt.getTime()).toBeLessThanOrEqual(72 * 3_600_000);
    // Rob's own email carries another link.
    expect(approvalSecretIn((await inbox.waitFor(rob.email, pivot.id)).text)).not.toBe(secret);

    // A mail scanner opens the link before Rita does, without a session: sent to sign in, nothing decided.
    for (const method of ["GET", "HEAD"] as const) {
      const scanned = await open(null, secret, method);
      expect(scanned.status).toBe(303);
      expect(scanned.headers.get("location")).toMatch(/^\/signin\?callbackUrl=%2Fapprove%2F/);
    }
    expect((await prisma.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");
    expect((await prisma.approvalLink.findUniqueOrThrow({ where: { id: link.id } })).usedAt).toBeNull();

    // Rita opens it: to the confirm page, the secret moved into a cookie; still nothing decided.
    const opened = await open(rita, secret);
    expect(opened.status).toBe(303);
    expect(opened.headers.get("location")).toBe(`/approvals/${link.id}`);
    const cookie = opened.headers.get("set-cookie")!.split(";")[0]!;
    expect(opened.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Lax/);
    expect((await prisma.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");

    // Only the POST decides.
    const approved = await decide(rita, link.id, cookie, { decision: "approve", planHash: pivot.planHash });
    expect(approved).toMatchObject({ status: 303, location: `/approvals/${link.id}` });
    expect(await prisma.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).toMatchObject({ status: "APPROVED", decidedBy: rita.email });
    expect(await prisma.approvalLink.findUniqueOrThrow({ where: { id: link.id } })).toMatchObject({ outcome: "approved" });

    // The same link again: 409, on the address and on the POST.
    expect((await open(rita, secret)).status).toBe(409);
    const again = await decide(rita, link.id, cookie, { decision: "approve", planHash: pivot.planHash });
    expect(again.status).toBe(409);
    expect(again.text).toContain("already used");
    const refusals = await prisma.auditEvent.findMany({ where: { type: "approval_link.refused", runId: pivot.runId } });
    expect(refusals.map((e) => (e.data as { reason: string }).reason)).toEqual(["used", "used"]);
  });

  it("a forwarded link is 403 for another signed-in person; a plan edit after sending and the expiry end a link (410); all audited", async () => {
    const [rita, rob] = [await person("reviewer", "rita"), await person("reviewer", "rob")];
    const { pivot } = await announcedPivot(`fwd-${Date.now().toString(36)}`);
    const secret = approvalSecretIn((await inbox.waitFor(rita.email, pivot.id)).text)!;
    const prisma = await getPrisma();

    const forwarded = await open(rob, secret);
    expect(forwarded.status).toBe(403);
    // The confirm page's POST with Rita's cookie, sent by Rob, is refused the same way.
    const link = await prisma.approvalLink.findFirstOrThrow({ where: { pivotId: pivot.id, userId: rita.id } });
    expect((await decide(rob, link.id, `sagaboard-approval-${link.id}=${secret}`, { decision: "approve", planHash: pivot.planHash })).status).toBe(403);
    expect((await prisma.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");

    // Rob edits the plan (a reviewer may reword it): Rita's link was for the old plan.
    const edited = await editPlanItem({ actor: rob, pivotId: pivot.id, planHash: pivot.planHash, itemIdx: 0, args: { summary: "Reship, reworded", orderId: "2001" }, note: "clearer" });
    expect(edited.ok).toBe(true);
    const killed = await open(rita, secret);
    expect(killed.status).toBe(410);
    expect(await prisma.approvalLink.findUniqueOrThrow({ where: { id: link.id } })).toMatchObject({ endReason: "plan_changed", usedAt: null });
    expect((await prisma.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");

    // Another email's link, past its expiry.
    const other = await announcedPivot(`exp-${Date.now().toString(36)}`);
    const late = approvalSecretIn((await inbox.waitFor(rita.email, other.pivot.id)).text)!;
    await prisma.approvalLink.updateMany({ where: { pivotId: other.pivot.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await open(rita, late)).status).toBe(410);

    const reasons = (await prisma.auditEvent.findMany({ where: { type: "approval_link.refused", runId: { in: [pivot.runId, other.run.runId] } }, orderBy: { id: "asc" } })).map((e) => (e.data as { reason: string }).reason);
    expect(reasons).toEqual(["forwarded", "forwarded", "plan_changed", "expired"]);
  });

  it("a single sign-on session older than SAGABOARD_APPROVAL_SIGNIN_MAX_AGE_SEC signs in again before the link opens; a password session does not", async () => {
    const rita = await person("reviewer", "rita");
    const { pivot } = await announcedPivot(`fresh-${Date.now().toString(36)}`);
    const secret = approvalSecretIn((await inbox.waitFor(rita.email, pivot.id)).text)!;
    const prisma = await getPrisma();
    const saved = process.env.SAGABOARD_APPROVAL_SIGNIN_MAX_AGE_SEC;
    process.env.SAGABOARD_APPROVAL_SIGNIN_MAX_AGE_SEC = "600";
    try {
      const openWith = async (method: "sso" | "password", ageSec: number) => {
        const sessionId = await startUserSession(prisma, rita.id, method);
        await prisma.userSession.update({ where: { id: sessionId }, data: { createdAt: new Date(Date.now() - ageSec * 1000) } });
        return runWithSessionReader(async () => ({ userId: rita.id, sessionId }), () =>
          approveLinkRoute.GET(new Request(`http://localhost/approve/${secret}`), { params: Promise.resolve({ token: secret }) }),
        );
      };
      const stale = await openWith("sso", 601);
      expect(stale.status).toBe(303);
      expect(stale.headers.get("location")).toMatch(/^\/signin\?callbackUrl=%2Fapprove%2F.*&reauth=approval$/);
      expect((await openWith("sso", 30)).headers.get("location")).toMatch(/^\/approvals\/apl_/);
      expect((await openWith("password", 601)).headers.get("location")).toMatch(/^\/approvals\/apl_/);
    } finally {
      if (saved === undefined) delete process.env.SAGABOARD_APPROVAL_SIGNIN_MAX_AGE_SEC;
      else process.env.SAGABOARD_APPROVAL_SIGNIN_MAX_AGE_SEC = saved;
    }
    expect((await prisma.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");
  });

  it("a held call's escalation emails its approvers a link too: the POST approves the call, which then runs once; another reviewer taking it ends the link", async () => {
    const [rita, rob] = [await person("reviewer", "rita"), await person("reviewer", "rob")];
    const prisma = await getPrisma();
    const e = await engine();
    const to = `held-${Date.now().toString(36)}@example.com`;
    const letter = { to, subject: "About your order", body: "It shipped." };
    const run = await e.startRun({ title: `Held email ${to}`, agent: "support-agent", onBehalfOf: to });
    expect(await run.call("send_email", letter)).toMatchObject({ status: "approval_required" });
    const escalation = await prisma.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "APPROVAL_REQUIRED" } });
    const notifier = new Notifier({ prisma, store: new PrismaSagaStore(prisma), notifierId: `held-${to}`, mailer: inbox.mailer, baseUrl: "http://sagaboard.test", slas: false });
    for (let round = await notifier.runOnce(); round.attempts.length > 0 || round.fannedOut > 0; round = await notifier.runOnce());
    const secret = approvalSecretIn((await inbox.waitFor(rita.email, escalation.id)).text)!;
    const link = await prisma.approvalLink.findFirstOrThrow({ where: { escalationId: escalation.id, userId: rita.id } });
    expect(link).toMatchObject({ pivotId: null, planHash: (escalation.detail as { argsHash: string }).argsHash });

    // Scanners decide nothing here either; Rita's POST approves, as the escalation's claimer.
    expect((await open(null, secret)).status).toBe(303);
    const opened = await open(rita, secret);
    expect(opened.headers.get("location")).toBe(`/approvals/${link.id}`);
    const cookie = opened.headers.get("set-cookie")!.split(";")[0]!;
    expect(await prisma.escalation.findUniqueOrThrow({ where: { id: escalation.id } })).toMatchObject({ status: "OPEN" });
    expect((await decide(rita, link.id, cookie, { decision: "approve", planHash: link.planHash })).status).toBe(303);
    expect(await prisma.escalation.findUniqueOrThrow({ where: { id: escalation.id } })).toMatchObject({ status: "RESOLVED", resolvedBy: rita.email });
    expect(await run.call("send_email", letter)).toMatchObject({ status: "ok" });
    expect(getHostedWorld().ledger.effects({ op: "email.send" }).filter((x) => (x.args as { to?: string }).to === to)).toHaveLength(1);
    expect((await open(rita, secret)).status).toBe(409);

    // Another held call: Rob takes it in the queue before Rita opens her link, so the link is dead.
    const other = { to, subject: "One more thing", body: "Sorry." };
    expect(await run.call("send_email", other)).toMatchObject({ status: "approval_required" });
    const second = await prisma.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "APPROVAL_REQUIRED", status: "OPEN" } });
    for (let round = await notifier.runOnce(); round.attempts.length > 0 || round.fannedOut > 0; round = await notifier.runOnce());
    const late = approvalSecretIn((await inbox.waitFor(rita.email, second.id)).text)!;
    expect(await claimEscalation({ actor: rob, escalationId: second.id })).toMatchObject({ ok: true });
    const taken = await open(rita, late);
    expect(taken.status).toBe(410);
    expect(taken.text).toContain("Another reviewer took this held call");
  });
});
