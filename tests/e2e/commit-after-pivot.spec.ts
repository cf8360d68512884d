/**
 * The headline flow as a newcomer meets it: the demo agent (the same script `npm start` runs, in its
 * own process, through the API) waits at its pivot; a reviewer approves in the browser; the run is
 * committed and COMPLETED, and the simulated email provider holds one email for the step's key.
 * Again with the agent killed while it waits and a fresh agent process started after the approval.
 * And with no agent at all: the stuck escalation is worked in the browser ("let a worker commit"),
 * two worker processes race the task, each plan item has one effect.
 */
import path from "node:path";
import type { Page } from "@playwright/test";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import type { PrismaClient } from "@/lib/core/db/prisma";
import type { PivotRecord } from "@/packages/client/src/saga/store";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { sweepStuckRuns } from "@/lib/server/worker/sweep-stuck-runs";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { effects, expect, test, uniqueTag } from "./agent";
import { screenshotPath, signIn } from "./fixtures";
import { launchScript } from "../support/script-process";
import type { RemoteWorld } from "@/lib/demo/sim/remote";

/** A token for a demo agent of this test only (its runs are told apart by the token's name). */
async function demoToken(db: PrismaClient, world: RemoteWorld): Promise<{ name: string; secret: string }> {
  const name = `demo-${uniqueTag()}`;
  const registry = createSupportToolRegistry(world);
  await syncToolPolicies(db, registry, "system:e2e");
  const tools = registry.list().map((t) => t.name);
  const { secret } = await createAgentToken(db, { name, tools, createdBy: "system:e2e" });
  return { name, secret };
}

/** Approves the pivot on its screen as a reviewer does: "a", then Enter on the confirmation. */
async function approveInBrowser(page: Page, pivotId: string): Promise<void> {
  await page.goto(`/pivots/${pivotId}`);
  const confirmation = page.getByRole("dialog", { name: /cannot be taken back/ });
  await expect(async () => {
    await page.keyboard.press("a");
    await expect(confirmation).toBeVisible({ timeout: 1_500 });
  }).toPass({ timeout: 15_000 });
  await page.keyboard.press("Enter");
  await expect(page.locator(".decide-panel .decided")).toContainText("Approved by");
}

/** Each plan item of `pivot` is one CONFIRMED step with exactly one effect in the hosted ledger. */
async function expectOneEffectPerItem(db: PrismaClient, world: RemoteWorld, runId: string, pivot: PivotRecord): Promise<void> {
  const steps = await new PrismaSagaStore(db).listSteps(runId);
  for (const [index] of pivot.plan.entries()) {
    const rows = steps.filter((s) => s.approvalId === pivot.id && s.planItemIdx === index);
    expect(rows, `plan item ${index}`).toHaveLength(1);
    expect(rows[0]!.status).toBe("CONFIRMED");
    expect(await effects(world, { key: rows[0]!.stepKey }), `effects of plan item ${index}`).toHaveLength(1);
  }
}

