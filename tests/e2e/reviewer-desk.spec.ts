/**
 * The reviewer desk, second pass, with real agents behind it (HTTP API, hosted simulated systems):
 * - edit before approve: the reviewer rewrites the apology email on the pivot screen; the plan hash
 *   changes, the diff is shown and recorded, the agent reads the edited plan back, the original
 *   call is held, and the simulated email ledger ends with the edited text, once;
 * - bulk decisions: three held emails of one tool approved together (found with / and selected with
 *   j and x), each recorded on its own; asking again changes nothing; three effects, once each;
 * - a recorded manual repair of a refused refund writes back to the step and finishes the run;
 * - "held by me" with nothing held says where the open items are instead of "nothing waits";
 * - each screen at 1280 px and 390 px, with axe finding nothing serious or critical.
 */
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { customerFor, effects, expect, gate, sentTo, stageReship, test, uniqueTag } from "./agent";
import { screenshotPath, signIn } from "./fixtures";

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

/** Serious and critical axe violations on the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return results.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(" | ")})`);
}

/** The page does not scroll sideways (nothing wider than the viewport). */
async function expectNoSideways(page: Page): Promise<void> {
  const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, view: window.innerWidth }));
  expect(widths.scroll).toBeLessThanOrEqual(widths.view);
}

