/**
 * The correction desk in the browser, with a real agent and a real unwind behind it and a worker
 * (over the API, with a worker token) sending what support approves. The hosted email simulator's
 * ledger is the oracle: one message, however often Send is clicked or the request replayed.
 */
import type { Page } from "@playwright/test";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { HttpTaskQueue } from "@/packages/client/src/agent/client/http-task-queue";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import type { PrismaClient } from "@/generated/prisma";
import type { RemoteWorld } from "@/lib/demo/sim/remote";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { Worker } from "@/packages/client/src/agent/worker";
import { customerFor, effects, expect, sentTo, test, uniqueTag, type TestAgent, AGENT_STORE } from "./agent";
import { screenshotPath, signIn } from "./fixtures";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

/** A run that emails `customer` after an approved pivot and is then unwound: its correction's id. */
async function draftedCorrection(db: PrismaClient, agent: TestAgent, world: RemoteWorld, customer: string, tag: string): Promise<string> {
  const run = await agent.engine.startRun({ title: `Tell ${customer} about order ${tag}`, agent: agent.name, onBehalfOf: customer });
  const mail = { to: customer, subject: `Your order ${tag} ships today`, body: "Your order ships today." };
  const pivot = await run.requestPivot({ summary: "email the customer", plan: [{ tool: "send_email", args: mail }] });
  const reviewer = new ReviewerEngine({ store: new PrismaSagaStore(db), registry: createSupportToolRegistry(world) });
  await reviewer.decidePivot(pivot.id, { approve: true, actor: { type: "user", id: "rita@example.com" }, planHash: pivot.planHash });
  expect((await run.call("send_email", mail)).status).toBe("ok");
  await run.unwind("the order was cancelled after the email went out");
  return (await db.correction.findFirstOrThrow({ where: { runId: run.runId } })).id;
}

/** A worker in the test process, working over the server's API with a worker token. */
async function emailWorker(db: PrismaClient, baseUrl: string, world: RemoteWorld): Promise<Worker> {
  const { secret } = await createAgentToken(db, { name: `e2e-email-worker-${uniqueTag()}`, tools: ["send_email"], role: "worker", createdBy: "system:e2e" });
  const transport = { baseUrl, token: secret };
  const engine = new SagaEngine({ store: new HttpSagaStore({ ...transport, ...AGENT_STORE }), registry: createSupportToolRegistry(world), recheckAfterMs: 500, backoffMs: 50 });
  return new Worker({ queue: new HttpTaskQueue(transport), engine, workerId: `e2e-worker-${uniqueTag()}`, tools: ["send_email"] });
}

/** Runs worker rounds until nothing is left for it (the send is one task). */
async function drain(worker: Worker): Promise<void> {
  for (let i = 0; i < 5; i++) if ((await worker.runOnce()).length === 0) return;
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: screenshotPath(`${name}-1280`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(200);
  await page.screenshot({ path: screenshotPath(`${name}-390`), fullPage: true });
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(scrollWidth, `${name}: the page scrolls sideways at 390 px`).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1280, height: 900 });
}

