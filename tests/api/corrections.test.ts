/**
 * The correction desk through its real route handlers on a real database: a real unwind drafts a
 * customer correction; support claims, edits and sends it; the worker (over the API with a worker
 * token, and beside the database) sends it once. The simulated email ledger is the oracle: exactly
 * one message per send key whatever is clicked twice, replayed, raced or timed out.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { testStoreKind } from "../support/test-database";
import * as listRoute from "@/app/api/dashboard/corrections/route";
import * as getRoute from "@/app/api/dashboard/corrections/[correctionId]/route";
import * as claimRoute from "@/app/api/dashboard/corrections/[correctionId]/claim/route";
import * as releaseRoute from "@/app/api/dashboard/corrections/[correctionId]/release/route";
import * as editRoute from "@/app/api/dashboard/corrections/[correctionId]/edit/route";
import * as dismissRoute from "@/app/api/dashboard/corrections/[correctionId]/dismiss/route";
import * as sendRoute from "@/app/api/dashboard/corrections/[correctionId]/send/route";
import { runWithSessionReader } from "@/lib/server/auth/current-user";
import type { Role } from "@/lib/server/auth/roles";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { HttpTaskQueue } from "@/packages/client/src/agent/client/http-task-queue";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { sendRunId } from "@/lib/desks/corrections/correction-view";
import { PrismaSagaStore, sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { stepKey } from "@/packages/client/src/saga/keys";
import { resetHostedWorld } from "@/lib/demo/sim/host";
import type { World } from "@/lib/demo/sim/world";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { createUser } from "@/lib/server/users/create-user";
import { prismaTaskQueue } from "@/lib/server/worker/queue";
import { Worker } from "@/packages/client/src/agent/worker";
import { routeFetch } from "../support/api-router";
import { call, type CallResult, useTestDatabase } from "./api-test-kit";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const getPrisma = useTestDatabase("corrections");
const users: Record<string, string> = {};
const emails: Record<string, string> = {};
let world: World;
let workerSecret = "";

beforeAll(async () => {
  world = resetHostedWorld({ searchLagMs: 20 });
  const prisma = await getPrisma();
  await syncToolPolicies(prisma, createSupportToolRegistry(world), "system:test");
  const people: [string, Role][] = [["sam", "support"], ["sue", "support"], ["ada", "admin"], ["rita", "reviewer"], ["vic", "viewer"]];
  for (const [name, role] of people) {
    const user = await createUser(prisma, { email: `${name}-cor@example.com`, name: `${name} (${role})`, role, password: "correct horse battery", by: { type: "system", id: "test" } });
    users[name] = user.id;
    emails[name] = user.email;
  }
  workerSecret = (await createAgentToken(prisma, { name: "email-worker", tools: ["send_email"], role: "worker", createdBy: "admin@example.com" })).secret;
});

type Handler = Parameters<typeof call>[0];
/** Calls a dashboard route as `who` (same-origin, like the browser). */
function as(who: string, handler: Handler, path: string, options: { body?: unknown; params?: Record<string, string> } = {}): Promise<CallResult> {
  return runWithSessionReader(async () => users[who] ?? null, () => call(handler, path, { ...options, headers: options.body === undefined ? {} : { origin: "http://localhost" } }));
}
const p = (id: string) => ({ params: { correctionId: id } });
const get = (who: string, id: string) => as(who, getRoute.GET, `/api/dashboard/corrections/${id}`, p(id));
const claim = (who: string, id: string) => as(who, claimRoute.POST, `/api/dashboard/corrections/${id}/claim`, p(id));
const edit = (who: string, id: string, body: unknown) => as(who, editRoute.POST, `/api/dashboard/corrections/${id}/edit`, { ...p(id), body });
const dismiss = (who: string, id: string, body: unknown) => as(who, dismissRoute.POST, `/api/dashboard/corrections/${id}/dismiss`, { ...p(id), body });
const send = (who: string, id: string, expectedVersion: number) => as(who, sendRoute.POST, `/api/dashboard/corrections/${id}/send`, { ...p(id), body: { expectedVersion } });

