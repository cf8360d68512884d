/**
 * The overview in the browser: a viewer opens /overview after a few runs were recorded (one
 * completed through its pivot, one unwound with a failed compensation repaired by hand, one waiting
 * at its pivot, one call held for approval), sees what waits for people and the charts, with the
 * figures the lib computes, and the page works on a phone. Screenshots at 1280 and 390 px.
 */
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { readOverview } from "@/lib/desks/overview/get-overview";
import { World } from "@/lib/demo/sim";
import { expect, screenshotPath, signIn, test } from "./fixtures";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const apology = { to: "bo@example.com", subject: "Your replacement is on its way", body: "We re-shipped order 2001." };

test("a viewer reads the overview: waiting items by kind and age, and run quality as charts, on a desktop and a phone", async ({ page, db, seedUser }) => {
  // Runs recorded in this process against a world of its own (their effects need no server).
  const world = new World({ searchLagMs: 0 });
  const engine = new ReviewerEngine({ store: new PrismaSagaStore(db), registry: createSupportToolRegistry(world), recheckAfterMs: 10, backoffMs: 5 });
  const person = { type: "user" as const, id: "rita@example.com" };
  const done = await engine.startRun({ title: "Overview: completed", agent: "overview-agent" });
  await done.call("create_email_draft", apology);
  const pivot = await done.requestPivot({ summary: "Send it.", plan: [{ tool: "send_email", args: apology }] });
  await engine.decidePivot(pivot.id, { approve: true, actor: person, planHash: pivot.planHash });
  await done.call("send_email", apology);
  await done.complete();
  const failing = await engine.startRun({ title: "Overview: failed close", agent: "overview-agent" });
  await failing.call("create_ticket", { summary: "Refund 3003", orderId: "3003" });
  await failing.call("create_ticket_draft", { summary: "Reship 3003", orderId: "3003" });
  world.faults.inject("ticketing.close", { kind: "reject", status: 409 }, { times: 10 });
  await engine.unwind(failing.runId, person, "wrong order");
  const broken = await db.escalation.findFirstOrThrow({ where: { runId: failing.runId, kind: "COMPENSATION_FAILED" } });
  await engine.resolveEscalation(broken.id, { actor: person, note: "closed it by hand" });
  const waiting = await engine.startRun({ title: "Overview: waiting", agent: "overview-agent" });
  await waiting.call("create_email_draft", apology);
  const waitingPivot = await waiting.requestPivot({ summary: "Send it.", plan: [{ tool: "send_email", args: apology }] });
  const held = await engine.startRun({ title: "Overview: held", agent: "overview-agent" });
  await held.call("send_email", apology);

  const viewer = await seedUser("viewer");
  await signIn(page, viewer, "/overview");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" }).click();
  await expect(page).toHaveURL(/\/overview/);
  await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();
  const expected = await readOverview(db, "7d");
  const waitingTable = page.getByRole("table");
  await expect(waitingTable.getByRole("row", { name: /Pivots waiting for a reviewer/ })).toContainText(String(expected.waiting.find((w) => w.kind === "PIVOT")!.total));
  await expect(waitingTable.getByRole("row", { name: /Held calls to approve/ })).toBeVisible();
  const irreversible = page.getByRole("region", { name: "Irreversible steps executed before the pivot" });
  await expect(irreversible).toContainText("As it must be");
  await expect(page.getByRole("region", { name: "Compensations requested vs confirmed" })).toContainText(`${expected.totals.compensationsConfirmed} / ${expected.totals.compensationsRequested}`);
  await expect(page.getByRole("region", { name: "Manual repair time" })).toContainText(`over ${expected.totals.repairsResolved} repairs`);
  // The charts arrive drawn with the page.
  await expect(page.getByTestId("chart").first()).toBeVisible();
  // The raw numbers are one click away.
  await page.getByRole("region", { name: "Incomplete runs" }).getByText("The numbers").click();
  await expect(page.getByRole("region", { name: "Incomplete runs" }).getByRole("table")).toBeVisible();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: screenshotPath("overview-desktop"), fullPage: true });

  // Another range from the address.
  await page.getByRole("link", { name: "90 days" }).click();
  await expect(page).toHaveURL(/range=90d/);
  await expect(page.getByRole("link", { name: "90 days" })).toHaveAttribute("aria-current", "page");

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/overview?range=7d");
  await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();
  await expect(page.getByTestId("chart").first()).toBeVisible();
  // Nothing wider than the phone's screen.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: screenshotPath("overview-phone"), fullPage: true });

  // The waiting pivot's screen counts its SLA down (default rule: breached in 4 h, rejected at 24 h).
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`/pivots/${waitingPivot.id}`);
  const countdown = page.getByTestId("sla-countdown");
  await expect(countdown).toContainText("default for pivot");
  // The dashboard's one duration format (formatDuration), as the pivot's DEADLINE card says it.
  await expect(countdown).toContainText(/breached in 3h 59m|breached in 4h\b/);
  await expect(countdown).toContainText("rejected in 23h");
  await page.screenshot({ path: screenshotPath("pivot-sla-countdown"), fullPage: false });

  // A range the page does not know: said so, and the default shown.
  await page.goto("/overview?range=forever");
  await expect(page.getByText("The range “forever” is not one of")).toBeVisible();
});
