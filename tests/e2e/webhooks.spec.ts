/**
 * The notifications desk in the browser: an admin creates a webhook (its secret shown once), a
 * notifier in the test process delivers a waiting pivot to a receiver that answers 500 first, and
 * the admin reads the delivery log (attempts, last answer: its status, never its body) and replays a
 * delivery, then disables and deletes the hook (both on the hook's audit chain).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { Notifier } from "@/lib/server/notifications/notifier";
import { verifyWebhookSignature } from "@/lib/server/notifications/webhook-signature";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { World } from "@/lib/demo/sim";
import { expect, screenshotPath, signIn, test } from "./fixtures";

test("an admin creates a webhook, reads its delivery log after a refused first attempt, and replays a delivery", async ({ page, db, seedUser }) => {
  let secret = "";
  const answers: number[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const ok = verifyWebhookSignature({ secret, header: (req.headers["sagaboard-signature"] as string) ?? null, body, nowSec: Math.floor(Date.now() / 1000) }).ok;
      const status = !ok ? 401 : answers.length === 0 ? 500 : 200;
      answers.push(status);
      res.writeHead(status).end(status === 500 ? "down for maintenance" : "ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  try {
    // Notifications other tests left waiting go out first (to their own hooks), so the new hook sees only its own.
    const drain = new Notifier({ prisma: db, store: new PrismaSagaStore(db), notifierId: "e2e-drain", mailer: null, slas: false });
    await drain.runOnce();
    const admin = await seedUser("admin");
    await signIn(page, admin, "/admin/webhooks");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Notifications" }).click();
    await expect(page.getByRole("heading", { name: "Notifications and SLAs", level: 1 })).toBeVisible();
    const name = `e2e-hook-${Date.now().toString(36)}`;
    await page.getByLabel("Name").fill(name);
    await page.getByLabel("URL").fill(url);
    await page.getByRole("button", { name: "Create webhook" }).click();
    secret = (await page.getByTestId("webhook-secret").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);

    // A pivot to announce, and a notifier beside the database (the server never sends).
    const engine = new SagaEngine({ store: new PrismaSagaStore(db), registry: createSupportToolRegistry(new World({ searchLagMs: 0 })), recheckAfterMs: 10, backoffMs: 5 });
    const run = await engine.startRun({ title: `Webhook e2e ${name}`, agent: "webhook-agent" });
    await run.call("create_email_draft", { to: "bo@example.com", subject: "Hello", body: "Hi" });
    await run.requestPivot({ summary: "Send it.", plan: [{ tool: "send_email", args: { to: "bo@example.com", subject: "Hello", body: "Hi" } }] });
    const notifier = new Notifier({ prisma: db, store: new PrismaSagaStore(db), notifierId: "e2e-notifier", mailer: null, slas: false, backoffMs: 60_000 });
    // Other tests' hooks may be registered too: deliver until ours answered.
    for (let i = 0; i < 5 && answers.length === 0; i++) await notifier.runOnce();
    expect(answers).toEqual([500]);

    const hook = page.locator(`[data-webhook="${name}"]`);
    await expect(hook.getByText("waiting to retry", { exact: true })).toBeVisible({ timeout: 10_000 });
    await expect(hook).toContainText("the receiver answered HTTP 500");
    await expect(hook).not.toContainText("down for maintenance");
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: screenshotPath("webhooks-desktop"), fullPage: true });

    await hook.getByRole("button", { name: "Replay" }).first().click();
    await expect(page.getByRole("status").filter({ hasText: "will be sent again with the same delivery id" })).toBeVisible();
    for (let i = 0; i < 5 && answers.length < 2; i++) await notifier.runOnce();
    expect(answers).toEqual([500, 200]);
    await expect(hook.getByText("delivered", { exact: true })).toBeVisible({ timeout: 10_000 });
    const row = await db.notificationDelivery.findFirstOrThrow({ where: { webhook: { name } } });
    expect(row).toMatchObject({ status: "DELIVERED", attempts: 2, replayedBy: admin.email });

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await expect(page.getByRole("heading", { name: "Notifications and SLAs", level: 1 })).toBeVisible();
    await page.screenshot({ path: screenshotPath("webhooks-phone"), fullPage: true });

    // Disable, then delete (after a confirmation); each change is audited on the hook's chain.
    await page.setViewportSize({ width: 1366, height: 900 });
    await hook.getByRole("button", { name: "Disable" }).click();
    await expect(hook.getByText("off", { exact: true })).toBeVisible();
    await expect.poll(async () => (await db.webhook.findUniqueOrThrow({ where: { name } })).enabled).toBe(false);
    await hook.getByRole("button", { name: "Delete…" }).click();
    await page.screenshot({ path: screenshotPath("webhooks-delete-confirm"), fullPage: true });
    await hook.getByRole("button", { name: "Yes, delete" }).click();
    await expect(page.getByRole("status").filter({ hasText: `Webhook “${name}” deleted.` })).toBeVisible();
    await expect(page.locator(`[data-webhook="${name}"]`)).toHaveCount(0);
    expect(await db.webhook.findUnique({ where: { name } })).toBeNull();
    const audit = (await db.auditEvent.findMany({ where: { scope: { startsWith: "webhook:" } }, orderBy: { seq: "asc" } })).filter((e) => (e.data as { name?: unknown }).name === name);
    expect(audit.map((e) => [e.type, e.actor])).toEqual([
      ["webhook.created", `user:${admin.email}`],
      ["webhook.disabled", `user:${admin.email}`],
      ["webhook.deleted", `user:${admin.email}`],
    ]);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
