/**
 * The desks, fourth pass (issue 48): what a reviewer, support and an admin still tripped over, each
 * with a real agent behind it (HTTP API, hosted simulated systems), each screen shot at 1366 and 390 px
 * for a person to look at (test-results/screenshots/fourth-*.png):
 * - a bulk approval lists each held call's arguments as labelled values and its run;
 * - the run page agrees with a recorded manual repair (one rule for where a step stands);
 * - support reads the reviewer's reason on a correction a revoke drafted;
 * - keyboard reject (r, type, Ctrl+Enter) sends what was typed, under no instruction nobody chose;
 * - one deadline on the pivot (SLA banner and DEADLINE card agree), expired staged effects say so,
 *   and the wording after a rejection;
 * - an approved held call the agent never made is named on its run;
 * - at 390 px the pivot shows the plan and what is staged before Approve, and the header is a menu;
 * - a pull past the window says nothing was undone; amounts as money; reason codes as sentences;
 * - an unknown address gets the dashboard's not-found page; a favicon; no 403 in a viewer's console;
 *   a correction's send run says "Correction:" once.
 */
import type { PrismaClient } from "@/lib/core/db/prisma";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import type { RemoteWorld } from "@/lib/demo/sim/remote";
import { AGENT_STORE, customerFor, expect, stageReship, test, uniqueTag } from "./agent";
import { screenshotPath, shootBothWidths, signIn } from "./fixtures";
import { rawWordsOn } from "./words";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { HttpTaskQueue } from "@/packages/client/src/agent/client/http-task-queue";
import { Worker } from "@/packages/client/src/agent/worker";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

/** A reviewer's engine in the test process (for approving what a test needs approved beforehand). */
function reviewerEngine(db: PrismaClient, world: RemoteWorld): ReviewerEngine {
  return new ReviewerEngine({ store: new PrismaSagaStore(db), registry: createSupportToolRegistry(world) });
}

