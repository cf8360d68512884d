/**
 * The revoke trigger in the browser, with a real agent and a worker over the API: a reviewer pulls
 * back a confirmed charge within its window while a second reviewer pulls it at the same moment;
 * the hosted payment ledger shows exactly one refund and the record shows who pulled it. Past the
 * window the button escalates instead. Support sees no trigger and the server refuses it with 403.
 */
import type { APIResponse } from "@playwright/test";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { HttpTaskQueue } from "@/packages/client/src/agent/client/http-task-queue";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import type { RemoteWorld } from "@/lib/demo/sim/remote";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { Worker } from "@/packages/client/src/agent/worker";
import { effects, expect, test, uniqueTag, type TestAgent, AGENT_STORE } from "./agent";
import { screenshotPath, signIn } from "./fixtures";

/** A worker in the test process over the server's API with a worker token, holding the payment connectors. */
async function paymentsWorker(db: PrismaClient, baseUrl: string, world: RemoteWorld): Promise<Worker> {
  const { secret } = await createAgentToken(db, { name: `e2e-refund-worker-${uniqueTag()}`, tools: ["charge_card"], role: "worker", createdBy: "system:e2e" });
  const transport = { baseUrl, token: secret };
  const engine = new SagaEngine({ store: new HttpSagaStore({ ...transport, ...AGENT_STORE }), registry: createSupportToolRegistry(world), recheckAfterMs: 500, backoffMs: 50 });
  return new Worker({ queue: new HttpTaskQueue(transport), engine, workerId: `e2e-refund-worker-${uniqueTag()}`, tools: ["charge_card"] });
}

/** A completed run whose one step is a confirmed card charge; its step id and the charge's payment id. */
async function chargedRun(agent: TestAgent, title: string): Promise<{ runId: string; paymentId: string }> {
  const run = await agent.engine.startRun({ title, agent: agent.name });
  const charged = await run.call("charge_card", { customerId: "cus_bo", amount: 1500, currency: "eur", reason: "reship fee" });
  if (charged.status !== "ok" || !charged.externalRef) throw new Error(`the charge should go through, got ${JSON.stringify(charged)}`);
  await run.complete();
  return { runId: run.runId, paymentId: charged.externalRef };
}