/** A run that emails a customer after an approved pivot, then is unwound: its correction's id. */
async function unwoundEmail(to: string, subject: string): Promise<string> {
  const prisma = await getPrisma();
  const engine = new ReviewerEngine({ store: sharedSagaStore(prisma), registry: createSupportToolRegistry(world), recheckAfterMs: 50 });
  const run = await engine.startRun({ title: `Tell ${to} about ${subject}`, agent: "support-agent" });
  const args = { to, subject, body: "Your order ships tomorrow." };
  const pivot = await run.requestPivot({ summary: "email the customer", plan: [{ tool: "send_email", args }] });
  await engine.decidePivot(pivot.id, { approve: true, actor: { type: "user", id: "rita@example.com" }, planHash: pivot.planHash });
  expect((await run.call("send_email", args)).status).toBe("ok");
  const report = await engine.unwind(run.runId, { type: "system", id: "test" }, "the order was cancelled");
  expect(report.corrections).toEqual([0]);
  return (await prisma.correction.findFirstOrThrow({ where: { runId: run.runId } })).id;
}

/** A worker over the API with a worker token (the production shape), or beside the database. */
async function worker(mode: "http" | "db" = "http"): Promise<Worker> {
  const prisma = await getPrisma();
  const registry = createSupportToolRegistry(world);
  if (mode === "db") {
    return new Worker({ queue: prismaTaskQueue(prisma), engine: new ReviewerEngine({ store: new PrismaSagaStore(prisma), registry, recheckAfterMs: 50 }), workerId: "db-worker", tools: ["send_email"] });
  }
  const transport = { baseUrl: "http://sagaboard.test", token: workerSecret, fetch: routeFetch };
  return new Worker({ queue: new HttpTaskQueue(transport), engine: new SagaEngine({ store: new HttpSagaStore(transport), registry, recheckAfterMs: 50 }), workerId: "http-worker", tools: ["send_email"] });
}

/** Messages the email simulator actually sent under the send run's first step key. */
function sentUnderKey(correctionId: string, stepIdx = 0): number {
  return world.ledger.count({ op: "email.send", key: stepKey(sendRunId(correctionId), stepIdx, "send_email") });
}

async function history(id: string) {
  return (await get("sam", id)).json.history.map((h: { type: string }) => h.type) as string[];
}