/** Screenshots at both widths, checks axe and sideways scrolling at both. */
async function lookAtBothWidths(page: Page, name: string): Promise<void> {
  for (const [viewport, suffix] of [
    [DESKTOP, ""],
    [PHONE, "-phone"],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: screenshotPath(`${name}${suffix}`), fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    await expectNoSideways(page);
  }
  await page.setViewportSize(DESKTOP);
}

test.describe("the reviewer desk", () => {
  test("edit before approve: the agent receives the edited plan, the original call is held, the ledger holds the edited email once", async ({ page, seedUser, db, agent, world }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const title = `Apologise for a late parcel ${tag}`;
    const run = await agent.engine.startRun({ title, agent: agent.name, onBehalfOf: customer });
    const staged = await stageReship(run, customer, tag);
    const mail = { to: customer, subject: `Sorry about order 2001 (${tag})`, body: "Your parcel ships Monday." };
    const pivot = await run.requestPivot({
      summary: `Capture the hold and email ${customer}.`,
      plan: [
        { tool: "capture_payment", args: { paymentIntentId: staged.paymentIntentId, amount: staged.amount } },
        { tool: "send_email", args: mail },
      ],
    });
    const commit = gate();
    const agentWork = (async () => {
      const decided = await run.awaitPivot(pivot.id, { timeoutMs: 55_000 });
      await commit.promise;
      const original = await run.call("send_email", mail);
      const outcomes = [];
      for (const item of decided.plan) outcomes.push(await run.call(item.tool, item.args));
      return { decided, original, outcomes };
    })();
    agentWork.catch(() => undefined);
    const edited = "Your parcel ships Tuesday; we refunded the shipping fee.";

    try {
      await signIn(page, reviewer, `/pivots/${pivot.id}`);
      const emailRow = page.getByTestId("plan-item-1");
      await expect(emailRow).toContainText(mail.body);
      // An email to a customer is classified, not "unknown", and counted as customer-facing.
      await expect(emailRow).toContainText("customer");
      await expect(emailRow).not.toContainText("not known");
      await expect(page.getByTestId("customer-facing")).toContainText("1 in the plan");
      // The staged effects say how each is released, not "Released by" over a tool name.
      await expect(page.getByRole("columnheader", { name: "To release it" })).toBeVisible();
      await expect(page.getByRole("columnheader", { name: "Released by" })).toHaveCount(0);
      // Amounts read as money, never the cents beside them (the raw JSON, one click away, keeps them).
      const captureValues = page.getByTestId("plan-item-0").locator("dl.values");
      await expect(captureValues).toContainText("18.00");
      await expect(captureValues).not.toContainText("1800");

      await emailRow.getByRole("button", { name: /^Edit the arguments of call 2/ }).click();
      const editor = page.getByRole("form", { name: /Edit call 2/ });
      await expect(editor).toBeVisible();
      await editor.getByLabel("body").fill(edited);
      await editor.getByLabel(/^Why/).fill("The parcel ships Tuesday.");
      await lookAtBothWidths(page, "pivot-edit-open");
      await editor.getByRole("button", { name: "Save the edit" }).click();

      const history = page.getByTestId("edit-history");
      await expect(history).toContainText(`${reviewer.email} edited call 2 (send_email)`);
      await expect(history).toContainText(mail.body);
      await expect(history).toContainText(edited);
      await expect(emailRow).toContainText(edited);

      // The pivot's plan IS the edited plan: new hash, the diff kept, an audit event.
      const row = await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } });
      expect(row.planHash).not.toBe(pivot.planHash);
      expect(((row.plan as { args: { body?: string } }[])[1]?.args.body)).toBe(edited);
      expect(row.edits).toMatchObject([{ itemIdx: 1, tool: "send_email", argsBefore: mail, argsAfter: { ...mail, body: edited }, planHashBefore: pivot.planHash, planHashAfter: row.planHash, editedBy: reviewer.email }]);
      expect(await db.auditEvent.count({ where: { runId: run.runId, type: "pivot.edited" } })).toBe(1);

      // Approving asks first (the email cannot be taken back); the confirmation names the edited email.
      await page.getByRole("button", { name: /^Approve…/ }).click();
      const confirmation = page.getByRole("dialog", { name: /cannot be taken back/ });
      await expect(confirmation).toContainText(`send_email to ${customer}`);
      await lookAtBothWidths(page, "pivot-confirm");
      await page.keyboard.press("Enter");
      await expect(page.locator(".decide-panel .decided")).toContainText(`Approved by ${reviewer.email}`);
      expect((await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("APPROVED");
    } finally {
      commit.open();
    }

    const { decided, original, outcomes } = await agentWork;
    // What the agent received over GET /api/v1/pivots/{id}: the edited plan, with the diff.
    expect(decided.plan[1]?.args).toEqual({ ...mail, body: edited });
    expect(decided.edits?.[0]?.argsBefore).toEqual(mail);
    // Only the edited call may run: the original wording is held for a reviewer.
    expect(original.status).toBe("approval_required");
    expect(outcomes.map((o) => o.status)).toEqual(["ok", "ok"]);

    // The simulated email system: the edited text, once; the original never.
    const sent = await effects(world, { op: "email.send" }, sentTo(customer));
    expect(sent).toHaveLength(1);
    expect((sent[0]?.args as { body?: string }).body).toBe(edited);

    await page.goto(`/pivots/${pivot.id}`);
    await expect(page.getByTestId("edit-history")).toContainText(edited);
    await lookAtBothWidths(page, "pivot-approved-after-edit");
  });

  test("a reversible-only plan is approved with one key", async ({ page, seedUser, db, agent }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const run = await agent.engine.startRun({ title: `Hold a reship ${tag}`, agent: agent.name });
    const staged = await stageReship(run, customerFor(tag), tag);
    const pivot = await run.requestPivot({ summary: "Capture the hold.", plan: [{ tool: "capture_payment", args: { paymentIntentId: staged.paymentIntentId, amount: staged.amount } }] });
    await signIn(page, reviewer, `/pivots/${pivot.id}`);
    const decided = page.locator(".decide-panel .decided");
    await expect(async () => {
      await page.keyboard.press("a");
      await expect(decided).toBeVisible({ timeout: 1_500 });
    }).toPass({ timeout: 15_000 });
    await expect(page.getByRole("dialog")).toHaveCount(0);
    expect((await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("APPROVED");
  });

  test("bulk approval of three held emails: each recorded on its own, asking twice changes nothing, three effects once each", async ({ page, baseURL, seedUser, db, agent, world }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const held: { runId: string; escalationId: string; customer: string; mail: { to: string; subject: string; body: string }; run: Awaited<ReturnType<typeof agent.engine.startRun>> }[] = [];
    for (let i = 1; i <= 3; i++) {
      const customer = customerFor(`${tag}-${i}`);
      const run = await agent.engine.startRun({ title: `Delay notice ${i} ${tag}`, agent: agent.name, onBehalfOf: customer });
      const mail = { to: customer, subject: `Order ${i} is late (${tag})`, body: "It ships in two days." };
      const outcome = await run.call("send_email", mail);
      if (outcome.status !== "approval_required" || !outcome.escalationId) throw new Error("the email should be held");
      held.push({ runId: run.runId, escalationId: outcome.escalationId, customer, mail, run });
    }

    await signIn(page, reviewer, "/escalations?kind=APPROVAL_REQUIRED");
    // "/" searches; only this test's three items remain.
    await expect(async () => {
      await page.keyboard.press("/");
      await expect(page.getByLabel("Search this page")).toBeFocused({ timeout: 1_000 });
    }).toPass({ timeout: 15_000 });
    await page.keyboard.type(tag);
    await page.keyboard.press("Escape"); // leaves the box, keeps the words
    const rows = page.getByTestId("queue-row");
    await expect(rows).toHaveCount(3);
    // j moves to a row and x selects it; the rest by their checkboxes.
    await page.keyboard.press("j");
    await expect(rows.nth(0)).toBeFocused();
    await page.keyboard.press("x");
    await expect(rows.nth(0).getByRole("checkbox")).toBeChecked();
    await page.keyboard.press("j");
    await expect(rows.nth(1)).toBeFocused();
    await page.keyboard.press("k");
    await expect(rows.nth(0)).toBeFocused();
    await rows.nth(1).getByRole("checkbox").check();
    await rows.nth(2).getByRole("checkbox").check();
    const bar = page.getByTestId("bulk-bar");
    await expect(bar).toContainText("3 held calls of send_email selected");
    await bar.getByLabel(/^Reason/).fill("Checked the wording.");
    await bar.getByRole("button", { name: "Approve 3…" }).click();
    await lookAtBothWidths(page, "queue-bulk-confirm");
    // Clicked twice: the second click finds the button busy or gone; the server decides each once.
    await bar.getByRole("button", { name: "Approve 3", exact: true }).dblclick();
    await expect(page.getByTestId("bulk-result")).toContainText("3 decided");

    for (const h of held) {
      const row = await db.escalation.findUniqueOrThrow({ where: { id: h.escalationId } });
      expect([row.status, row.resolvedBy, (row.resolution as { approved?: boolean }).approved, (row.resolution as { note?: string }).note]).toEqual(["RESOLVED", reviewer.email, true, "Checked the wording."]);
      expect(await db.auditEvent.count({ where: { runId: h.runId, type: "escalation.resolved" } })).toBe(1);
    }

    // Asked again (another click, another tab): every item is skipped and reported, nothing decided twice.
    const again = await page.request.post("/api/dashboard/escalations/decide", { data: { escalationIds: held.map((h) => h.escalationId), approve: true, note: "again" }, headers: { origin: baseURL ?? "" } });
    expect(again.status()).toBe(200);
    const body = (await again.json()) as { decided: number; skipped: number; items: { message: string | null }[] };
    expect([body.decided, body.skipped]).toEqual([0, 3]);
    expect(body.items[0]?.message).toContain(`already decided by ${reviewer.email}`);
    for (const h of held) expect(await db.auditEvent.count({ where: { runId: h.runId, type: "escalation.resolved" } })).toBe(1);

    // Each agent calls again: each approved email runs once; a resumed agent repeating it gets the logged result.
    for (const h of held) {
      expect((await h.run.call("send_email", h.mail)).status).toBe("ok");
      const replay = await (await agent.engine.resume(h.runId)).call("send_email", h.mail);
      expect(replay.status === "ok" && replay.replayed).toBe(true);
    }
    for (const h of held) expect(await effects(world, { op: "email.send" }, sentTo(h.customer))).toHaveLength(1);

    // An id that is not a held call refuses the whole request, deciding nothing.
    const mixed = await page.request.post("/api/dashboard/escalations/decide", { data: { escalationIds: [held[0]!.escalationId, "esc_doesnotexist"], approve: true }, headers: { origin: baseURL ?? "" } });
    expect(mixed.status()).toBe(404);
  });

  test("a recorded manual repair writes back to the step and finishes the run", async ({ page, seedUser, db, agent, world }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const run = await agent.engine.startRun({ title: `Refund that fails ${tag}`, agent: agent.name });
    const outcome = await run.call("authorize_payment", { customerId: "cus_bo", amount: 700, currency: "eur" });
    if (outcome.status !== "ok" || !outcome.externalRef) throw new Error("the authorisation should stage");
    // The provider refuses the release: the compensation fails and is escalated.
    await world.faults.inject("payments.cancelAuthorization", { kind: "reject", status: 409, code: "hold_locked" }, { times: 3 });
    const report = await run.unwind("customer cancelled");
    await world.faults.clear();
    expect(report.status).toBe("NEEDS_ATTENTION");
    const escalation = await db.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "COMPENSATION_FAILED" } });
    // An escalation some path raised with no owner is still routed by the tool table, which names one.
    await db.escalation.update({ where: { id: escalation.id }, data: { owner: null } });
    const { owner } = await db.toolPolicy.findUniqueOrThrow({ where: { name: "authorize_payment" } });
    expect(owner).toBe("payments-team");

    await signIn(page, reviewer, `/escalations/${escalation.id}`);
    await expect(page.locator("dt", { hasText: /^Owner$/ }).locator("xpath=following-sibling::dd[1]")).toHaveText("payments-team");
    // On a phone the resolution is one tap away from the top.
    await page.setViewportSize(PHONE);
    await page.getByRole("link", { name: "Go to the resolution ↓" }).click();
    await expect(page.getByRole("heading", { name: "Resolution" })).toBeInViewport();
    await page.setViewportSize(DESKTOP);
    await page.getByRole("button", { name: "Claim" }).click();
    await page.getByLabel("What you did to answer the effect (required)").fill("Released the hold by hand in the payments console.");
    await page.getByLabel("External ref of the repair (optional)").fill(`rel_${tag}`);
    await page.getByRole("button", { name: "Record repair" }).click();
    await expect(page.getByTestId("repaired-by-hand")).toBeVisible();
    await expect(page.getByText(`${reviewer.email} recorded at`)).toBeVisible();
    await expect(page.getByTestId("run-finished")).toContainText("The run is unwound");
    // "Resolved by" is said once.
    await expect(page.getByText(/Resolved\s*by/)).toHaveCount(1);
    await lookAtBothWidths(page, "escalation-repaired");

    const step = await db.step.findUniqueOrThrow({ where: { id: escalation.stepId! } });
    expect(step.manualRepair).toMatchObject({ repairedBy: reviewer.email, repairRef: `rel_${tag}`, escalationId: escalation.id });
    expect((await db.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("UNWOUND");
    expect(await db.auditEvent.count({ where: { runId: run.runId, type: "step.repaired_by_hand" } })).toBe(1);
    expect(await db.auditEvent.count({ where: { runId: run.runId, type: "run.settled" } })).toBe(1);
  });

  test("held by me with nothing held says where the open items are", async ({ page, seedUser, agent }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const run = await agent.engine.startRun({ title: `Open item ${tag}`, agent: agent.name });
    await run.call("send_email", { to: customerFor(tag), subject: `Hello ${tag}`, body: "Hi." });
    await signIn(page, reviewer, "/escalations?mine=1");
    await expect(page.getByText("You hold nothing right now.")).toBeVisible();
    await expect(page.getByText(/items? waits? in the queue/)).toBeVisible();
    await expect(page.getByText("Nothing waits for a person.")).toHaveCount(0);
    await lookAtBothWidths(page, "queue-held-by-me-empty");
    await page.goto("/escalations?kind=APPROVAL_REQUIRED");
    await expect(page.getByTestId("queue-row").first()).toBeVisible();
    await lookAtBothWidths(page, "queue-open");
  });
});