test("a reviewer pulls back a charge within its window: one refund even when two reviewers pull at once, and the record shows who", async ({ page, db, world, baseURL, seedUser, agent, browser }) => {
  const title = `Charge for order 2001 (${uniqueTag()})`;
  const { runId, paymentId } = await chargedRun(agent, title);
  const step = await db.step.findFirstOrThrow({ where: { runId, tool: "charge_card" } });
  const rita = await seedUser("reviewer", { name: "Rita Revoke" });
  const rob = await seedUser("reviewer", { name: "Rob Revoke" });

  await signIn(page, rita, `/runs/${runId}`);
  const panel = page.locator('section[aria-labelledby="revoke-title"]');
  await expect(panel).toContainText("Window closes in 23h");
  await panel.getByRole("button", { name: "Pull back…" }).click();
  const confirm = panel.getByRole("form", { name: "Pull back charge_card (step 0)" });
  await expect(confirm).toContainText("The worker runs refund_charge in payments under its own key");
  await page.screenshot({ path: screenshotPath("revoke-confirm"), fullPage: true });
  // An empty reason is refused in the page, and nothing is pulled.
  await confirm.getByRole("button", { name: "Pull back charge_card" }).click();
  await expect(confirm.getByRole("alert")).toContainText("Say why");
  expect(await db.revoke.count({ where: { stepId: step.id } })).toBe(0);

  // Rob pulls the same step from another browser at the same moment Rita confirms.
  const robContext = await browser.newContext({ baseURL });
  const robPage = await robContext.newPage();
  await signIn(robPage, rob);
  await confirm.getByLabel("Why (required)").fill("charged the wrong customer");
  // Rob's request leaves when Rita's does, so the two meet at the server; firing Rob's first
  // instead lets the page's live refresh show his pull and take Rita's form away before her click.
  let robAnswer: Promise<APIResponse> | undefined;
  await page.route(`**/api/dashboard/steps/${step.id}/revoke`, async (route) => {
    robAnswer = robPage.request.post(`/api/dashboard/steps/${step.id}/revoke`, { data: { reason: "duplicate charge" }, headers: { origin: baseURL ?? "" } });
    await route.continue();
  });
  await confirm.getByRole("button", { name: "Pull back charge_card" }).click();
  await expect.poll(() => robAnswer !== undefined).toBe(true);
  expect((await robAnswer!).status()).toBe(200);
  await page.unroute(`**/api/dashboard/steps/${step.id}/revoke`);
  await expect(panel.getByRole("status")).toBeVisible();
  expect(await db.revoke.count({ where: { stepId: step.id } })).toBe(1);
  expect(await db.workerTask.count({ where: { stepId: step.id, kind: "COMPENSATE" } })).toBe(1);
  const revoke = await db.revoke.findFirstOrThrow({ where: { stepId: step.id } });
  await robContext.close();

  // The worker runs the refund under its own key and reads it back; the page follows.
  const worker = await paymentsWorker(db, baseURL ?? "", world);
  for (let i = 0; i < 3 && (await worker.runOnce()).length > 0; i++);
  expect(await effects(world, { op: "payments.refund", ref: paymentId })).toHaveLength(1);
  await expect(panel).toContainText("confirmed", { timeout: 10_000 });
  await expect(panel).toContainText(`Pulled back by ${revoke.requestedBy}`);
  await page.screenshot({ path: screenshotPath("revoke-confirmed"), fullPage: true });

  await page.goto(`/revokes?tool=charge_card`);
  const record = page.getByRole("row").filter({ hasText: title });
  await expect(record).toContainText(revoke.requestedBy);
  await expect(record).toContainText(revoke.reason);
  await expect(record).toContainText("confirmed");
  await page.screenshot({ path: screenshotPath("revoke-records"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: screenshotPath("revoke-records-390"), fullPage: true });
  await page.goto(`/runs/${runId}`);
  await page.screenshot({ path: screenshotPath("revoke-run-390"), fullPage: true });
});

test("someone else pulls the step while a reviewer's confirmation is open: the page says so and sends nothing more", async ({ page, db, baseURL, seedUser, agent, browser }) => {
  const { runId } = await chargedRun(agent, `Charge pulled by another (${uniqueTag()})`);
  const step = await db.step.findFirstOrThrow({ where: { runId, tool: "charge_card" } });
  const rita = await seedUser("reviewer", { name: "Rita Late" });
  const rob = await seedUser("reviewer", { name: "Rob Early" });
  await signIn(page, rita, `/runs/${runId}`);
  const panel = page.locator('section[aria-labelledby="revoke-title"]');
  await panel.getByRole("button", { name: "Pull back…" }).click();
  await panel.getByLabel("Why (required)").fill("wrong customer");

  const robContext = await browser.newContext({ baseURL });
  const robPage = await robContext.newPage();
  await signIn(robPage, rob);
  const robAnswer = await robPage.request.post(`/api/dashboard/steps/${step.id}/revoke`, { data: { reason: "duplicate charge" }, headers: { origin: baseURL ?? "" } });
  expect(robAnswer.status()).toBe(200);
  await robContext.close();

  await expect(panel.getByRole("status")).toContainText("pulled this back while your confirmation was open", { timeout: 15_000 });
  await expect(panel).toContainText("duplicate charge");
  await page.screenshot({ path: screenshotPath("revoke-pulled-by-another"), fullPage: true });
  await panel.getByRole("button", { name: "Close" }).click();
  await expect(panel.getByRole("status")).toHaveCount(0);
  expect(await db.revoke.count({ where: { stepId: step.id } })).toBe(1);
});

test("past the window the button escalates: a REVOKE_OUT_OF_WINDOW item with who asked and why, and no refund", async ({ page, db, world, seedUser, agent }) => {
  const { runId, paymentId } = await chargedRun(agent, `Old charge (${uniqueTag()})`);
  const step = await db.step.findFirstOrThrow({ where: { runId, tool: "charge_card" } });
  // The charge happened three days ago (its run is this test's own); the window is one day.
  await db.step.update({ where: { id: step.id }, data: { createdAt: new Date(Date.now() - 72 * 3600_000) } });
  const reviewer = await seedUser("reviewer");
  await signIn(page, reviewer, `/runs/${runId}`);
  const panel = page.locator('section[aria-labelledby="revoke-title"]');
  // A closed window says it closed, not that it "closes ... ago".
  await expect(panel).toContainText(/Window closed 2d( \d+h)? ago/);
  await expect(panel).not.toContainText("closes");
  // Money reads alike in a step and in its undo: the refund says €15.00 too, never a bare 15.00.
  const steps = page.locator('section[aria-labelledby="steps"]');
  await expect(steps).toContainText("€15.00");
  await expect(steps).not.toContainText(/(^|[^€\d])15\.00/);
  await panel.getByRole("button", { name: "Escalate…" }).click();
  const confirm = panel.getByRole("form", { name: /Escalate: pull back charge_card/ });
  await expect(confirm).toContainText("opens an escalation for payments-team");
  await confirm.getByLabel("Why (required)").fill("the customer wrote on day three");
  await confirm.getByRole("button", { name: "Open the escalation" }).click();
  await expect(panel.getByRole("link", { name: "Open the escalation" })).toBeVisible();
  await page.screenshot({ path: screenshotPath("revoke-out-of-window"), fullPage: true });
  const escalation = await db.escalation.findFirstOrThrow({ where: { stepId: step.id, kind: "REVOKE_OUT_OF_WINDOW" } });
  expect(escalation.detail).toMatchObject({ askedBy: reviewer.email, reason: "the customer wrote on day three" });
  expect(await effects(world, { op: "payments.refund", ref: paymentId })).toHaveLength(0);
});

test("support sees no trigger on a charge, and the server refuses it with 403", async ({ page, db, baseURL, seedUser, agent }) => {
  const { runId } = await chargedRun(agent, `Support looks (${uniqueTag()})`);
  const step = await db.step.findFirstOrThrow({ where: { runId, tool: "charge_card" } });
  const support = await seedUser("support");
  await signIn(page, support, `/runs/${runId}`);
  const panel = page.locator('section[aria-labelledby="revoke-title"]');
  await expect(panel).toContainText("Pulling back needs the reviewer or admin role");
  await expect(panel.getByRole("button")).toHaveCount(0);
  const forced = await page.request.post(`/api/dashboard/steps/${step.id}/revoke`, { data: { reason: "support tries" }, headers: { origin: baseURL ?? "" } });
  expect(forced.status()).toBe(403);
  expect(await db.revoke.count({ where: { stepId: step.id } })).toBe(0);
});
