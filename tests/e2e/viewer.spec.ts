/**
 * A viewer reads everything and changes nothing: no decision or claim controls on the pivot screen,
 * the queue or an escalation, and forcing the change with a same-origin request carrying the
 * viewer's session is answered 403 by the server, with the rows left as they were.
 */
import { customerFor, expect, stageReship, test, uniqueTag } from "./agent";
import { screenshotPath, signIn } from "./fixtures";

test("a viewer sees no approve, reject or claim controls, and forcing them by request gets 403", async ({ page, baseURL, seedUser, db, agent }) => {
  const tag = uniqueTag();
  const customer = customerFor(tag);

  // A pivot waiting for a reviewer...
  const pivotTitle = `Reship order 2001 for ${customer}`;
  const run = await agent.engine.startRun({ title: pivotTitle, agent: agent.name, onBehalfOf: customer });
  const staged = await stageReship(run, customer, tag);
  const mail = { to: customer, subject: `Your replacement ships today (${tag})`, body: "We re-shipped order 2001." };
  const pivot = await run.requestPivot({
    summary: "Capture the hold and tell the customer.",
    plan: [
      { tool: "capture_payment", args: { paymentIntentId: staged.paymentIntentId, amount: staged.amount } },
      { tool: "send_email", args: mail },
    ],
  });
  // ...and a held irreversible call in the queue.
  const heldTitle = `Tell ${customer} about a delay`;
  const heldRun = await agent.engine.startRun({ title: heldTitle, agent: agent.name, onBehalfOf: customer });
  const held = await heldRun.call("send_email", { ...mail, subject: `Delay on order 2001 (${tag})` });
  if (held.status !== "approval_required" || !held.escalationId) throw new Error("the email should be held in the queue");
  const escalationId = held.escalationId;

  const viewer = await seedUser("viewer");
  await signIn(page, viewer);
  await expect(page.getByTestId("user-role")).toHaveText("viewer");
  await expect(page.getByRole("link", { name: pivotTitle })).toBeVisible();
  // The runs list does not offer a viewer a pivot "to decide": it says who decides it.
  const pivotRow = page.locator("tr", { hasText: pivotTitle });
  await expect(pivotRow.getByRole("link", { name: "Pivot waits for a reviewer →" })).toBeVisible();
  await expect(page.getByText("Pivot to decide")).toHaveCount(0);
  await page.screenshot({ path: screenshotPath("runs-list"), fullPage: true });
  // /runs is the runs page too (the header's Runs link goes there).
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Runs" }).click();
  await expect(page).toHaveURL(/\/runs$/);
  await expect(page.getByRole("heading", { level: 1, name: "Runs" })).toBeVisible();
  await expect(page.getByRole("link", { name: pivotTitle })).toBeVisible();

  // The pivot screen: everything to read, nothing to decide with.
  await page.goto(`/pivots/${pivot.id}`);
  await expect(page.getByRole("heading", { name: `Pivot of “${pivotTitle}”` })).toBeVisible();
  await expect(page.locator('section[aria-labelledby="staged"] tbody tr:not(.group-row)')).toHaveCount(3);
  await expect(page.getByText("You can read this pivot. Deciding it needs the reviewer role.")).toBeVisible();
  await expect(page.getByRole("button", { name: /approve|reject/i })).toHaveCount(0);
  await expect(page.getByRole("textbox")).toHaveCount(0);
  await page.keyboard.press("a"); // the shortcut is not wired for a viewer either
  await page.screenshot({ path: screenshotPath("pivot-screen-viewer"), fullPage: true });

  // Forced by request, same origin, with the viewer's cookies: refused by role.
  const origin = { origin: baseURL ?? "" };
  for (const [action, data] of [
    ["approve", { planHash: pivot.planHash }],
    ["reject", { planHash: pivot.planHash, reason: "forced by a viewer" }],
  ] as const) {
    const response = await page.request.post(`/api/dashboard/pivots/${pivot.id}/${action}`, { data, headers: origin });
    expect(response.status(), `${action} as a viewer`).toBe(403);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("FORBIDDEN");
    expect(body.error.message).toContain("Your role (viewer) cannot decide pivots");
  }
  const pivotRecord = await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } });
  expect([pivotRecord.status, pivotRecord.decidedBy, pivotRecord.planHash]).toEqual(["PENDING", null, pivot.planHash]);
  expect((await db.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("AWAITING_PIVOT");
  expect(await db.auditEvent.count({ where: { runId: run.runId, type: { in: ["pivot.approved", "pivot.rejected"] } } })).toBe(0);

  // The queue and the item: readable, not claimable.
  await page.goto("/escalations");
  const row = page.locator("table.queue tbody tr", { hasText: heldTitle });
  await expect(row).toContainText("approval required");
  await expect(page.getByText("you can read the queue but not claim items")).toBeVisible();
  await expect(page.getByRole("button", { name: "Claim" })).toHaveCount(0);
  await page.goto(`/escalations/${escalationId}`);
  await expect(page.getByText(/^You can read this item\. Working it needs the reviewer role/)).toBeVisible();
  // The only buttons on the page (below 1440 px the second reads "Everywhere"; its name stays whole).
  const buttons = page.getByRole("button");
  await expect(buttons).toHaveCount(2);
  await expect(buttons.nth(0)).toHaveAccessibleName("Sign out");
  await expect(buttons.nth(1)).toHaveAccessibleName("Sign out everywhere");
  await page.screenshot({ path: screenshotPath("escalation-workbench-viewer"), fullPage: true });

  const claim = await page.request.post(`/api/dashboard/escalations/${escalationId}/claim`, { headers: origin });
  expect(claim.status()).toBe(403);
  const resolve = await page.request.post(`/api/dashboard/escalations/${escalationId}/resolve`, { data: { kind: "APPROVAL_REQUIRED", approve: true }, headers: origin });
  expect(resolve.status()).toBe(403);
  const escalationRow = await db.escalation.findUniqueOrThrow({ where: { id: escalationId } });
  expect([escalationRow.status, escalationRow.claimedBy, escalationRow.resolvedBy]).toEqual(["OPEN", null, null]);
});
