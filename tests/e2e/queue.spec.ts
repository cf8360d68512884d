/**
 * The escalation queue with real agents behind it:
 * - claim-once: two reviewers in two browsers claim the same held irreversible call at the same
 *   moment; one wins, the other is told who holds it. The winner approves, and the agent's repeated
 *   call runs exactly once in the real system.
 * - an UNKNOWN outcome that reconcile could not settle (the effect happened, the answer was lost,
 *   and the lookup is down) is settled by a person after "check the real system", with evidence,
 *   and the decision is written back to the saga log.
 */
import type { Page } from "@playwright/test";
import { ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import type { WorldLike } from "@/lib/demo/sim/remote";
import { customerFor, effects, expect, sentTo, test, uniqueTag } from "./agent";
import { screenshotPath, signIn } from "./fixtures";

/** The queue row of this test's run (titles are unique per test). */
function queueRow(page: Page, runTitle: string) {
  return page.locator("table.queue tbody tr", { hasText: runTitle });
}

test.describe("the escalation queue", () => {
  test("two reviewers claim the same held call: one wins, the other sees who holds it; the approved call runs once", async ({
    page,
    browser,
    baseURL,
    seedUser,
    db,
    agent,
    world,
  }) => {
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const title = `Notify ${customer} about a delay`;
    const mail = { to: customer, subject: `Delay on order 1182 (${tag})`, body: "Your order is delayed by two days." };

    // An irreversible call outside any pivot is held, not made.
    const run = await agent.engine.startRun({ title, agent: agent.name, onBehalfOf: customer });
    const held = await run.call("send_email", mail);
    expect(held.status).toBe("approval_required");
    if (held.status !== "approval_required" || !held.escalationId) throw new Error("the email should be held in the queue");
    const escalationId = held.escalationId;
    expect(await db.escalation.findUniqueOrThrow({ where: { id: escalationId } })).toMatchObject({ kind: "APPROVAL_REQUIRED", status: "OPEN", runId: run.runId });
    expect(await effects(world, { op: "email.send" }, sentTo(customer))).toHaveLength(0);

    const rita = await seedUser("reviewer", { name: `Rita Race ${tag}` });
    const rob = await seedUser("reviewer", { name: `Rob Race ${tag}` });
    let winnerEmail = "";
    const robContext = await browser.newContext({ baseURL, viewport: { width: 1280, height: 800 } });
    try {
      const robPage = await robContext.newPage();
      await Promise.all([signIn(page, rita, "/escalations"), signIn(robPage, rob, "/escalations")]);
      // Only this test's row: under the full suite other specs' new escalations arrive with every refresh
      // and moved it, so a click waited for a row that never held still (a 60 s timeout once in two runs).
      for (const p of [page, robPage]) await p.getByLabel("Search this page").fill(tag);
      for (const p of [page, robPage]) await expect(queueRow(p, title).getByRole("button", { name: "Claim" })).toBeVisible();
      await page.screenshot({ path: screenshotPath("escalation-queue"), fullPage: true });

      // Both click Claim at the same moment; the server lets exactly one through.
      await Promise.all([queueRow(page, title).getByRole("button", { name: "Claim" }).click(), queueRow(robPage, title).getByRole("button", { name: "Claim" }).click()]);
      await expect.poll(async () => (await db.escalation.findUniqueOrThrow({ where: { id: escalationId } })).claimedBy).not.toBeNull();
      const claimed = await db.escalation.findUniqueOrThrow({ where: { id: escalationId } });
      expect(claimed.status).toBe("CLAIMED");
      expect([rita.email, rob.email]).toContain(claimed.claimedBy);
      const [winner, winnerPage, loserPage] = claimed.claimedBy === rita.email ? [rita, page, robPage] : [rob, robPage, page];
      winnerEmail = winner.email;

      // The loser is told who holds it, by name and email, on the row they clicked.
      const note = queueRow(loserPage, title).locator(".row-note");
      await expect(note).toHaveText(`Held by ${winner.name} (${winner.email})`);
      await expect(queueRow(loserPage, title).getByRole("button", { name: "Claim" })).toHaveCount(0);
      await loserPage.screenshot({ path: screenshotPath("escalation-queue-claim-lost"), fullPage: true });

      // Opening the item does not let the loser work it either.
      await loserPage.goto(`/escalations/${escalationId}`);
      await expect(loserPage.locator(".held-by")).toContainText(`Held by ${winner.email}`);
      await expect(loserPage.getByRole("button", { name: /^(Claim|Resolve)$/ })).toHaveCount(0);
      await loserPage.screenshot({ path: screenshotPath("escalation-workbench-held-by-other"), fullPage: true });
      expect((await db.escalation.findUniqueOrThrow({ where: { id: escalationId } })).claimedBy).toBe(winner.email);
      const claims = await db.auditEvent.findMany({ where: { runId: run.runId, type: "escalation.claimed" } });
      expect(claims.map((e) => e.actor)).toEqual([`user:${winner.email}`]);

      // The winner was taken to the item and approves the held call.
      await expect(winnerPage).toHaveURL((url) => url.pathname === `/escalations/${escalationId}`);
      await expect(winnerPage.locator(".held-by.mine")).toBeVisible();
      await expect(winnerPage.locator(".panel").first()).toContainText(mail.subject);
      await winnerPage.getByLabel("Approve: let this exact call run once").check();
      await winnerPage.screenshot({ path: screenshotPath("escalation-workbench-approval"), fullPage: true });
      // An irreversible call: Approve asks once, naming the call, before anything is sent.
      await winnerPage.getByRole("button", { name: "Resolve…" }).click();
      const confirmation = winnerPage.getByRole("dialog", { name: "Approve a call that cannot be taken back?" });
      await expect(confirmation).toContainText("send_email");
      await confirmation.getByRole("button", { name: "Approve and let them run" }).click();
      await expect(winnerPage.locator(".resolve-panel .decided")).toContainText(`Resolved by ${winner.email}`);
    } finally {
      await robContext.close();
    }

    const resolved = await db.escalation.findUniqueOrThrow({ where: { id: escalationId } });
    expect(resolved).toMatchObject({ status: "RESOLVED" });
    expect([resolved.claimedBy, resolved.resolvedBy]).toEqual([winnerEmail, winnerEmail]);
    expect(resolved.resolution).toMatchObject({ approved: true });

    // The agent calls again: the approval lets this exact call run, once.
    const sent = await run.call("send_email", mail);
    expect(sent).toMatchObject({ status: "ok", replayed: false });
    const step = await db.step.findFirstOrThrow({ where: { runId: run.runId, tool: "send_email" } });
    expect([step.status, step.phase, step.approvalId]).toEqual(["CONFIRMED", "APPROVED_HOLD", escalationId]);
    // A resumed agent repeating the call gets the logged result; the world sees nothing new.
    const again = await (await agent.engine.resume(run.runId)).call("send_email", mail);
    expect(again).toMatchObject({ status: "ok", replayed: true, externalRef: step.externalRef });
    expect(await effects(world, { op: "email.send", key: step.stepKey })).toHaveLength(1);
    expect(await effects(world, { op: "email.send" }, sentTo(customer))).toHaveLength(1);

    // The run's timeline tells the same story: the held call ran under the approval, once.
    await page.goto(`/runs/${run.runId}`);
    const sentRow = page.locator('section[aria-labelledby="steps"] tbody tr', { hasText: "send_email" });
    await expect(sentRow).toContainText("approved hold");
    await expect(sentRow).toContainText("CONFIRMED");
    await expect(page.locator('section[aria-labelledby="escalations"] tbody tr')).toContainText(`resolved by ${winnerEmail}`);
    await page.screenshot({ path: screenshotPath("run-timeline-held-call"), fullPage: true });
  });

  test("an UNKNOWN outcome is settled with evidence after checking the real system, and written back to the step", async ({ page, seedUser, db, agent, world }) => {
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const title = `Price match for ${customer}`;
    const args = { summary: `Price match order 1182 (${tag})`, orderId: "1182" };

    // The ticket is created, but the answer is lost (504 after the effect)...
    const run = await agent.engine.startRun({ title, agent: agent.name, onBehalfOf: customer });
    await world.faults.inject("ticketing.create", { kind: "timeout_after_effect" });
    await expect(run.call("create_ticket", args)).rejects.toBeInstanceOf(ToolOutcomeUnknown);
    expect(await world.faults.pending("ticketing.create")).toBe(0);
    const unknown = await db.step.findFirstOrThrow({ where: { runId: run.runId } });
    expect(unknown.status).toBe("UNKNOWN");

    // ...and the ticket search is down, so the agent's retry cannot reconcile: a person must decide.
    const searchDown: WorldLike = {
      payments: world.payments,
      ticketing: { ...world.ticketing, searchByLabel: () => Promise.reject(new Error("JQL search is down (503)")) },
      email: world.email,
      warehouse: world.warehouse,
      crm: world.crm,
    };
    const blind = await agent.engineWith(searchDown).resume(run.runId);
    await expect(blind.call("create_ticket", args)).rejects.toBeInstanceOf(ToolOutcomeUnknown);
    const escalation = await db.escalation.findFirstOrThrow({ where: { runId: run.runId } });
    expect(escalation).toMatchObject({ kind: "OUTCOME_UNKNOWN", status: "OPEN", stepId: unknown.id });
    const [created] = await effects(world, { op: "ticketing.create", key: unknown.stepKey });
    const ticketId = created?.ref;
    if (!ticketId) throw new Error("the ticket was created in the real system despite the timeout");

    const reviewer = await seedUser("reviewer");
    await signIn(page, reviewer, "/escalations?kind=OUTCOME_UNKNOWN");
    const row = queueRow(page, title);
    await expect(row).toContainText("outcome unknown");
    await expect(row).toContainText("create_ticket");
    await row.getByRole("button", { name: "Claim" }).click();
    await expect(page).toHaveURL((url) => url.pathname === `/escalations/${escalation.id}`);

    await page.getByRole("button", { name: "Check the real system" }).click();
    const check = page.locator(".check.found");
    await expect(check).toContainText("Found in Ticketing: the effect exists.");
    await expect(check).toContainText(ticketId);
    // The check is kept with the escalation: after a reload it is still there, with who looked.
    await page.reload();
    await expect(page.locator(".check.found")).toContainText("Found in Ticketing: the effect exists.");
    await expect(page.locator(".check.found")).toContainText(ticketId);
    expect(await db.workerTask.count({ where: { stepId: unknown.id, kind: "LOOKUP", status: "DONE" } })).toBe(1);
    // The check fills the form; the person reads it and records it.
    await expect(page.getByLabel("It happened: the step counts as done")).toBeChecked();
    await expect(page.getByLabel("External ref of the effect")).toHaveValue(ticketId);
    const evidence = page.getByLabel("Evidence (required): what you saw, and where");
    await expect(evidence).toHaveValue(new RegExp(`found ${ticketId}`));
    await evidence.fill(`${await evidence.inputValue()} Seen in the support queue by ${reviewer.name}.`);
    await page.screenshot({ path: screenshotPath("escalation-workbench-unknown-checked"), fullPage: true });
    await page.getByRole("button", { name: "Record outcome" }).click();
    await expect(page.locator(".resolve-panel .decided")).toContainText(`Resolved by ${reviewer.email}`);

    // The saga log: the step is CONFIRMED with the ticket found, by this person, with the evidence.
    const settled = await db.step.findUniqueOrThrow({ where: { id: unknown.id } });
    expect([settled.status, settled.externalRef]).toEqual(["CONFIRMED", ticketId]);
    expect(settled.result).toMatchObject({ settledBy: reviewer.email });
    const resolvedRow = await db.escalation.findUniqueOrThrow({ where: { id: escalation.id } });
    expect(resolvedRow).toMatchObject({ status: "RESOLVED", resolvedBy: reviewer.email, claimedBy: reviewer.email });
    expect(resolvedRow.resolution).toMatchObject({ outcome: "CONFIRMED" });
    const audit = await db.auditEvent.findFirstOrThrow({ where: { runId: run.runId, type: "step.settled" } });
    expect(audit.actor).toBe(`user:${reviewer.email}`);
    expect(audit.data).toMatchObject({ outcome: "CONFIRMED", externalRef: ticketId, escalationId: escalation.id });

    // The agent's next call reads the settled step instead of creating a second ticket.
    const replay = await (await agent.engine.resume(run.runId)).call("create_ticket", args);
    expect(replay).toMatchObject({ status: "ok", replayed: true, externalRef: ticketId });
    expect(await effects(world, { op: "ticketing.create", key: unknown.stepKey })).toHaveLength(1);
  });
});

