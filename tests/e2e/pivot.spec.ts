/**
 * The pivot, end to end: a real agent (HTTP API, hosted simulated systems) stages a ticket draft, an
 * email draft and a payment authorisation, proposes a commit plan (capture + send_email) and waits
 * for the decision with awaitPivot. A reviewer decides on /pivots/<id>; the agent then commits (or
 * unwinds) while the run timeline is open, and the new rows appear there without a reload.
 *
 * Persisted state is asserted twice: in the saga log (e2e database) and in the ledger of the
 * simulated systems, which records what really happened outside Sagaboard.
 */
import type { Page } from "@playwright/test";
import type { CallOutcome, RunContext } from "@/packages/client/src/saga/run-context";
import type { PivotRecord } from "@/packages/client/src/saga/store";
import { customerFor, effects, expect, gate, sentTo, stageReship, test, uniqueTag, type StagedReship, type TestAgent } from "./agent";
import { screenshotPath, signIn } from "./fixtures";

/** A run staged up to its pivot, with the agent waiting for the decision in the background. */
interface WaitingRun {
  run: RunContext;
  pivot: PivotRecord;
  staged: StagedReship;
  customer: string;
  mail: { to: string; subject: string; body: string };
  title: string;
}

async function stageAndRequestPivot(agent: TestAgent): Promise<WaitingRun> {
  const tag = uniqueTag();
  const customer = customerFor(tag);
  const title = `Reship order 2001 with an apology ${tag}`;
  const run = await agent.engine.startRun({ title, agent: agent.name, onBehalfOf: customer });
  const staged = await stageReship(run, customer, tag);
  const mail = { to: customer, subject: `Your replacement ships today (${tag})`, body: "We re-shipped order 2001; the 18.00 EUR fee is captured." };
  const pivot = await run.requestPivot({
    summary: `Capture the 18.00 EUR hold and email ${customer} that the replacement is on its way.`,
    plan: [
      { tool: "capture_payment", args: { paymentIntentId: staged.paymentIntentId, amount: staged.amount } },
      { tool: "send_email", args: mail },
    ],
    deadline: new Date(Date.now() + 3 * 24 * 3600 * 1000),
  });
  return { run, pivot, staged, customer, mail, title };
}

/** The rows of the timeline's steps table. */
function stepRows(page: Page) {
  return page.locator('section[aria-labelledby="steps"] tbody tr');
}

/** Marks the document so a later check can tell that the page was never reloaded. */
async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => {
    (window as unknown as { __sagaboardNoReload?: boolean }).__sagaboardNoReload = true;
  });
}

async function documentWasKept(page: Page): Promise<boolean> {
  return page.evaluate(() => (window as unknown as { __sagaboardNoReload?: boolean }).__sagaboardNoReload === true);
}

/** The staged effects are grouped by system, with their external refs; the irreversible plan item stands out. */
async function expectStagedAndPlan(page: Page, w: WaitingRun): Promise<void> {
  const staged = page.locator('section[aria-labelledby="staged"]');
  for (const group of ["Ticketing · 1 effect", "Email · 1 effect", "Payments · 1 effect"]) {
    await expect(staged.locator("tr.group-row", { hasText: group })).toBeVisible();
  }
  const stagedRows = staged.locator("tbody tr:not(.group-row)");
  await expect(stagedRows).toHaveCount(3);
  await expect(stagedRows.filter({ hasText: "create_ticket_draft" })).toContainText(w.staged.ticketId);
  await expect(stagedRows.filter({ hasText: "create_email_draft" })).toContainText(w.staged.draftId);
  await expect(stagedRows.filter({ hasText: "authorize_payment" })).toContainText(w.staged.paymentIntentId);
  await expect(stagedRows.filter({ hasText: "authorize_payment" })).toContainText("cancel_authorization");

  const plan = page.locator('section[aria-labelledby="plan"] tbody tr');
  await expect(plan).toHaveCount(2);
  const irreversible = plan.and(page.locator("tr.row-irreversible"));
  await expect(irreversible).toHaveCount(1);
  await expect(irreversible).toContainText("send_email");
  await expect(irreversible).toContainText("IRREVERSIBLE");
  await expect(irreversible).toContainText(w.mail.subject);
  await expect(irreversible).toContainText("No undo");
  await expect(plan.filter({ hasText: "capture_payment" })).toContainText(w.staged.paymentIntentId);
  await expect(page.getByText("1 cannot be taken back: send_email")).toBeVisible();
}