describe("the correction desk", () => {
  it("ranks internal first and customer last, oldest first within a rank, with age and SLA", async () => {
    const customer = await unwoundEmail("ann@example.com", "Order 41");
    const prisma = await getPrisma();
    const step = await prisma.correction.findUniqueOrThrow({ where: { id: customer }, select: { stepId: true, runId: true } });
    const original = await prisma.step.findUniqueOrThrow({ where: { id: step.stepId } });
    // An internal note on another step of that run: drafted later, listed first.
    const internal = await prisma.step.create({
      data: {
        id: `stp_int_${Date.now()}`, runId: step.runId, stepIdx: 9, tool: "update_crm_record", toolClass: "COMPENSATABLE", stepKey: `key-int-${Date.now()}`,
        args: {}, argsHash: "x", status: "CONFIRMED", phase: "STAGING", policyVersion: 1, audience: ["finance"], createdAt: original.createdAt,
      },
    });
    await sharedSagaStore(prisma).createCorrection(
      { id: `cor_internal_${Date.now()}`, runId: step.runId, stepId: internal.id, audience: ["finance"], rank: 0, subject: "Internal note", body: "Ignore the charge.", draftedBy: "unwind" },
      { type: "correction.drafted", actor: { type: "system", id: "test" }, data: { audience: ["finance"] } },
    );
    // A draft whose audience nobody recorded reads as customer-facing, so it is stored (and sorted) at rank 2...
    const blankStep = await prisma.step.create({
      data: {
        id: `stp_blank_${Date.now()}`, runId: step.runId, stepIdx: 10, tool: "send_email", toolClass: "IRREVERSIBLE", stepKey: `key-blank-${Date.now()}`,
        args: {}, argsHash: "x", status: "CONFIRMED", phase: "STAGING", policyVersion: 1, audience: [], createdAt: original.createdAt,
      },
    });
    const blank = `cor_blank_${Date.now()}`;
    await sharedSagaStore(prisma).createCorrection(
      { id: blank, runId: step.runId, stepId: blankStep.id, audience: [], rank: 0, subject: "Blank audience", body: "Sorry.", draftedBy: "unwind" },
      { type: "correction.drafted", actor: { type: "system", id: "test" }, data: { audience: [] } },
    );
    expect((await prisma.correction.findUniqueOrThrow({ where: { id: blank } })).rank).toBe(2);
    // ...and a draft stored at rank 0 before that rule is moved there by the migration.
    await prisma.correction.update({ where: { id: blank }, data: { rank: 0 } });
    const folder = testStoreKind() === "postgresql" ? "prisma/postgres/migrations" : "prisma/migrations";
    const sql = readFileSync(`${folder}/20261203230000_correction_rank_unknown_audience/migration.sql`, "utf8").replace(/^--.*$/gm, "").trim();
    await prisma.$executeRawUnsafe(sql.replace(/;$/, ""));
    expect((await prisma.correction.findUniqueOrThrow({ where: { id: blank } })).rank).toBe(2);

    const res = await as("vic", listRoute.GET, "/api/dashboard/corrections");
    expect(res.status).toBe(200);
    const ranks = res.json.items.map((i: { rank: number }) => i.rank);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(res.json.items[0]).toMatchObject({ rank: 0, subject: "Internal note" });
    const item = res.json.items.find((i: { id: string }) => i.id === customer);
    expect(item).toMatchObject({ state: "draft", rank: 2, audience: ["customer"], recipients: ["ann@example.com"], sla: { state: "ok" } });
    expect(res.json.canHandle).toBe(false);
    const customers = await as("vic", listRoute.GET, "/api/dashboard/corrections?audience=customer");
    expect(customers.json.items.every((i: { audience: string[] }) => i.audience.includes("customer"))).toBe(true);
    const detail = await get("vic", customer);
    expect(detail.json).toMatchObject({ original: { tool: "send_email", recipients: ["ann@example.com"], subject: "Order 41", seen: true }, drafted: { subject: "Correction: Order 41" } });
    expect(detail.json.history[0]).toMatchObject({ type: "correction.drafted" });

    // A page at a time, in the same order: pages of 1 over every correction add up to the whole list.
    const whole = (await as("vic", listRoute.GET, "/api/dashboard/corrections?status=all&take=500")).json;
    expect(whole.nextCursor).toBeNull();
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: CallResult = await as("vic", listRoute.GET, `/api/dashboard/corrections?status=all&take=1${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      paged.push(...page.json.items.map((i: { id: string }) => i.id));
      cursor = page.json.nextCursor;
    } while (cursor && paged.length < 50);
    expect(paged).toEqual(whole.items.map((i: { id: string }) => i.id));
    expect(paged.length).toBeGreaterThanOrEqual(3);
    expect((await as("vic", listRoute.GET, "/api/dashboard/corrections?status=all&cursor=cor_nope")).json).toMatchObject({ items: [], nextCursor: null });
    // The chips' counts, against the rows.
    const rows = await prisma.correction.findMany({ select: { status: true, claimedBy: true } });
    expect(whole.counts).toEqual({
      draft: rows.filter((r) => r.status === "DRAFT" && !r.claimedBy).length,
      claimed: rows.filter((r) => r.status === "DRAFT" && r.claimedBy).length,
      sending: rows.filter((r) => r.status === "SENDING").length,
      sent: rows.filter((r) => r.status === "SENT").length,
      dismissed: rows.filter((r) => r.status === "DISMISSED").length,
    });
  });

  it("claim once, edit, send: one message even with Send twice, a replayed request and a second person", async () => {
    const id = await unwoundEmail("bob@example.com", "Refund 77");
    expect((await claim("sam", id)).json).toMatchObject({ ok: true, correction: { state: "claimed", claimedBy: emails.sam } });
    const held = await claim("sue", id);
    expect(held.json).toMatchObject({ ok: false, reason: "held", heldBy: emails.sam, heldByName: "sam (support)" });

    const v1 = (await get("sam", id)).json.version as number;
    const edited = await edit("sam", id, { expectedVersion: v1, body: "Please ignore our last email; your refund is on its way.", recipients: ["bob@example.com"] });
    expect(edited.status).toBe(200);
    // A stale version is refused by field, and nothing changes.
    const stale = await edit("sam", id, { expectedVersion: v1, subject: "other" });
    expect(stale.status).toBe(409);
    expect(stale.json.error.details).toEqual([expect.objectContaining({ path: "expectedVersion" })]);

    const page = (await get("sam", id)).json;
    expect(page.drafted.body).toMatch(/Please disregard/);
    expect(page.body).toBe("Please ignore our last email; your refund is on its way.");
    const [a, b] = await Promise.all([send("sam", id, page.version), send("sam", id, page.version)]);
    expect([a.status, b.status], JSON.stringify([a.json, b.json])).toEqual([200, 200]);
    expect([a.json.repeated, b.json.repeated].sort()).toEqual([false, true]);
    expect((await send("sam", id, page.version)).json).toMatchObject({ repeated: true, sendRunId: sendRunId(id) });
    const other = await send("sue", id, page.version);
    expect(other.status).toBe(409);
    expect(other.json.error.message).toContain(emails.sam);
    expect((await get("sam", id)).json).toMatchObject({ state: "sending", send: "queued" });
    expect(sentUnderKey(id)).toBe(0); // the server never calls the provider: the worker does

    const w = await worker("http");
    expect((await w.runOnce()).map((o) => o.outcome)).toEqual(["done"]);
    expect(await w.runOnce()).toEqual([]);
    expect(sentUnderKey(id)).toBe(1);
    expect(world.ledger.operations({ op: "email.send", outcome: "effect" }).filter((e) => (e.args as { to?: string }).to === "bob@example.com" && (e.args as { body?: string }).body?.startsWith("Please ignore"))).toHaveLength(1);

    const sent = (await get("sam", id)).json;
    expect(sent).toMatchObject({ state: "sent", send: "confirmed", sentBy: emails.sam });
    expect(sent.messageId).toBeTruthy();
    expect(sent.sendStepId).toBeTruthy();
    const { runId: unwoundRun } = await (await getPrisma()).correction.findUniqueOrThrow({ where: { id } });
    expect((await (await getPrisma()).run.findUniqueOrThrow({ where: { id: unwoundRun } })).status).toBe("UNWOUND"); // nothing left for people
    expect(await history(id)).toEqual(expect.arrayContaining(["correction.drafted", "correction.claimed", "correction.edited", "correction.send_requested", "step.intended", "step.confirmed", "correction.sent"]));
    // Sending it again, after it went out: refused, and still one message.
    const again = await send("sam", id, sent.version);
    expect(again.status).toBe(422);
    expect(again.json.error.message).toMatch(/already sent/);
    expect(again.json.error.details).toEqual([expect.objectContaining({ path: "status" })]);
    expect(sentUnderKey(id)).toBe(1);
    const row = await (await getPrisma()).correction.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ status: "SENT", originalBody: expect.stringMatching(/Please disregard/), editedBy: emails.sam, sentBy: emails.sam });
  });

  it("an email timeout during the send leaves the step UNKNOWN; the next worker round settles the one message by key", async () => {
    const id = await unwoundEmail("cat@example.com", "Invoice 9");
    await claim("sam", id);
    const { version } = (await get("sam", id)).json;
    expect((await send("sam", id, version)).status).toBe(200);
    world.faults.inject("email.send", { kind: "timeout_after_effect" });
    const w = await worker("db");
    expect((await w.runOnce()).map((o) => o.outcome)).toEqual(["retried"]);
    const unknown = (await get("sam", id)).json;
    expect(unknown).toMatchObject({ state: "sending", send: "outcome_unknown" });
    expect(unknown.sendText).toMatch(/Outcome unknown/);
    expect(sentUnderKey(id)).toBe(1); // it did go out: only the answer was lost

    await new Promise((r) => setTimeout(r, 60)); // the provider's search lags behind its writes
    expect((await w.runOnce()).map((o) => o.outcome)).toEqual(["done"]);
    expect(sentUnderKey(id)).toBe(1);
    const settled = (await get("sam", id)).json;
    expect(settled).toMatchObject({ state: "sent", send: "confirmed" });
    expect(settled.history.map((h: { type: string }) => h.type)).toEqual(expect.arrayContaining(["step.unknown", "correction.sent"]));
  });

  it("a dismissed correction sends nothing and records who and why", async () => {
    const id = await unwoundEmail("dan@example.com", "Coupon");
    await claim("sue", id);
    const noReason = await dismiss("sue", id, { reason: "  " });
    expect(noReason.status).toBe(400);
    expect(noReason.json.error.details[0].path).toMatch(/reason/);
    expect((await dismiss("sue", id, { reason: "the customer never saw the original" })).status).toBe(200);
    const page = (await get("sue", id)).json;
    expect(page).toMatchObject({ state: "dismissed", dismissedBy: emails.sue, dismissReason: "the customer never saw the original" });
    const refused = await send("sue", id, page.version);
    expect(refused.status).toBe(422);
    expect(refused.json.error.message).toMatch(/dismissed/);
    expect(await (await worker()).runOnce()).toEqual([]);
    expect(sentUnderKey(id)).toBe(0);
    expect(page.history.map((h: { type: string }) => h.type)).toContain("correction.dismissed");
    // The correction was the last thing left for people: the unwound run is finished, not NEEDS_ATTENTION.
    const prisma = await getPrisma();
    const { runId } = await prisma.correction.findUniqueOrThrow({ where: { id } });
    expect((await prisma.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe("UNWOUND");
  });

  it("bad input is refused naming the field; the stored draft and its history are unchanged", async () => {
    const id = await unwoundEmail("eve@example.com", "Delivery");
    await claim("sam", id);
    const before = (await get("sam", id)).json;
    const emptyBody = await edit("sam", id, { expectedVersion: before.version, body: "   " });
    expect(emptyBody.status).toBe(400);
    expect(emptyBody.json.error.details).toEqual([expect.objectContaining({ path: "body.body" })]);
    const badRecipient = await edit("sam", id, { expectedVersion: before.version, recipients: ["eve@example.com", "not-an-address"] });
    expect(badRecipient.status).toBe(400);
    expect(badRecipient.json.error.details).toEqual([expect.objectContaining({ path: "body.recipients.1" })]);
    const noRecipients = await edit("sam", id, { expectedVersion: before.version, recipients: [] });
    expect(noRecipients.status).toBe(400);
    const after = (await get("sam", id)).json;
    expect([after.subject, after.body, after.recipients, after.version]).toEqual([before.subject, before.body, before.recipients, before.version]);
    expect(after.history).toEqual(before.history);
    // Someone else's draft: not theirs to edit or send.
    expect((await edit("sue", id, { expectedVersion: before.version, body: "mine now" })).status).toBe(409);
    expect((await send("sue", id, before.version)).status).toBe(409);
    expect((await as("sam", releaseRoute.POST, `/api/dashboard/corrections/${id}/release`, { ...p(id), body: {} })).json).toMatchObject({ ok: true, correction: { state: "draft" } });
  });

  it("viewers and reviewers can read but not claim, edit, dismiss or send (403)", async () => {
    const id = await unwoundEmail("fay@example.com", "Survey");
    for (const who of ["vic", "rita"]) {
      expect((await get(who, id)).status).toBe(200);
      expect((await claim(who, id)).status).toBe(403);
      expect((await edit(who, id, { expectedVersion: 0, body: "x" })).status).toBe(403);
      expect((await dismiss(who, id, { reason: "x" })).status).toBe(403);
      expect((await send(who, id, 0)).status).toBe(403);
    }
    expect((await claim("ada", id)).json).toMatchObject({ ok: true });
    expect(sentUnderKey(id)).toBe(0);
  });
});
