/**
 * A decision is bound to the plan the reviewer saw: when the agent revises its pending pivot after
 * the page loaded, approving from the old page is refused, the screen shows what changed (old and
 * new arguments), and the pivot stays PENDING under the new plan hash until someone approves the
 * plan as it now is.
 */
import { customerFor, expect, stageReship, test, uniqueTag } from "./agent";
import { screenshotPath, signIn } from "./fixtures";

test("a plan revised after the page loaded cannot be approved from the old page", async ({ page, seedUser, db, agent }) => {
  const tag = uniqueTag();
  const customer = customerFor(tag);
  const title = `Reship order 2001 for ${customer}`;
  const run = await agent.engine.startRun({ title, agent: agent.name, onBehalfOf: customer });
  const staged = await stageReship(run, customer, tag);
  const capture = { tool: "capture_payment", args: { paymentIntentId: staged.paymentIntentId, amount: staged.amount } };
  const oldSubject = `Your replacement ships today (${tag})`;
  const newSubject = `Your replacement and a 5 EUR voucher (${tag})`;
  const first = await run.requestPivot({
    summary: "Capture the hold and email the customer.",
    plan: [capture, { tool: "send_email", args: { to: customer, subject: oldSubject, body: "We re-shipped order 2001." } }],
  });

  const reviewer = await seedUser("reviewer");
  await signIn(page, reviewer, `/pivots/${first.id}`);
  const plan = page.locator('section[aria-labelledby="plan"] tbody tr');
  await expect(plan.filter({ hasText: "send_email" })).toContainText(oldSubject);

  // The agent revises its proposal through the API while the page is open.
  const revised = await run.requestPivot({
    summary: "Capture the hold and email the customer, with a voucher.",
    plan: [capture, { tool: "send_email", args: { to: customer, subject: newSubject, body: "We re-shipped order 2001 and added a voucher." } }],
  });
  expect(revised.id).toBe(first.id);
  expect(revised.planHash).not.toBe(first.planHash);
  const pending = await db.pivot.findUniqueOrThrow({ where: { id: first.id } });
  expect([pending.status, pending.planHash]).toEqual(["PENDING", revised.planHash]);

  // Approving what the page shows (confirming the email that cannot be taken back) is refused, and the screen says what changed.
  await page.getByRole("button", { name: /^Approve/ }).click();
  await page.getByRole("dialog").getByRole("button", { name: /^Approve and let them run/ }).click();
  const refusal = page.getByRole("alert").filter({ hasText: "Not approved: the plan changed since this page loaded" });
  await expect(refusal).toBeVisible();
  await expect(refusal.locator("tr.diff-removed")).toContainText(oldSubject);
  await expect(refusal.locator("tr.diff-added")).toContainText(newSubject);
  await expect(refusal.locator("tr.diff-unchanged")).toContainText("capture_payment");
  await expect(refusal).toContainText("with a voucher");
  // The plan table still shows what was loaded, so the reviewer can compare.
  await expect(plan.filter({ hasText: "send_email" })).toContainText(oldSubject);
  await page.screenshot({ path: screenshotPath("pivot-screen-plan-changed"), fullPage: true });

  const afterRefusal = await db.pivot.findUniqueOrThrow({ where: { id: first.id } });
  expect([afterRefusal.status, afterRefusal.decidedBy, afterRefusal.planHash]).toEqual(["PENDING", null, revised.planHash]);
  expect((await db.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("AWAITING_PIVOT");
  expect(await db.auditEvent.count({ where: { runId: run.runId, type: "pivot.approved" } })).toBe(0);
  expect(await db.auditEvent.count({ where: { runId: run.runId, type: "pivot.revised" } })).toBe(1);

  // Loading the current plan lets the reviewer decide on it: the approval binds the new hash.
  await refusal.getByRole("button", { name: "Load the current plan" }).click();
  await expect(plan.filter({ hasText: "send_email" })).toContainText(newSubject);
  await expect(page.locator(".banner")).toHaveCount(0);
  await page.getByRole("button", { name: /^Approve/ }).click();
  await page.getByRole("dialog").getByRole("button", { name: /^Approve and let them run/ }).click();
  await expect(page.locator(".decide-panel .decided")).toContainText(`Approved by ${reviewer.email}`);
  const approved = await db.pivot.findUniqueOrThrow({ where: { id: first.id } });
  expect([approved.status, approved.decidedBy, approved.planHash]).toEqual(["APPROVED", reviewer.email, revised.planHash]);
});