test.describe("the desks, fourth pass", () => {
  test("a bulk approval shows each held call's arguments and its run, so calls from different runs can be told apart", async ({ page, seedUser, agent }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const held: { title: string; to: string; subject: string }[] = [];
    for (const i of [1, 2]) {
      const title = `Bulk look ${i} ${tag}`;
      const to = customerFor(`${tag}-${i}`);
      const subject = `Delay ${i} (${tag})`;
      const run = await agent.engine.startRun({ title, agent: agent.name });
      expect((await run.call("send_email", { to, subject, body: `Body ${i}` })).status).toBe("approval_required");
      held.push({ title, to, subject });
    }
    await signIn(page, reviewer, "/escalations?kind=APPROVAL_REQUIRED");
    await page.getByLabel("Search this page").fill(tag);
    const rows = page.getByTestId("queue-row");
    await expect(rows).toHaveCount(2);
    await rows.nth(0).getByRole("checkbox").check();
    await rows.nth(1).getByRole("checkbox").check();
    const bar = page.getByTestId("bulk-bar");
    await bar.getByRole("button", { name: "Approve 2…" }).click();
    const items = bar.getByTestId("bulk-item");
    await expect(items).toHaveCount(2);
    for (const h of held) {
      const item = items.filter({ hasText: h.title });
      await expect(item).toHaveCount(1);
      // Labelled values, not JSON: "to" and "subject" beside their values; the raw form closed.
      await expect(item.locator("dl.values")).toContainText(h.to);
      await expect(item.locator("dl.values")).toContainText(h.subject);
      await expect(item.locator("dl.values")).toContainText(`Body ${held.indexOf(h) + 1}`);
      await expect(item.locator("details.raw-inline")).not.toHaveAttribute("open");
    }
    await shootBothWidths(page, "fourth-bulk-confirm");
  });

  test("after a recorded repair the run page says repaired by hand, never still out there", async ({ page, seedUser, db, agent, world }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const run = await agent.engine.startRun({ title: `Repair agrees ${tag}`, agent: agent.name });
    const outcome = await run.call("authorize_payment", { customerId: "cus_bo", amount: 700, currency: "eur" });
    if (outcome.status !== "ok") throw new Error("the authorisation should stage");
    await world.faults.inject("payments.cancelAuthorization", { kind: "reject", status: 409, code: "hold_locked" }, { times: 3 });
    await run.unwind("customer cancelled");
    await world.faults.clear();
    const escalation = await db.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "COMPENSATION_FAILED" } });

    await signIn(page, reviewer, `/runs/${run.runId}`);
    const steps = page.locator('section[aria-labelledby="steps"] tbody tr');
    await expect(steps.first()).toContainText("COMPENSATION FAILED");
    await expect(steps.first()).toContainText("still out there");

    await page.goto(`/escalations/${escalation.id}`);
    await page.getByRole("button", { name: "Claim" }).click();
    await page.getByLabel("What you did to answer the effect (required)").fill("Released the hold by hand in the payments console.");
    await page.getByLabel("External ref of the repair (optional)").fill(`rel_${tag}`);
    await page.getByRole("button", { name: "Record repair" }).click();
    await expect(page.getByTestId("repaired-by-hand")).toContainText("REPAIRED BY HAND");

    await page.goto(`/runs/${run.runId}`);
    await expect(steps.first()).toContainText("REPAIRED BY HAND");
    await expect(steps.first()).toContainText(`rel_${tag}`);
    await expect(steps.first()).not.toContainText("still out there");
    await expect(steps.first()).not.toContainText("COMPENSATION FAILED");
    // The log keeps what happened: the compensation did fail, and a person answered it.
    const step = await db.step.findUniqueOrThrow({ where: { id: escalation.stepId! } });
    expect(step.status).toBe("COMPENSATION_FAILED");
    expect(step.manualRepair).toMatchObject({ repairedBy: reviewer.email, repairRef: `rel_${tag}` });
    await shootBothWidths(page, "fourth-run-repaired");
  });

  test("support reads the reviewer's reason on a correction a revoke drafted", async ({ page, baseURL, seedUser, db, agent, world }) => {
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const rita = await seedUser("reviewer", { name: `Rita Reason ${tag}` });
    const sam = await seedUser("support");
    const run = await agent.engine.startRun({ title: `Revoke reason ${tag}`, agent: agent.name, onBehalfOf: customer });
    const mail = { to: customer, subject: `Order ${tag} shipped`, body: "Your order shipped." };
    const pivot = await run.requestPivot({ summary: "email the customer", plan: [{ tool: "send_email", args: mail }] });
    await reviewerEngine(db, world).decidePivot(pivot.id, { approve: true, actor: { type: "user", id: rita.email }, planHash: pivot.planHash });
    expect((await run.call("send_email", mail)).status).toBe("ok");
    await run.complete();
    const step = await db.step.findFirstOrThrow({ where: { runId: run.runId, tool: "send_email" } });

    await signIn(page, rita);
    const reason = `Wrong order: this was order ${tag}-B; tell Bo the first email was a mistake.`;
    const pulled = await page.request.post(`/api/dashboard/steps/${step.id}/revoke`, { data: { reason }, headers: { origin: baseURL ?? "" } });
    expect(pulled.status()).toBe(200);
    const correction = await db.correction.findFirstOrThrow({ where: { runId: run.runId } });
    expect(correction.draftedBy).toMatch(/^revoke:rvk_/);

    await page.context().clearCookies();
    await signIn(page, sam, `/corrections/${correction.id}`);
    const why = page.getByTestId("why-drafted");
    await expect(why).toContainText(reason);
    await expect(why).toContainText(`Rita Reason ${tag}`);
    await expect(why).toContainText("as reviewer");
    await shootBothWidths(page, "fourth-correction-why");
  });

  test("keyboard reject: r, the reason typed, Ctrl+Enter sends the typed reason under no instruction nobody chose", async ({ page, seedUser, db, agent }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const run = await agent.engine.startRun({ title: `Keyboard reject ${tag}`, agent: agent.name, onBehalfOf: customer });
    const staged = await stageReship(run, customer, tag);
    const pivot = await run.requestPivot({
      summary: "Open the ticket and capture the hold.",
      plan: [{ tool: "capture_payment", args: { paymentIntentId: staged.paymentIntentId, amount: staged.amount } }],
    });
    await signIn(page, reviewer, `/pivots/${pivot.id}`);
    const reasonBox = page.getByLabel("Reason for the agent (required to reject)");
    await expect(async () => {
      await page.keyboard.press("r");
      await expect(reasonBox).toBeFocused({ timeout: 1_000 });
    }).toPass({ timeout: 15_000 });
    const typed = "Do not open the ticket";
    await page.keyboard.type(typed);
    await page.keyboard.press("Control+Enter");
    const decided = page.locator(".decide-panel .decided");
    await expect(decided).toContainText(`Rejected by ${reviewer.email}`);
    await expect(decided).toContainText(`The agent was told, in your words: “${typed}”`);
    await expect(decided).not.toContainText("Change an argument");
    const row = await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } });
    expect([row.status, row.reason, row.reasonCode]).toEqual(["REJECTED", typed, "OTHER"]);
    // The agent reads back exactly what was typed.
    const read = await run.awaitPivot(pivot.id, { timeoutMs: 5_000 });
    expect([read.reason, read.reasonCode]).toEqual([typed, "OTHER"]);
    await shootBothWidths(page, "fourth-keyboard-reject");
  });

  test("one deadline: the SLA banner and the DEADLINE card name the same moment; an expired staged effect says expired; a rejection's wording", async ({ page, seedUser, db, agent }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const run = await agent.engine.startRun({ title: `One deadline ${tag}`, agent: agent.name, onBehalfOf: customer });
    const staged = await stageReship(run, customer, tag);
    // The agent asks for a week; the default SLA rejects an undecided pivot after 24 h, which comes first.
    const pivot = await run.requestPivot({
      summary: "Capture the hold.",
      plan: [{ tool: "capture_payment", args: { paymentIntentId: staged.paymentIntentId, amount: staged.amount } }],
      deadline: new Date(Date.now() + 7 * 24 * 3600 * 1000),
    });
    // The authorisation was staged three days ago (this test's own row): its window has closed.
    const auth = await db.step.findFirstOrThrow({ where: { runId: run.runId, tool: "authorize_payment" } });
    await db.step.update({ where: { id: auth.id }, data: { createdAt: new Date(Date.now() - 3 * 24 * 3600 * 1000) } });
    const row = await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } });
    const rejectAt = new Date(row.createdAt.getTime() + 24 * 3600 * 1000).toISOString().slice(0, 19).replace("T", " ");

    await signIn(page, reviewer, `/pivots/${pivot.id}`);
    const card = page.getByTestId("decide-by");
    await expect(card).toContainText("rejected then if nobody decides");
    await expect(card).toContainText(rejectAt);
    await expect(card).toContainText(/in 23h 5\dm/);
    await expect(card).not.toContainText("6d");
    await expect(page.getByTestId("sla-countdown")).toContainText(/rejected in 23h 5\dm/);
    await expect(page.getByTestId("expired-staged")).toContainText("1 expired");
    const facts = page.locator(".facts");
    await expect(facts).toContainText("2 of 3");
    await expect(facts).not.toContainText(/first expires \d+[smhd].* ago/);
    await expect(page.getByTestId("staged-expired")).toContainText("can no longer be released");
    await expect(page.getByTestId("staged-expired")).toContainText("ago");
    await shootBothWidths(page, "fourth-pivot-deadline");

    await page.getByLabel("Reason for the agent (required to reject)").fill("Not this week.");
    await page.getByRole("button", { name: /^Reject/ }).click();
    await expect(page.locator(".decide-panel .decided")).toContainText("Rejected by");
    await expect(facts).toContainText("still staged: released only if the agent unwinds the run");
    await expect(facts).not.toContainText("released as the run unwinds");
  });

  test("an approved held call the agent never made is named on its run; once made, it is not", async ({ page, seedUser, db, agent, world }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const run = await agent.engine.startRun({ title: `Approved never sent ${tag}`, agent: agent.name });
    const mail = { to: customerFor(tag), subject: `Your refund (${tag})`, body: "Your refund is on its way." };
    const held = await run.call("send_email", mail);
    if (held.status !== "approval_required" || !held.escalationId) throw new Error("the email should be held");
    await reviewerEngine(db, world).decideHeldCall(held.escalationId, { approve: true, actor: { type: "user", id: reviewer.email } });

    await signIn(page, reviewer, `/runs/${run.runId}`);
    const progress = page.getByTestId("run-progress");
    await expect(progress).toContainText("approved the held call send_email, but the agent has not made it yet: nothing has gone out");
    await expect(progress).not.toContainText("The agent is staging");
    await expect(page.getByTestId("approved-not-made")).toContainText(`approved by ${reviewer.email}`);
    await expect(page.getByTestId("approved-not-made").getByRole("link", { name: "Open the approval" })).toHaveAttribute("href", `/escalations/${held.escalationId}`);
    await shootBothWidths(page, "fourth-approved-not-made");

    expect((await run.call("send_email", mail)).status).toBe("ok");
    await expect(page.getByTestId("approved-not-made")).toHaveCount(0);
    await expect(progress).toContainText("The agent is staging");
  });

  test("at 390 px the pivot shows the plan and what is staged before Approve, and the header is a menu", async ({ page, seedUser, agent }) => {
    const admin = await seedUser("admin", { name: "Ada Admin-Lovelace" });
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const run = await agent.engine.startRun({ title: `Phone pivot ${tag}`, agent: agent.name, onBehalfOf: customer });
    const staged = await stageReship(run, customer, tag);
    const pivot = await run.requestPivot({ summary: "Capture the hold.", plan: [{ tool: "capture_payment", args: { paymentIntentId: staged.paymentIntentId, amount: staged.amount } }] });

    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, reviewer, `/pivots/${pivot.id}`);
    const top = async (selector: string) => (await page.locator(selector).first().boundingBox())!.y;
    const approve = await top(".decide-panel button.approve");
    expect(await top('section[aria-labelledby="plan"]')).toBeLessThan(approve);
    expect(await top('section[aria-labelledby="staged"]')).toBeLessThan(approve);
    await page.screenshot({ path: screenshotPath("fourth-pivot-phone-order-390"), fullPage: true });

    // The header at 390 px: a Menu that opens every destination, nothing past the edge.
    await page.context().clearCookies();
    await signIn(page, admin, "/escalations");
    await expect(page.getByRole("navigation", { name: "Main", exact: true })).toBeHidden();
    const menu = page.getByTestId("nav-menu");
    await menu.getByText("Menu").click();
    for (const name of ["Runs", "Overview", "Escalations", "Corrections", "Revokes", "Audit", "Tools", "Users", "Tokens", "Notifications"]) {
      const link = menu.getByRole("link", { name, exact: true });
      await expect(link).toBeVisible();
      const box = (await link.boundingBox())!;
      expect(box.x + box.width, `${name} fits the phone`).toBeLessThanOrEqual(390);
    }
    await expect(menu.getByRole("link", { name: "Escalations", exact: true })).toHaveAttribute("aria-current", "page");
    await page.screenshot({ path: screenshotPath("fourth-nav-menu-390"), fullPage: false });
    await menu.getByRole("link", { name: "Audit", exact: true }).click();
    await expect(page).toHaveURL(/\/audit/);
    await expect(menu).not.toHaveAttribute("open");

    // At 1366 px the row shows every link and the admin's whole name.
    await page.setViewportSize({ width: 1366, height: 900 });
    const row = page.getByRole("navigation", { name: "Main", exact: true });
    await expect(row.getByRole("link")).toHaveCount(10);
    // Nothing in the header overlaps: each part ends before the next begins.
    const boxes = await page.locator(".site-header .nav-row a, .site-header [data-testid='user-menu'] > *").evaluateAll((els) =>
      els.map((el) => el.getBoundingClientRect()).filter((r) => r.width > 0).map((r) => [Math.round(r.left), Math.round(r.right)] as const),
    );
    for (let i = 1; i < boxes.length; i++) expect(boxes[i]![0], `header part ${i} starts after part ${i - 1} ends`).toBeGreaterThanOrEqual(boxes[i - 1]![1]);
    const name = page.getByTestId("user-menu").getByText("Ada Admin-Lovelace");
    await expect(name).toBeVisible();
    expect(await name.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await shootBothWidths(page, "fourth-header-admin");
  });

  test("a pull past the window says nothing was undone; the escalation reads amounts as money and reason codes as sentences", async ({ page, baseURL, seedUser, db, agent, world }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const run = await agent.engine.startRun({ title: `Late pull ${tag}`, agent: agent.name });
    const charged = await run.call("charge_card", { customerId: "cus_bo", amount: 700, currency: "eur", reason: "reship fee" });
    if (charged.status !== "ok") throw new Error("the charge should go through");
    await run.complete();
    const step = await db.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } });
    // This test's own row: charged long ago, past its tool's window.
    await db.step.update({ where: { id: step.id }, data: { createdAt: new Date(Date.now() - 40 * 24 * 3600 * 1000) } });

    await signIn(page, reviewer, `/runs/${run.runId}`);
    const pulled = await page.request.post(`/api/dashboard/steps/${step.id}/revoke`, { data: { reason: "wrong customer" }, headers: { origin: baseURL ?? "" } });
    expect(pulled.status()).toBe(200);
    const body = (await pulled.json()) as { message: string };
    expect(body.message).toMatch(/^Nothing was undone: the window had closed/);
    expect(body.message).not.toContain("Pulled back by you");
    await page.reload();
    await expect(page.getByText(/Asked to pull back, past the window, by/)).toBeVisible();
    await expect(page.getByText("Pulled back by")).toHaveCount(0);

    // A held call's reason in the run's escalations and the audit log: a sentence, not IRREVERSIBLE.
    const heldRun = await agent.engine.startRun({ title: `Reason words ${tag}`, agent: agent.name });
    await heldRun.call("send_email", { to: customerFor(tag), subject: `Hi ${tag}`, body: "Hi." });
    await page.goto(`/audit?run=${encodeURIComponent(heldRun.runId)}`);
    await expect(page.getByText("it cannot be taken back and no approved pivot covers it").first()).toBeVisible();
    expect(await rawWordsOn(page, ["send_email"])).toEqual([]);

    // A failed undo's remains: money in the call's currency.
    const refused = await agent.engine.startRun({ title: `Money words ${tag}`, agent: agent.name });
    await refused.call("authorize_payment", { customerId: "cus_bo", amount: 700, currency: "eur" });
    await world.faults.inject("payments.cancelAuthorization", { kind: "reject", status: 409, code: "hold_locked" }, { times: 3 });
    await refused.unwind("customer cancelled");
    await world.faults.clear();
    const failed = await db.escalation.findFirstOrThrow({ where: { runId: refused.runId, kind: "COMPENSATION_FAILED" } });
    await page.goto(`/escalations/${failed.id}`);
    const panel = page.locator('section[aria-labelledby="context"]');
    await expect(panel).toContainText("€7.00");
    await expect(panel).not.toContainText("amount 700");
    await shootBothWidths(page, "fourth-escalation-money");
  });

  test("cosmetic: the not-found page has the header and a way back; a favicon; no 403 in a viewer's console; \"Correction:\" once", async ({ page, baseURL, seedUser, db, agent, world }) => {
    const viewer = await seedUser("viewer");
    const support = await seedUser("support");
    const tag = uniqueTag();

    await signIn(page, viewer);
    const missing = await page.goto(`/no/such/page-${tag}`);
    expect(missing?.status()).toBe(404);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("This page does not exist");
    await expect(page.getByTestId("user-menu")).toBeVisible();
    await expect(page.getByRole("main").getByRole("link", { name: "← All runs" })).toBeVisible();
    await shootBothWidths(page, "fourth-not-found");
    const icon = await page.locator('link[rel="icon"]').first().getAttribute("href");
    expect(icon).toBeTruthy();
    expect((await page.request.get(icon!)).status()).toBe(200);

    // A viewer on an escalation with a step: nothing the page asks for is refused.
    const run = await agent.engine.startRun({ title: `Viewer console ${tag}`, agent: agent.name });
    await run.call("authorize_payment", { customerId: "cus_bo", amount: 700, currency: "eur" });
    await world.faults.inject("payments.cancelAuthorization", { kind: "reject", status: 409, code: "hold_locked" }, { times: 3 });
    await run.unwind("customer cancelled");
    await world.faults.clear();
    const escalation = await db.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "COMPENSATION_FAILED" } });
    const refusedOrMissing: string[] = [];
    page.on("response", (r) => {
      if (r.status() === 403 || r.status() === 404) refusedOrMissing.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`/escalations/${escalation.id}`);
    await expect(page.getByRole("heading", { name: "What happened" })).toBeVisible();
    await page.waitForTimeout(2_500);
    expect(refusedOrMissing).toEqual([]);

    // A correction sent from a draft whose subject says "Correction:" already: its send run says it once.
    const customer = customerFor(tag);
    const sent = await agent.engine.startRun({ title: `Correction once ${tag}`, agent: agent.name, onBehalfOf: customer });
    const mail = { to: customer, subject: `Order ${tag} ships`, body: "It ships." };
    const pivot = await sent.requestPivot({ summary: "email", plan: [{ tool: "send_email", args: mail }] });
    await reviewerEngine(db, world).decidePivot(pivot.id, { approve: true, actor: { type: "user", id: "rita@example.com" }, planHash: pivot.planHash });
    expect((await sent.call("send_email", mail)).status).toBe("ok");
    await sent.unwind("cancelled after the email went out");
    const correction = await db.correction.findFirstOrThrow({ where: { runId: sent.runId } });
    expect(correction.subject).toMatch(/^Correction: /);
    await page.context().clearCookies();
    await signIn(page, support);
    const headers = { origin: baseURL ?? "" };
    expect((await page.request.post(`/api/dashboard/corrections/${correction.id}/claim`, { headers })).status()).toBe(200);
    const claimed = await db.correction.findUniqueOrThrow({ where: { id: correction.id } });
    const send = await page.request.post(`/api/dashboard/corrections/${correction.id}/send`, { data: { expectedVersion: claimed.version }, headers });
    expect(send.status()).toBe(200);
    const { sendRunId } = (await send.json()) as { sendRunId: string };
    const sendRun = await db.run.findUniqueOrThrow({ where: { id: sendRunId } });
    expect(sendRun.title).toBe(correction.subject);
    expect(sendRun.title).not.toMatch(/Correction: Correction:/);
  });

  test("operations: an admin sees the worker that took a task, the queue and the notifier; a reviewer is refused", async ({ page, baseURL, seedUser, db, agent, world }) => {
    const admin = await seedUser("admin");
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const run = await agent.engine.startRun({ title: `Ops ${tag}`, agent: agent.name });
    const charged = await run.call("charge_card", { customerId: "cus_bo", amount: 900, currency: "eur", reason: "ops" });
    if (charged.status !== "ok") throw new Error("the charge should go through");
    await run.complete();
    const step = await db.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } });

    await signIn(page, reviewer);
    expect((await page.request.post(`/api/dashboard/steps/${step.id}/revoke`, { data: { reason: "ops check" }, headers: { origin: baseURL ?? "" } })).status()).toBe(200);
    const refused = await page.goto("/admin/operations");
    expect(refused?.status()).toBe(403);
    expect((await page.request.get("/api/dashboard/admin/operations")).status()).toBe(403);

    // A worker over the API takes the refund task.
    const workerId = `e2e-ops-worker-${tag}`;
    const { secret } = await createAgentToken(db, { name: workerId, tools: ["charge_card"], role: "worker", createdBy: "system:e2e" });
    const transport = { baseUrl: baseURL ?? "", token: secret };
    const engine = new SagaEngine({ store: new HttpSagaStore({ ...transport, ...AGENT_STORE }), registry: createSupportToolRegistry(world), recheckAfterMs: 500, backoffMs: 50 });
    const worker = new Worker({ queue: new HttpTaskQueue(transport), engine, workerId, tools: ["charge_card"] });
    for (let i = 0; i < 3 && (await worker.runOnce()).length > 0; i++);
    expect((await db.workerTask.findFirstOrThrow({ where: { stepId: step.id } })).status).toBe("DONE");

    await page.context().clearCookies();
    await signIn(page, admin, "/overview");
    await page.getByRole("link", { name: "Operations" }).click();
    await expect(page.getByRole("heading", { name: "Operations", level: 1 })).toBeVisible();
    const row = page.getByTestId("ops-worker").filter({ hasText: workerId });
    await expect(row).toContainText("charge_card");
    await expect(row.locator('td[data-label="Done (1 h)"]')).toHaveText("1");
    await expect(page.getByTestId("ops-waiting")).toBeVisible();
    await expect(page.getByText(/Newest error|No delivery has recorded an error/)).toBeVisible();
    expect(await rawWordsOn(page, ["charge_card"])).toEqual([]);
    await shootBothWidths(page, "fourth-operations");
  });
});
