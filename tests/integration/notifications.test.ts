/**
 * Notifications and SLAs on a real database (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1):
 * - the outbox row commits with its audit event (and rolls back with it);
 * - a webhook receiver that checks signatures sees a delivery refused with a 500, retried under the
 *   same delivery id, and replayed by an admin, and acts on it once;
 * - an email reaches a real local SMTP server (smtp-server), parsed with mailparser, with a link that
 *   opens the item's screen;
 * - an SLA reminds, breaches to the backup team, and at expiry rejects a pivot exactly once across
 *   two notifiers, and the agent long-polling the pivot through the API hears the rejection;
 * - a held irreversible call expires to rejected, never approved.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync } from "node:fs";
import path from "node:path";
import { simpleParser } from "mailparser";
import nodemailer from "nodemailer";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as getPivotRoute } from "@/app/api/v1/pivots/[pivotId]/route";
import { requireUser, runWithSessionReader } from "@/lib/server/auth/current-user";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { getPivotScreen } from "@/lib/desks/pivots/get-pivot-screen";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { createWebhook } from "@/lib/server/notifications/create-webhook";
import { emailRecipients } from "@/lib/server/notifications/fan-out-notifications";
import { findNotificationSettings } from "@/lib/server/notifications/find-webhooks";
import { Notifier } from "@/lib/server/notifications/notifier";
import { replayDelivery } from "@/lib/server/notifications/replay-delivery";
import { verifyWebhookSignature } from "@/lib/server/notifications/webhook-signature";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { saveNotificationTeam, saveSlaRule } from "@/lib/server/sla/save-sla-settings";
import { resetHostedWorld } from "@/lib/demo/sim/host";
import { addSupportTools, call, makeToken, useTestDatabase } from "../api/api-test-kit";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const getPrisma = useTestDatabase("notifications");
const BASE = "http://sagaboard.test";
const apology = { to: "bo@example.com", subject: "Your replacement is on its way", body: "We re-shipped order 2001." };

async function engine(): Promise<SagaEngine> {
  return new ReviewerEngine({ store: sharedSagaStore(await getPrisma()), registry: createSupportToolRegistry(resetHostedWorld({ searchLagMs: 0 })), recheckAfterMs: 10, backoffMs: 5 });
}

async function notifier(id: string, options: Partial<ConstructorParameters<typeof Notifier>[0]> = {}): Promise<Notifier> {
  const prisma = await getPrisma();
  return new Notifier({ prisma, store: sharedSagaStore(prisma), notifierId: id, mailer: null, baseUrl: BASE, backoffMs: 50, slas: false, ...options });
}

/** A run waiting at its pivot (one staged draft, a plan that sends one email). */
async function waitingPivot(agent = "support-agent", title = "Reship order 2001") {
  const e = await engine();
  const run = await e.startRun({ title, agent, onBehalfOf: "bo@example.com" });
  await run.call("create_email_draft", apology);
  const pivot = await run.requestPivot({ summary: "Email Bo about the reship.", plan: [{ tool: "send_email", args: apology }] });
  return { run, pivot };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  await getPrisma();
  await addSupportTools();
});

describe("the outbox", () => {
  it("writes one notification row in the transaction of the audit event that causes it, and none for steps", async () => {
    const prisma = await getPrisma();
    const { run, pivot } = await waitingPivot();
    const rows = await prisma.notificationEvent.findMany({ where: { runId: run.runId } });
    expect(rows.map((r) => [r.topic, r.eventType, r.subjectId])).toEqual([["pivot_waiting", "pivot.requested", pivot.id]]);
    // Same scope and seq as its audit event: the two were written together.
    const event = await prisma.auditEvent.findUniqueOrThrow({ where: { scope_seq: { scope: rows[0]!.scope, seq: rows[0]!.seq } } });
    expect(event.type).toBe("pivot.requested");
    // step.intended / step.confirmed (the hot path) wrote none.
    expect(await prisma.auditEvent.count({ where: { runId: run.runId, type: { startsWith: "step." } } })).toBeGreaterThan(0);
  });

  it("rolls back with its event: a decision that fails writes no notification", async () => {
    const prisma = await getPrisma();
    const { run, pivot } = await waitingPivot();
    // The pivot is fenced on its plan hash: a stale hash decides nothing, so nothing is announced.
    const store = sharedSagaStore(prisma);
    expect(await store.decidePivot(pivot.id, { status: "REJECTED", decidedBy: "sla", reason: "x", expectedPlanHash: "0".repeat(64) }, { type: "pivot.rejected", actor: { type: "system", id: "sla" }, data: { pivotId: pivot.id, expired: true } })).toBeNull();
    expect(await prisma.notificationEvent.count({ where: { runId: run.runId, topic: "sla_breached" } })).toBe(0);
  });
});