test.describe("the correction desk", () => {
  test("support claims a customer correction, edits it and sends it: one message despite a double click and a replayed request", async ({ page, baseURL, seedUser, db, agent, world }) => {
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const id = await draftedCorrection(db, agent, world, customer, tag);
    const sam = await seedUser("support", { name: `Sam Support ${tag}` });
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, sam, "/corrections");
    await page.goto("/corrections?audience=customer");
    const row = page.locator("table.queue tbody tr", { hasText: `Your order ${tag}` });
    await expect(row).toContainText("customer");
    await expect(row).toContainText(customer);
    await shoot(page, "corrections-queue");

    await row.getByRole("button", { name: "Claim" }).click();
    await page.waitForURL(`**/corrections/${id}`);
    await expect(page.getByText("Its audience (customer) saw it")).toBeVisible();
    const message = page.getByLabel("Message");
    await message.fill(`We are sorry: order ${tag} was cancelled, so please ignore our last email.`);
    await expect(page.getByLabel("Preview")).toContainText(`order ${tag} was cancelled`);
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect(page.getByText("Unsaved changes")).toHaveCount(0);
    await expect(page.getByText(/Edited by/)).toBeVisible();
    await shoot(page, "correction-claimed");

    await page.getByRole("button", { name: "Send…" }).click();
    const confirm = page.getByRole("alertdialog", { name: "Confirm sending" });
    await expect(confirm).toContainText(customer);
    await expect(confirm).toContainText("cannot be taken back");
    const version = (await db.correction.findUniqueOrThrow({ where: { id } })).version;
    await confirm.getByRole("button", { name: "Yes, send it" }).dblclick();
    await expect(page.getByRole("heading", { name: "Sending" })).toBeVisible();
    // The same request again, as a retrying browser would send it.
    const replay = await page.request.post(`/api/dashboard/corrections/${id}/send`, { data: { expectedVersion: version }, headers: { origin: baseURL! } });
    expect(replay.status()).toBe(200);
    expect((await replay.json()).repeated).toBe(true);

    await drain(await emailWorker(db, baseURL!, world));
    await expect(page.getByRole("heading", { name: "Sent", exact: true })).toBeVisible();
    const sent = await effects(world, { op: "email.send" }, (e) => sentTo(customer)(e) && String((e.args as { body?: string }).body).includes("was cancelled"));
    expect(sent).toHaveLength(1);
    const stored = await db.correction.findUniqueOrThrow({ where: { id } });
    expect(stored).toMatchObject({ status: "SENT", sentBy: sam.email, originalBody: expect.stringContaining("Please disregard") });
    expect(stored.messageId).toBeTruthy();
    await expect(page.getByText(stored.messageId!, { exact: true })).toBeVisible();
    await expect(page.getByText("As drafted by unwind")).toBeVisible();
    await shoot(page, "correction-sent");
    const late = await page.request.post(`/api/dashboard/corrections/${id}/send`, { data: { expectedVersion: stored.version }, headers: { origin: baseURL! } });
    expect(late.status()).toBe(422);
    expect(await effects(world, { op: "email.send" }, sentTo(customer))).toHaveLength(2); // the original and the one correction
  });

  test("an email timeout during the send shows \"outcome unknown\" and settles to the one message by key", async ({ page, baseURL, seedUser, db, agent, world }) => {
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const id = await draftedCorrection(db, agent, world, customer, tag);
    const sam = await seedUser("support", { name: `Sam Timeout ${tag}` });
    await signIn(page, sam, `/corrections/${id}`);
    await page.goto(`/corrections/${id}`);
    await page.getByRole("button", { name: "Claim to edit and send" }).click();
    await page.getByRole("button", { name: "Send…" }).click();
    await page.getByRole("alertdialog", { name: "Confirm sending" }).getByRole("button", { name: "Yes, send it" }).click();
    await expect(page.getByRole("heading", { name: "Sending" })).toBeVisible();

    // The provider sends the message, then the answer is lost on the way back.
    await world.faults.inject("email.send", { kind: "timeout_after_effect" });
    const worker = await emailWorker(db, baseURL!, world);
    expect((await worker.runOnce()).map((o) => o.outcome)).toEqual(["retried"]);
    await expect(page.getByRole("status").filter({ hasText: /Outcome unknown/ })).toBeVisible();
    await shoot(page, "correction-outcome-unknown");
    const sentToCustomer = async () => (await effects(world, { op: "email.send" }, sentTo(customer))).filter((e) => String((e.args as { subject?: string }).subject).startsWith("Correction"));
    expect(await sentToCustomer()).toHaveLength(1); // it did go out: only the answer was lost

    // The next round looks the message up by its key instead of sending it again.
    await page.waitForTimeout(700); // the hosted provider's search lags behind its writes
    await drain(worker);
    await expect(page.getByRole("heading", { name: "Sent", exact: true })).toBeVisible();
    expect(await sentToCustomer()).toHaveLength(1);
    expect(await db.correction.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "SENT", sentBy: sam.email });
  });

  test("a second support person sees who holds it; a dismissed correction sends nothing and records why", async ({ page, browser, baseURL, seedUser, db, agent, world }) => {
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const id = await draftedCorrection(db, agent, world, customer, tag);
    const sue = await seedUser("support", { name: `Sue Support ${tag}` });
    const tom = await seedUser("support", { name: `Tom Support ${tag}` });
    await signIn(page, sue, `/corrections/${id}`);
    await page.goto(`/corrections/${id}`);
    await page.getByRole("button", { name: "Claim to edit and send" }).click();
    await expect(page.getByRole("button", { name: "Dismiss…" })).toBeVisible();

    const other = await browser.newContext();
    const tomPage = await other.newPage();
    await signIn(tomPage, tom, `/corrections/${id}`);
    await tomPage.goto(`/corrections/${id}`);
    await expect(tomPage.getByText(`Held by Sue Support ${tag}`)).toBeVisible();
    await expect(tomPage.getByRole("button", { name: /Send/ })).toHaveCount(0);
    await tomPage.setViewportSize({ width: 390, height: 844 });
    await tomPage.screenshot({ path: screenshotPath("correction-held-390"), fullPage: true });
    await other.close();

    await page.getByRole("button", { name: "Dismiss…" }).click();
    await page.getByRole("button", { name: "Dismiss without sending" }).click();
    await expect(page.getByText(/say why no correction is sent/)).toBeVisible();
    await page.getByLabel("Why is nothing sent?").fill("the customer never opened the original; handled by phone");
    await page.getByRole("button", { name: "Dismiss without sending" }).click();
    await expect(page.getByRole("heading", { name: "Dismissed" })).toBeVisible();
    await expect(page.getByText("handled by phone").first()).toBeVisible();
    await shoot(page, "correction-dismissed");
    await drain(await emailWorker(db, baseURL!, world));
    expect(await effects(world, { op: "email.send" }, sentTo(customer))).toHaveLength(1); // only the original
    expect(await db.correction.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "DISMISSED", dismissedBy: sue.email, dismissReason: "the customer never opened the original; handled by phone" });
  });

  test("a viewer and a reviewer can read a correction but not send it (no button, server 403)", async ({ browser, baseURL, seedUser, db, agent, world }) => {
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const id = await draftedCorrection(db, agent, world, customer, tag);
    for (const role of ["viewer", "reviewer"] as const) {
      const person = await seedUser(role);
      const context = await browser.newContext();
      const page = await context.newPage();
      await signIn(page, person, `/corrections/${id}`);
      await page.goto(`/corrections/${id}`);
      await expect(page.getByText("Editing, sending and dismissing it need the support role")).toBeVisible();
      await expect(page.getByRole("button", { name: /Claim|Send|Dismiss/ })).toHaveCount(0);
      for (const action of ["claim", "send", "dismiss"]) {
        const res = await page.request.post(`/api/dashboard/corrections/${id}/${action}`, { data: action === "send" ? { expectedVersion: 0 } : action === "dismiss" ? { reason: "x" } : {}, headers: { origin: baseURL! } });
        expect(res.status(), `${role} ${action}`).toBe(403);
      }
      if (role === "viewer") await page.screenshot({ path: screenshotPath("correction-viewer-1280"), fullPage: true });
      await context.close();
    }
    expect(await effects(world, { op: "email.send" }, sentTo(customer))).toHaveLength(1);
  });
});