test.describe("a pivot requested by an agent through the API", () => {
  test("approved with the keyboard: the agent commits each plan item once, live on the timeline", async ({ page, seedUser, db, agent, world }) => {
    const reviewer = await seedUser("reviewer");
    const w = await stageAndRequestPivot(agent);
    const commit = gate();
    const agentWork = (async () => {
      const decided = await w.run.awaitPivot(w.pivot.id, { timeoutMs: 50_000 });
      const sawDecisionAt = Date.now();
      if (decided.status !== "APPROVED") return { decided, sawDecisionAt, outcomes: [] as CallOutcome[] };
      await commit.promise;
      const outcomes: CallOutcome[] = [];
      for (const item of decided.plan) outcomes.push(await w.run.call(item.tool, item.args));
      await w.run.complete();
      return { decided, sawDecisionAt, outcomes };
    })();
    agentWork.catch(() => undefined); // awaited below; this only keeps an early test failure from crashing the worker

    try {
      await signIn(page, reviewer, `/pivots/${w.pivot.id}`);
      await expect(page.getByRole("heading", { name: `Pivot of “${w.title}”` })).toBeVisible();
      await expectStagedAndPlan(page, w);
      await expect(page.getByTestId("sla-countdown")).toContainText("if nobody decides");
      await page.screenshot({ path: screenshotPath("pivot-screen"), fullPage: true });

      // "a" on a plan that emails a customer does not approve: it asks, naming what cannot be taken
      // back (pressed until the page is interactive); only Enter on that confirmation approves.
      const confirmation = page.getByRole("dialog", { name: /cannot be taken back/ });
      await expect(async () => {
        await page.keyboard.press("a");
        await expect(confirmation).toBeVisible({ timeout: 1_500 });
      }).toPass({ timeout: 15_000 });
      await expect(confirmation).toContainText(`send_email to ${w.customer}`);
      await expect(confirmation).toContainText(w.mail.subject);
      await expect(confirmation).toContainText("seen by customer");
      await expect(confirmation).not.toContainText("capture_payment");
      await page.screenshot({ path: screenshotPath("pivot-confirm-irreversible"), fullPage: true });
      expect((await db.pivot.findUniqueOrThrow({ where: { id: w.pivot.id } })).status).toBe("PENDING");
      await page.keyboard.press("Enter");
      const decided = page.locator(".decide-panel .decided");
      await expect(decided).toContainText(`Approved by ${reviewer.email}`);
      await expect(confirmation).toBeHidden();
      // Live after the decision, without a reload: nothing says it will be rejected if nobody decides.
      await expect(page.getByTestId("sla-countdown")).toHaveCount(0);
      await expect(page.getByText("if nobody decides")).toHaveCount(0);

      const row = await db.pivot.findUniqueOrThrow({ where: { id: w.pivot.id } });
      expect(row.status).toBe("APPROVED");
      expect(row.decidedBy).toBe(reviewer.email);
      expect(row.planHash).toBe(w.pivot.planHash);

      // The timeline is open before the agent commits: the commit rows must arrive by polling.
      await page.goto(`/runs/${w.run.runId}`);
      await expect(stepRows(page)).toHaveCount(3);
      await expect(page.getByText("This run waits for a reviewer.")).toHaveCount(0);
      await markDocument(page);
    } finally {
      commit.open();
    }

    const { decided, sawDecisionAt, outcomes } = await agentWork;
    expect(decided.status).toBe("APPROVED");
    expect(decided.decidedBy).toBe(reviewer.email);
    // The long poll hands the decision to the waiting agent within about a second.
    expect(sawDecisionAt - (decided.decidedAt?.getTime() ?? 0)).toBeLessThan(2_000);
    expect(outcomes.map((o) => o.status)).toEqual(["ok", "ok"]);

    const rows = stepRows(page);
    await expect(rows).toHaveCount(5);
    for (const tool of ["capture_payment", "send_email"]) {
      const commitRow = rows.filter({ hasText: tool });
      await expect(commitRow).toContainText("commit");
      await expect(commitRow).toContainText("CONFIRMED");
    }
    await expect(page.locator(".page-head .badge", { hasText: "COMPLETED" })).toBeVisible();
    expect(await documentWasKept(page)).toBe(true);
    await page.screenshot({ path: screenshotPath("run-timeline-committed"), fullPage: true });

    // The saga log: both plan items ran in the COMMIT phase under this pivot, once each.
    const commitSteps = await db.step.findMany({ where: { runId: w.run.runId, phase: "COMMIT" }, orderBy: { stepIdx: "asc" } });
    expect(commitSteps.map((s) => [s.tool, s.status, s.approvalId, s.planItemIdx])).toEqual([
      ["capture_payment", "CONFIRMED", w.pivot.id, 0],
      ["send_email", "CONFIRMED", w.pivot.id, 1],
    ]);
    expect((await db.run.findUniqueOrThrow({ where: { id: w.run.runId } })).status).toBe("COMPLETED");

    // The real systems: exactly one email to this customer and one capture of this hold.
    const sendStep = commitSteps[1]!;
    expect(await effects(world, { op: "email.send" }, sentTo(w.customer))).toHaveLength(1);
    expect(await effects(world, { op: "email.send", key: sendStep.stepKey })).toHaveLength(1);
    const captures = await effects(world, { op: "payments.capture", ref: w.staged.paymentIntentId });
    expect(captures).toHaveLength(1);
    expect((await world.payments.getPaymentIntent(w.staged.paymentIntentId))?.status).toBe("succeeded");
    expect(await effects(world, { op: "payments.cancelAuthorization", ref: w.staged.paymentIntentId })).toHaveLength(0);
  });

  test("rejected with a reason: the agent unwinds and the released steps show on the timeline", async ({ page, seedUser, db, agent, world }) => {
    const reviewer = await seedUser("reviewer");
    const w = await stageAndRequestPivot(agent);
    const unwind = gate();
    const agentWork = (async () => {
      const decided = await w.run.awaitPivot(w.pivot.id, { timeoutMs: 50_000 });
      if (decided.status !== "REJECTED") return { decided, report: null };
      await unwind.promise;
      return { decided, report: await w.run.unwind(`pivot rejected: ${decided.reason ?? ""}`) };
    })();
    agentWork.catch(() => undefined);
    const reason = "Do not capture: the customer asked for store credit instead.";

    try {
      await signIn(page, reviewer, `/pivots/${w.pivot.id}`);
      await expectStagedAndPlan(page, w);

      // "r" goes to the reason box (pressed until the page is interactive); the button sends it.
      const reasonBox = page.getByLabel("Reason for the agent (required to reject)");
      await expect(async () => {
        await page.keyboard.press("r");
        await expect(reasonBox).toBeFocused({ timeout: 1_000 });
      }).toPass({ timeout: 15_000 });
      await page.keyboard.type(reason);
      await page.getByLabel("What should the agent do?").selectOption("DO_NOT_PROCEED");
      await page.getByRole("button", { name: /^Reject/ }).click();
      const decided = page.locator(".decide-panel .decided");
      await expect(decided).toContainText(`Rejected by ${reviewer.email}`);
      await expect(decided).toContainText(reason);

      const row = await db.pivot.findUniqueOrThrow({ where: { id: w.pivot.id } });
      expect([row.status, row.decidedBy, row.reason, row.reasonCode]).toEqual(["REJECTED", reviewer.email, reason, "DO_NOT_PROCEED"]);
      await expect(decided).toContainText("The agent was told: Stop: unwind what was staged.");

      await page.goto(`/runs/${w.run.runId}`);
      await expect(stepRows(page)).toHaveCount(3);
      await expect(stepRows(page).filter({ hasText: "COMPENSATED" })).toHaveCount(0);
      await markDocument(page);
    } finally {
      unwind.open();
    }

    const { decided, report } = await agentWork;
    expect(decided.reason).toBe(reason);
    // The agent reads the code back over the API, as a value it can act on (here: unwind).
    expect(decided.reasonCode).toBe("DO_NOT_PROCEED");
    expect(report?.status).toBe("UNWOUND");

    // The unwind arrives on the open timeline: every staged step released, the run unwound.
    const rows = stepRows(page);
    await expect(rows.filter({ hasText: "COMPENSATED" })).toHaveCount(3);
    for (const [tool, compensator] of [
      ["create_ticket_draft", "delete_ticket_draft"],
      ["create_email_draft", "delete_email_draft"],
      ["authorize_payment", "cancel_authorization"],
    ] as const) {
      await expect(rows.filter({ hasText: tool })).toContainText(compensator);
      await expect(rows.filter({ hasText: tool })).toContainText("confirmed");
    }
    await expect(page.locator(".page-head .badge", { hasText: "UNWOUND" })).toBeVisible();
    expect(await documentWasKept(page)).toBe(true);
    await page.screenshot({ path: screenshotPath("run-timeline-unwound"), fullPage: true });

    // The saga log.
    const steps = await db.step.findMany({ where: { runId: w.run.runId }, orderBy: { stepIdx: "asc" } });
    expect(steps.map((s) => [s.tool, s.status, s.compensationState])).toEqual([
      ["create_ticket_draft", "COMPENSATED", "CONFIRMED"],
      ["create_email_draft", "COMPENSATED", "CONFIRMED"],
      ["authorize_payment", "COMPENSATED", "CONFIRMED"],
    ]);
    expect(steps.some((s) => s.phase !== "STAGING")).toBe(false);
    expect((await db.run.findUniqueOrThrow({ where: { id: w.run.runId } })).status).toBe("UNWOUND");

    // The real systems: the hold released once, both drafts deleted, nothing sent or captured.
    expect(await effects(world, { op: "payments.cancelAuthorization", ref: w.staged.paymentIntentId })).toHaveLength(1);
    expect((await world.payments.getPaymentIntent(w.staged.paymentIntentId))?.status).toBe("canceled");
    expect(await effects(world, { op: "payments.capture", ref: w.staged.paymentIntentId })).toHaveLength(0);
    expect(await effects(world, { op: "email.deleteDraft", ref: w.staged.draftId })).toHaveLength(1);
    expect(await world.email.getDraft(w.staged.draftId)).toBeUndefined();
    expect(await effects(world, { op: "ticketing.deleteDraft", ref: w.staged.ticketId })).toHaveLength(1);
    expect(await world.ticketing.get(w.staged.ticketId)).toBeUndefined();
    expect(await effects(world, { op: "email.send" }, sentTo(w.customer))).toHaveLength(0);
  });
});