test.describe("after the pivot", () => {
  test.setTimeout(180_000);

  test("the demo agent waits at its pivot; the reviewer approves in the browser; the run completes with one email", async ({ page, db, world, seedUser, baseURL }) => {
    const token = await demoToken(db, world);
    const demo = launchScript(path.join("scripts", "demo.ts"), [], { SAGABOARD_URL: baseURL!, SAGABOARD_TOKEN: token.secret });
    try {
      const [, pivotId] = await demo.waitFor(/Waiting for a reviewer to decide pivot (piv_\S+):/);
      const reviewer = await seedUser("reviewer");
      await signIn(page, reviewer, `/pivots/${pivotId}`);
      await approveInBrowser(page, pivotId!);

      const { code, out } = await demo.exit;
      expect(code, out).toBe(0);
      expect(out).toContain("Run completed.");
      expect(out).not.toContain("DETERMINISM");
      const pivot = (await new PrismaSagaStore(db).getPivot(pivotId!))!;
      const run = await db.run.findUniqueOrThrow({ where: { id: pivot.runId } });
      expect(run.status).toBe("COMPLETED");
      await expectOneEffectPerItem(db, world, run.id, pivot);
      const email = await db.step.findFirstOrThrow({ where: { runId: run.id, approvalId: pivot.id, tool: "send_email" } });
      expect(await effects(world, { op: "email.send", key: email.stepKey })).toHaveLength(1);

      // The reviewer's pivot screen follows live: the plan's calls ran, and the decision's deadline is gone.
      const progress = page.getByTestId("commit-progress");
      await expect(progress).toContainText(`${pivot.plan.length} of ${pivot.plan.length} ran`, { timeout: 15_000 });
      await expect(progress).toContainText("the run is complete");
      await expect(page.getByRole("heading", { name: "What the approval lets the agent do" })).toBeVisible();
      await expect(page.getByTestId(`plan-item-${pivot.plan.length - 1}`)).toContainText("CONFIRMED");
      // The capture's amount reads in the currency of the authorisation it names, as the staged table does.
      await expect(page.getByTestId("plan-item-0")).toContainText("€18.00");
      await page.screenshot({ path: screenshotPath("commit-demo-pivot-after"), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.screenshot({ path: screenshotPath("commit-demo-pivot-after-390"), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 720 });

      await page.goto(`/runs/${run.id}`);
      await expect(page.getByRole("heading", { name: /Reship order 2001 with an apology/ })).toBeVisible();
      await expect(page.getByTestId("run-progress")).toContainText(/complete/i);
      await page.screenshot({ path: screenshotPath("commit-demo-completed"), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: screenshotPath("commit-demo-completed-390"), fullPage: true });
    } finally {
      demo.child.kill("SIGKILL");
    }
  });

  test("the demo agent killed before the approval; a fresh agent process commits without replaying the staged steps", async ({ page, db, world, seedUser, baseURL }) => {
    const token = await demoToken(db, world);
    const demo = launchScript(path.join("scripts", "demo.ts"), [], { SAGABOARD_URL: baseURL!, SAGABOARD_TOKEN: token.secret });
    const [, pivotId] = await demo.waitFor(/Waiting for a reviewer to decide pivot (piv_\S+):/);
    demo.child.kill("SIGKILL");
    await demo.exit;

    const reviewer = await seedUser("reviewer");
    await signIn(page, reviewer, `/pivots/${pivotId}`);
    await approveInBrowser(page, pivotId!);
    const pivot = (await new PrismaSagaStore(db).getPivot(pivotId!))!;
    expect((await db.run.findUniqueOrThrow({ where: { id: pivot.runId } })).status).toBe("COMMITTING");

    const fresh = await launchScript(path.join("scripts", "demo.ts"), ["--commit-approved"], { SAGABOARD_URL: baseURL!, SAGABOARD_TOKEN: token.secret }).exit;
    expect(fresh.code, fresh.out).toBe(0);
    expect(fresh.out).toContain("Committed 1 approved plan(s).");
    expect((await db.run.findUniqueOrThrow({ where: { id: pivot.runId } })).status).toBe("COMPLETED");
    await expectOneEffectPerItem(db, world, pivot.runId, pivot);
  });

  test("no agent: a reviewer lets a worker commit the stuck run; two workers race; one effect per item", async ({ page, db, world, seedUser, agent, baseURL }) => {
    const tag = uniqueTag();
    const title = `Tell Dee her refund is on its way (${tag})`;
    const run = await agent.engine.startRun({ title, agent: agent.name });
    await run.call("create_ticket", { summary: `Refund for Dee (${tag})`, orderId: "4401" });
    const mail = { to: `dee-${tag}@example.com`, subject: `Your refund (${tag})`, body: "It is on its way." };
    const pivot = await run.requestPivot({ summary: "Email Dee that her refund is on its way.", plan: [{ tool: "send_email", args: mail }] });
    const reviewer = await seedUser("reviewer");
    await signIn(page, reviewer, `/pivots/${pivot.id}`);
    await approveInBrowser(page, pivot.id);
    // The agent never comes back. The sweep every app instance runs, with its threshold shortened here.
    await new Promise((r) => setTimeout(r, 1_200));
    const swept = await sweepStuckRuns({ prisma: db, store: new PrismaSagaStore(db), workerId: "e2e-sweep", stuckAfterMs: 1_000 });
    const raised = swept.stuck.find((s) => s.runId === run.runId);
    expect(raised).toBeDefined();

    await page.goto(`/escalations/${raised!.escalationId}`);
    await page.getByRole("button", { name: "Claim" }).click();
    const commit = page.getByLabel(/Let a worker commit the approved plan/);
    await expect(commit).toBeVisible();
    await expect(page.getByLabel(/Unwind instead/)).toBeVisible();
    await commit.check();
    await page.getByLabel("Why (required)").fill("The agent crashed after the approval; commit what was approved.");
    await page.screenshot({ path: screenshotPath("stuck-let-worker-commit"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: screenshotPath("stuck-let-worker-commit-390"), fullPage: true });
    await page.setViewportSize({ width: 1366, height: 800 });
    await page.getByRole("button", { name: "Resolve", exact: true }).click();
    await expect(page.locator(".resolve-panel .decided")).toContainText(`Resolved by ${reviewer.email}`);
    const task = await db.workerTask.findFirstOrThrow({ where: { runId: run.runId, kind: "COMMIT_PLAN" } });
    expect(task.status).toBe("PENDING");

    const worker = await createAgentToken(db, { name: `commit-worker-${tag}`, tools: ["create_ticket", "send_email"], role: "worker", createdBy: "system:e2e" });
    const env = { SAGABOARD_URL: baseURL!, SAGABOARD_TOKEN: worker.secret };
    const [a, b] = await Promise.all([
      launchScript(path.join("scripts", "worker.ts"), ["--once"], { ...env, SAGABOARD_WORKER_ID: `w-a-${tag}` }).exit,
      launchScript(path.join("scripts", "worker.ts"), ["--once"], { ...env, SAGABOARD_WORKER_ID: `w-b-${tag}` }).exit,
    ]);
    expect(a.code, a.out).toBe(0);
    expect(b.code, b.out).toBe(0);
    expect((await db.workerTask.findUniqueOrThrow({ where: { id: task.id } })).status).toBe("DONE");
    expect((await db.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("COMPLETED");
    await expectOneEffectPerItem(db, world, run.runId, pivot);
    expect(await effects(world, { op: "email.send" }, (e) => (e.args as { to?: string }).to === mail.to)).toHaveLength(1);
  });
});
