/**
 * Issue 28, item 5: the escalation a past-window revoke opens says who asked and why at the top of
 * "What happened", not inside the collapsed record of everything the escalation holds.
 */
import { effects, expect, test, uniqueTag } from "./agent";
import { screenshotPath, signIn } from "./fixtures";

test("a past-window revoke escalation shows who asked, why, and when the window closed", async ({ page, baseURL, db, world, seedUser, agent }) => {
  const tag = uniqueTag();
  const run = await agent.engine.startRun({ title: `Old charge ${tag}`, agent: agent.name });
  const charged = await run.call("charge_card", { customerId: "cus_bo", amount: 1500, currency: "eur", reason: `reship fee ${tag}` });
  if (charged.status !== "ok" || !charged.externalRef) throw new Error(`the charge should go through, got ${charged.status}`);
  await run.complete();
  const step = await db.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } });
  // The charge happened three days ago (this test's own run); the window is one day.
  await db.step.update({ where: { id: step.id }, data: { createdAt: new Date(Date.now() - 72 * 3600_000) } });

  const rita = await seedUser("reviewer", { name: `Rita Reviewer ${tag}` });
  await page.setViewportSize({ width: 1366, height: 900 });
  await signIn(page, rita, `/runs/${run.runId}`);
  const reason = `the customer wrote on day three (${tag})`;
  const asked = await page.request.post(`/api/dashboard/steps/${step.id}/revoke`, { data: { reason }, headers: { origin: baseURL ?? "" } });
  expect(asked.status()).toBe(200);
  const escalation = await db.escalation.findFirstOrThrow({ where: { stepId: step.id, kind: "REVOKE_OUT_OF_WINDOW" } });
  expect(escalation.detail).toMatchObject({ askedBy: rita.email, reason });

  await page.goto(`/escalations/${escalation.id}`);
  const request = page.getByTestId("revoke-request");
  await expect(request).toBeVisible();
  await expect(request).toContainText(`Asked by${rita.email}`);
  await expect(request).toContainText(`Why${reason}`);
  await expect(request).toContainText("Window closed");
  await page.screenshot({ path: screenshotPath("revoke-request-1366"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: screenshotPath("revoke-request-390"), fullPage: true });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  expect(await effects(world, { op: "payments.refund", ref: charged.externalRef })).toHaveLength(0);
});
