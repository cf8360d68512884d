/**
 * Issue 28, item 2: every approval of something nobody can take back, wherever it is made, names
 * each call, its recipient and who sees it, and asks once: the escalation page's single Approve (which
 * sent the email at once) and the queue's bulk bar (which named no item). The pivot's own confirmation
 * is covered by reviewer-desk.spec.ts.
 */
import { customerFor, effects, expect, sentTo, test, uniqueTag } from "./agent";
import { shootBothWidths, signIn } from "./fixtures";

test.describe("approving what nobody can take back", () => {
  test("the escalation page's Approve names the email, its recipient and who sees it, and sends nothing until confirmed", async ({ page, seedUser, db, agent, world }) => {
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const run = await agent.engine.startRun({ title: `Delay notice ${tag}`, agent: agent.name, onBehalfOf: customer });
    const mail = { to: customer, subject: `Order ${tag} is late`, body: "It ships in two days." };
    const held = await run.call("send_email", mail);
    if (held.status !== "approval_required" || !held.escalationId) throw new Error(`the email should be held, got ${held.status}`);
    const escalationId = held.escalationId;

    const rita = await seedUser("reviewer", { name: `Rita Reviewer ${tag}` });
    await page.setViewportSize({ width: 1366, height: 900 });
    await signIn(page, rita, `/escalations/${escalationId}`);
    await page.getByRole("button", { name: "Claim", exact: true }).click();
    await page.getByLabel("Approve: let this exact call run once").check();
    await page.getByRole("button", { name: "Resolve…" }).click();

    const dialog = page.getByRole("dialog", { name: "Approve a call that cannot be taken back?" });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText(`send_email to ${customer}, “Order ${tag} is late”`);
    await expect(dialog).toContainText("seen by customer");
    await shootBothWidths(page, "approve-escalation-confirm");

    // Cancelled: nothing decided, nothing sent.
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect(dialog).toBeHidden();
    expect((await db.escalation.findUniqueOrThrow({ where: { id: escalationId } })).status).toBe("CLAIMED");

    await page.getByRole("button", { name: "Resolve…" }).click();
    await dialog.getByRole("button", { name: "Approve and let them run" }).click();
    await expect(dialog).toBeHidden();
    await expect.poll(async () => (await db.escalation.findUniqueOrThrow({ where: { id: escalationId } })).status).toBe("RESOLVED");
    const row = await db.escalation.findUniqueOrThrow({ where: { id: escalationId } });
    expect([row.resolvedBy, (row.resolution as { approved?: boolean }).approved]).toEqual([rita.email, true]);
    expect(await db.auditEvent.count({ where: { runId: run.runId, type: "escalation.resolved" } })).toBe(1);

    expect((await run.call("send_email", mail)).status).toBe("ok");
    expect(await effects(world, { system: "email" }, sentTo(customer))).toHaveLength(1);
  });

  test("the queue says what each held email does, the bulk confirmation lists every one with who sees it, and the answer names what was approved", async ({ page, seedUser, db, agent }) => {
    const tag = uniqueTag();
    const held: { id: string; customer: string }[] = [];
    for (let i = 1; i <= 2; i++) {
      const customer = customerFor(`${tag}-${i}`);
      const run = await agent.engine.startRun({ title: `Delay notice ${i} ${tag}`, agent: agent.name, onBehalfOf: customer });
      const outcome = await run.call("send_email", { to: customer, subject: `Order ${i} is late (${tag})`, body: "It ships in two days." });
      if (outcome.status !== "approval_required" || !outcome.escalationId) throw new Error("the email should be held");
      held.push({ id: outcome.escalationId, customer });
    }
    const rita = await seedUser("reviewer", { name: `Rita Reviewer ${tag}` });
    await page.setViewportSize({ width: 1366, height: 900 });
    await signIn(page, rita, "/escalations?kind=APPROVAL_REQUIRED");
    await page.getByLabel("Search this page").fill(tag);
    const rows = page.getByTestId("queue-row");
    await expect(rows).toHaveCount(2);
    for (const h of held) await expect(rows.filter({ hasText: h.customer })).toContainText(`send_email to ${h.customer}`);
    await expect(rows.first()).toContainText("seen by customer");
    for (let i = 0; i < 2; i++) await rows.nth(i).getByRole("checkbox").check();

    const bar = page.getByTestId("bulk-bar");
    await bar.getByRole("button", { name: "Approve 2…" }).click();
    const list = bar.getByRole("list", { name: "The calls you are approving" });
    await expect(list.getByRole("listitem")).toHaveCount(2);
    for (const [i, h] of held.entries()) await expect(list).toContainText(`send_email to ${h.customer}, “Order ${i + 1} is late (${tag})” · seen by customer`);
    await shootBothWidths(page, "approve-bulk-confirm");
    // Still nothing decided until the second click.
    for (const h of held) expect((await db.escalation.findUniqueOrThrow({ where: { id: h.id } })).status).not.toBe("RESOLVED");
    await bar.getByRole("button", { name: "Approve 2", exact: true }).click();
    // The answer says what was decided, call by call, not only "2 decided".
    const result = page.getByTestId("bulk-result");
    await expect(result).toContainText("2 decided (approved)");
    for (const [i, h] of held.entries()) await expect(result).toContainText(`Approved: send_email to ${h.customer}, “Order ${i + 1} is late (${tag})”`);
    for (const h of held) {
      const row = await db.escalation.findUniqueOrThrow({ where: { id: h.id } });
      expect([row.status, row.resolvedBy, (row.resolution as { approved?: boolean }).approved]).toEqual(["RESOLVED", rita.email, true]);
    }
  });
});