describe("webhooks", () => {
  let server: Server;
  let url: string;
  let secret = "";
  const received: { deliveryId: string; ok: boolean; reason: string | null; status: number }[] = [];
  const processed = new Map<string, unknown>();
  let failFirst = true;

  beforeAll(async () => {
    // The receiver: checks the signature against the raw body, answers the first delivery 500, and
    // acts on each delivery id once.
    server = createServer((req: IncomingMessage, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        const deliveryId = String(req.headers["sagaboard-delivery"] ?? "");
        const check = verifyWebhookSignature({ secret, header: (req.headers["sagaboard-signature"] as string | undefined) ?? null, body, nowSec: Math.floor(Date.now() / 1000) });
        let status = 200;
        if (!check.ok) status = 401;
        else if (failFirst) {
          failFirst = false;
          status = 500;
        } else if (!processed.has(deliveryId)) processed.set(deliveryId, JSON.parse(body));
        received.push({ deliveryId, ok: check.ok, reason: check.ok ? null : check.reason, status });
        res.writeHead(status, { "content-type": "text/plain" }).end(status === 500 ? "receiver is down for a moment" : "ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("signs each delivery, retries after a 500 under the same delivery id, and the receiver dedupes a replay", async () => {
    const prisma = await getPrisma();
    // Earlier tests' notifications go out first (to nobody: no hook yet), so this hook sees only its own.
    await (await notifier("drain")).runOnce();
    const created = await createWebhook(prisma, { name: "ops-hook", url, topics: ["pivot_waiting"], createdBy: "admin@example.com" });
    secret = created.secret;
    const { pivot } = await waitingPivot();
    const n = await notifier("notifier-a", { backoffMs: 1_000 });

    const first = await n.runOnce();
    expect(first.attempts.map((a) => [a.ok, a.statusCode])).toEqual([[false, 500]]);
    const deliveryId = first.attempts[0]!.deliveryId;
    let log = (await findNotificationSettings(prisma)).webhooks[0]!;
    expect(log.deliveries[0]).toMatchObject({ id: deliveryId, status: "PENDING", attempts: 1, lastStatusCode: 500 });
    expect(log.deliveries[0]!.lastError).toContain("HTTP 500");

    // Not due yet (backoff), then due.
    expect((await n.runOnce()).attempts).toEqual([]);
    await sleep(1_100);
    const second = await n.runOnce();
    expect(second.attempts.map((a) => [a.deliveryId, a.ok, a.statusCode])).toEqual([[deliveryId, true, 200]]);

    // An admin replays it: the same id again, which the receiver recognises.
    await replayDelivery(prisma, { deliveryId, by: "admin@example.com" });
    expect((await n.runOnce()).attempts.map((a) => [a.deliveryId, a.ok])).toEqual([[deliveryId, true]]);
    log = (await findNotificationSettings(prisma)).webhooks[0]!;
    expect(log.deliveries[0]).toMatchObject({ id: deliveryId, status: "DELIVERED", attempts: 3, replayedBy: "admin@example.com" });

    expect(received.map((r) => [r.deliveryId, r.ok, r.status])).toEqual([
      [deliveryId, true, 500],
      [deliveryId, true, 200],
      [deliveryId, true, 200],
    ]);
    expect([...processed.keys()]).toEqual([deliveryId]);
    const body = processed.get(deliveryId) as { topic: string; link: string; event: { subjectId: string; type: string } };
    expect(body).toMatchObject({ topic: "pivot_waiting", link: `${BASE}/pivots/${pivot.id}`, event: { subjectId: pivot.id, type: "pivot.requested" } });
  });

  it("a receiver refuses a body that was changed or a signature made with another secret", () => {
    const body = JSON.stringify({ deliveryId: "dlv_x", topic: "pivot_waiting" });
    const now = Math.floor(Date.now() / 1000);
    const header = `t=${now},v1=${"0".repeat(64)}`;
    expect(verifyWebhookSignature({ secret: "whsec_a", header, body, nowSec: now })).toEqual({ ok: false, reason: "the signature does not match the body" });
    expect(verifyWebhookSignature({ secret: "whsec_a", header: null, body, nowSec: now }).ok).toBe(false);
  });

  it("two notifiers deliver a notification once each: claims are fenced", async () => {
    const prisma = await getPrisma();
    failFirst = false;
    const before = received.length;
    await waitingPivot();
    const [a, b] = [await notifier("notifier-a"), await notifier("notifier-b")];
    const rounds = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
    const sent = rounds.flatMap((r) => r.attempts);
    expect(sent.filter((s) => s.ok)).toHaveLength(1);
    expect(received.length - before).toBe(1);
    expect(await prisma.notificationDelivery.count({ where: { status: "DELIVERED" } })).toBe(2);
  });
});

describe("email through SMTP", () => {
  let smtp: SMTPServer;
  let port = 0;
  const inbox: { to: string[]; subject: string; text: string; deliveryId: string }[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      onData(stream, session, done) {
        simpleParser(stream)
          .then((mail) => {
            inbox.push({ to: session.envelope.rcptTo.map((r) => r.address), subject: mail.subject ?? "", text: mail.text ?? "", deliveryId: String(mail.headers.get("x-sagaboard-delivery") ?? "") });
            done();
          })
          .catch(done);
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    port = (smtp.server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => smtp.close(() => resolve())));

  it("emails reviewers about a waiting pivot and the owner team about an escalation, each with a link that opens the item", async () => {
    const prisma = await getPrisma();
    await prisma.webhook.updateMany({ data: { enabled: false } });
    const reviewer = await prisma.user.create({ data: { id: "usr_mail_rev", email: "rita.reviewer@example.com", name: "Rita", role: "reviewer", passwordHash: null } });
    await saveNotificationTeam(prisma, { name: "support-leads", emails: ["leads@example.com"], by: "admin@example.com" });
    const mailer = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true });
    const n = await notifier("notifier-mail", { mailer });

    const { pivot } = await waitingPivot("support-agent", "Mail test run");
    // An irreversible call outside any pivot is held: an APPROVAL_REQUIRED escalation owned by support-leads.
    const e = await engine();
    const other = await e.startRun({ title: "Held email run", agent: "support-agent" });
    const outcome = await other.call("send_email", apology);
    expect(outcome.status).toBe("approval_required");
    const hold = await prisma.escalation.findFirstOrThrow({ where: { runId: other.runId, kind: "APPROVAL_REQUIRED" } });
    expect(hold.owner).toBe("support-leads");

    for (let i = 0; i < 3; i++) await n.runOnce();
    const toReviewer = inbox.find((m) => m.to.includes(reviewer.email) && m.subject.includes("Mail test run"));
    const toTeam = inbox.find((m) => m.to.includes("leads@example.com") && m.text.includes(hold.id));
    expect(toReviewer?.subject).toBe("Pivot waiting for a reviewer: Mail test run");
    expect(toTeam?.subject).toContain("Escalation for support-leads");

    // The link: the item's screen, on the configured address, naming a row that exists.
    const link = /Open it: (\S+)/.exec(toReviewer!.text)?.[1];
    expect(link).toBe(`${BASE}/pivots/${pivot.id}`);
    expect(existsSync(path.join(process.cwd(), "app", "(dashboard)", "pivots", "[pivotId]", "page.tsx"))).toBe(true);
    const screen = await runWithSessionReader(async () => reviewer.id, async () => getPivotScreen({ actor: await requireUser("read"), pivotId: new URL(link!).pathname.split("/")[2]! }));
    expect(screen.pivot.id).toBe(pivot.id);
    expect(/Open it: (\S+)/.exec(toTeam!.text)?.[1]).toBe(`${BASE}/escalations/${hold.id}`);
    // The delivery id rides along, so a mail system can dedupe too.
    expect(toReviewer!.deliveryId).toMatch(/^dlv_/);

    // An escalation raised with no owner recorded is still the tool owner's: the tool table routes it.
    await prisma.escalation.update({ where: { id: hold.id }, data: { owner: null } });
    expect(await emailRecipients(prisma, { topic: "escalation_raised", subjectId: hold.id, data: {} })).toEqual(["leads@example.com"]);
  });
});

describe("SLAs", () => {
  it("reminds, breaches once across two notifiers, then rejects the pivot at expiry; the agent long-polling it hears why", async () => {
    const prisma = await getPrisma();
    await prisma.webhook.updateMany({ data: { enabled: false } });
    const token = await makeToken(["create_email_draft", "send_email"]);
    await saveSlaRule(prisma, { target: "pivot", slaSec: 1, reminderAt: 0.5, backupTeam: "on-call", expireSec: 3, by: "admin@example.com" });
    const { run, pivot } = await waitingPivot(token.name, "SLA run");
    const [a, b] = [await notifier("sla-a", { slas: true }), await notifier("sla-b", { slas: true })];

    // The agent long-polls its pivot through the API while the notifiers work.
    const poll = call(getPivotRoute, `/api/v1/pivots/${pivot.id}?waitMs=20000`, { secret: token.secret, params: { pivotId: pivot.id } });

    await sleep(1_300);
    const breach = await Promise.all([a.runOnce(), b.runOnce()]);
    const marked = breach.flatMap((r) => r.sla?.marked ?? []).filter((m) => m.itemId === pivot.id);
    expect(marked.map((m) => m.stage).sort()).toEqual(["breach", "reminder"]);
    expect(await prisma.slaMark.count({ where: { itemId: pivot.id } })).toBe(2);
    expect((await prisma.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");

    await sleep(2_000);
    const expiry = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce()]);
    expect(expiry.flatMap((r) => r.sla?.expired ?? []).filter((id) => id === pivot.id)).toEqual([pivot.id]);

    const answer = await poll;
    expect(answer.status).toBe(200);
    expect(answer.json.pivot).toMatchObject({ id: pivot.id, status: "REJECTED", decidedBy: "sla" });
    expect(answer.json.pivot.reason).toMatch(/^Expired: no reviewer decided within .*never approved/);

    const events = await prisma.auditEvent.findMany({ where: { runId: run.runId, type: { in: ["pivot.rejected", "pivot.approved", "sla.reminder", "sla.breached"] } }, orderBy: { seq: "asc" } });
    expect(events.map((e) => [e.type, e.actor])).toEqual([
      ["sla.reminder", "system:sla"],
      ["sla.breached", "system:sla"],
      ["pivot.rejected", "system:sla"],
    ]);
    expect((await prisma.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("RUNNING");
    const topics = (await prisma.notificationEvent.findMany({ where: { runId: run.runId }, orderBy: { seq: "asc" } })).map((r) => r.topic);
    expect(topics).toEqual(["pivot_waiting", "sla_reminder", "sla_breached", "sla_breached"]);
    await saveSlaRule(prisma, { target: "pivot", slaSec: 1, reminderAt: 0.5, backupTeam: null, expireSec: null, by: "admin@example.com", remove: true });
  }, 30_000);

  it("a held irreversible call expires to rejected, and the agent's next call of it is refused, not run", async () => {
    const prisma = await getPrisma();
    await saveSlaRule(prisma, { target: "tool:send_email", slaSec: 1, reminderAt: 0.5, backupTeam: null, expireSec: 1, by: "admin@example.com" });
    const e = await engine();
    const run = await e.startRun({ title: "Held call SLA", agent: "support-agent" });
    expect((await run.call("send_email", apology)).status).toBe("approval_required");
    const hold = await prisma.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "APPROVAL_REQUIRED" } });
    await sleep(1_200);
    const rounds = await Promise.all([(await notifier("sla-a", { slas: true })).runOnce(), (await notifier("sla-b", { slas: true })).runOnce()]);
    expect(rounds.flatMap((r) => r.sla?.expired ?? []).filter((id) => id === hold.id)).toEqual([hold.id]);
    const resolved = await prisma.escalation.findUniqueOrThrow({ where: { id: hold.id } });
    expect(resolved).toMatchObject({ status: "RESOLVED", resolvedBy: "sla" });
    expect(resolved.resolution).toMatchObject({ approved: false, expired: true });
    const again = await (await e.resume(run.runId)).call("send_email", apology);
    expect(again).toMatchObject({ status: "approval_required", reason: "REJECTED" });
    expect(await prisma.step.count({ where: { runId: run.runId, tool: "send_email" } })).toBe(0);
    await saveSlaRule(prisma, { target: "tool:send_email", slaSec: 1, reminderAt: 0.5, backupTeam: null, expireSec: 1, by: "admin@example.com", remove: true });
  }, 30_000);
});
