/**
 * The desks, fourth pass (issue 48): what a reviewer, support and an admin still tripped over, each
 * with a real agent behind it (HTTP API, hosted simulated systems), each screen shot at 1366 and 390 px
 * for a person to look at (test-results/screenshots/fourth-*.png):
 * - a bulk approval lists each held call's arguments as labelled values and its run;
 * - the run page agrees with a recorded manual repair (one rule for where a step stands);
 * - support reads the reviewer's reason on a correction a revoke drafted;
 * - keyboard reject (r, type, Ctrl+Enter) sends what was typed, under no instruction nobody chose.
 */
import type { PrismaClient } from "@/lib/core/db/prisma";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaEngine } from "@/lib/saga/engine";
import type { RemoteWorld } from "@/lib/demo/sim/remote";
import { customerFor, expect, stageReship, test, uniqueTag } from "./agent";
import { shootBothWidths, signIn } from "./fixtures";

/** A reviewer's engine in the test process (for approving what a test needs approved beforehand). */
function reviewerEngine(db: PrismaClient, world: RemoteWorld): SagaEngine {
  return new SagaEngine({ store: new PrismaSagaStore(db), registry: createSupportToolRegistry(world) });
}

test.describe("the desks, fourth pass", () => {
  test("a bulk approval shows each held call's arguments and its run, so calls from different runs can be told apart", async ({ page, seedUser, agent }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const held: { title: string; to: string; subject: string }[] = [];
    for (const i of [1, 2]) {
      const title = `Bulk look ${i} ${tag}`;
      const to = customerFor(`${tag}-${i}`);
      const subject = `Delay ${i} (${tag})`;
      const run = await agent.engine.startRun({ title, agent: agent.name });
      expect((await run.call("send_email", { to, subject, body: `Body ${i}` })).status).toBe("approval_required");
      held.push({ title, to, subject });
    }
    await signIn(page, reviewer, "/escalations?kind=APPROVAL_REQUIRED");
    await page.getByLabel("Search this page").fill(tag);
    const rows = page.getByTestId("queue-row");
    await expect(rows).toHaveCount(2);
    await rows.nth(0).getByRole("checkbox").check();
    await rows.nth(1).getByRole("checkbox").check();
    const bar = page.getByTestId("bulk-bar");
    await bar.getByRole("button", { name: "Approve 2…" }).click();
    const items = bar.getByTestId("bulk-item");
    await expect(items).toHaveCount(2);
    for (const h of held) {
      const item = items.filter({ hasText: h.title });
      await expect(item).toHaveCount(1);
      // Labelled values, not JSON: "to" and "subject" beside their values; the raw form closed.
      await expect(item.locator("dl.values")).toContainText(h.to);
      await expect(item.locator("dl.values")).toContainText(h.subject);
      await expect(item.locator("dl.values")).toContainText(`Body ${held.indexOf(h) + 1}`);
      await expect(item.locator("details.raw-inline")).not.toHaveAttribute("open");
    }
    await shootBothWidths(page, "fourth-bulk-confirm");
  });

  test("after a recorded repair the run page says repaired by hand, never still out there", async ({ page, seedUser, db, agent, world }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const run = await agent.engine.startRun({ title: `Repair agrees ${tag}`, agent: agent.name });
    const outcome = await run.call("authorize_payment", { customerId: "cus_bo", amount: 700, currency: "eur" });
    if (outcome.status !== "ok") throw new Error("the authorisation should stage");
    await world.faults.inject("payments.cancelAuthorization", { kind: "reject", status: 409, code: "hold_locked" }, { times: 3 });
    await run.unwind("customer cancelled");
    await world.faults.clear();
    const escalation = await db.escalation.findFirstOrThrow({ where: { runId: run.runId, kind: "COMPENSATION_FAILED" } });

    await signIn(page, reviewer, `/runs/${run.runId}`);
    const steps = page.locator('section[aria-labelledby="steps"] tbody tr');
    await expect(steps.first()).toContainText("COMPENSATION FAILED");
    await expect(steps.first()).toContainText("still out there");

    await page.goto(`/escalations/${escalation.id}`);
    await page.getByRole("button", { name: "Claim" }).click();
    await page.getByLabel("What you did to answer the effect (required)").fill("Released the hold by hand in the payments console.");
    await page.getByLabel("External ref of the repair (optional)").fill(`rel_${tag}`);
    await page.getByRole("button", { name: "Record repair" }).click();
    await expect(page.getByTestId("repaired-by-hand")).toContainText("REPAIRED BY HAND");

    await page.goto(`/runs/${run.runId}`);
    await expect(steps.first()).toContainText("REPAIRED BY HAND");
    await expect(steps.first()).toContainText(`rel_${tag}`);
    await expect(steps.first()).not.toContainText("still out there");
    await expect(steps.first()).not.toContainText("COMPENSATION FAILED");
    // The log keeps what happened: the compensation did fail, and a person answered it.
    const step = await db.step.findUniqueOrThrow({ where: { id: escalation.stepId! } });
    expect(step.status).toBe("COMPENSATION_FAILED");
    expect(step.manualRepair).toMatchObject({ repairedBy: reviewer.email, repairRef: `rel_${tag}` });
    await shootBothWidths(page, "fourth-run-repaired");
  });

  test("support reads the reviewer's reason on a correction a revoke drafted", async ({ page, baseURL, seedUser, db, agent, world }) => {
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const rita = await seedUser("reviewer", { name: `Rita Reason ${tag}` });
    const sam = await seedUser("support");
    const run = await agent.engine.startRun({ title: `Revoke reason ${tag}`, agent: agent.name, onBehalfOf: customer });
    const mail = { to: customer, subject: `Order ${tag} shipped`, body: "Your order shipped." };
    const pivot = await run.requestPivot({ summary: "email the customer", plan: [{ tool: "send_email", args: mail }] });
    await reviewerEngine(db, world).decidePivot(pivot.id, { approve: true, actor: { type: "user", id: rita.email }, planHash: pivot.planHash });
    expect((await run.call("send_email", mail)).status).toBe("ok");
    await run.complete();
    const step = await db.step.findFirstOrThrow({ where: { runId: run.runId, tool: "send_email" } });

    await signIn(page, rita);
    const reason = `Wrong order: this was order ${tag}-B; tell Bo the first email was a mistake.`;
    const pulled = await page.request.post(`/api/dashboard/steps/${step.id}/revoke`, { data: { reason }, headers: { origin: baseURL ?? "" } });
    expect(pulled.status()).toBe(200);
    const correction = await db.correction.findFirstOrThrow({ where: { runId: run.runId } });
    expect(correction.draftedBy).toMatch(/^revoke:rvk_/);

    await page.context().clearCookies();
    await signIn(page, sam, `/corrections/${correction.id}`);
    const why = page.getByTestId("why-drafted");
    await expect(why).toContainText(reason);
    await expect(why).toContainText(`Rita Reason ${tag}`);
    await expect(why).toContainText("as reviewer");
    await shootBothWidths(page, "fourth-correction-why");
  });

  test("keyboard reject: r, the reason typed, Ctrl+Enter sends the typed reason under no instruction nobody chose", async ({ page, seedUser, db, agent }) => {
    const reviewer = await seedUser("reviewer");
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const run = await agent.engine.startRun({ title: `Keyboard reject ${tag}`, agent: agent.name, onBehalfOf: customer });
    const staged = await stageReship(run, customer, tag);
    const pivot = await run.requestPivot({
      summary: "Open the ticket and capture the hold.",
      plan: [{ tool: "capture_payment", args: { paymentIntentId: staged.paymentIntentId, amount: staged.amount } }],
    });
    await signIn(page, reviewer, `/pivots/${pivot.id}`);
    const reasonBox = page.getByLabel("Reason for the agent (required to reject)");
    await expect(async () => {
      await page.keyboard.press("r");
      await expect(reasonBox).toBeFocused({ timeout: 1_000 });
    }).toPass({ timeout: 15_000 });
    const typed = "Do not open the ticket";
    await page.keyboard.type(typed);
    await page.keyboard.press("Control+Enter");
    const decided = page.locator(".decide-panel .decided");
    await expect(decided).toContainText(`Rejected by ${reviewer.email}`);
    await expect(decided).toContainText(`The agent was told, in your words: “${typed}”`);
    await expect(decided).not.toContainText("Change an argument");
    const row = await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } });
    expect([row.status, row.reason, row.reasonCode]).toEqual(["REJECTED", typed, "OTHER"]);
    // The agent reads back exactly what was typed.
    const read = await run.awaitPivot(pivot.id, { timeoutMs: 5_000 });
    expect([read.reason, read.reasonCode]).toEqual([typed, "OTHER"]);
    await shootBothWidths(page, "fourth-keyboard-reject");
  });
});
