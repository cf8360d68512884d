/**
 * The audit log as a person checking it uses it: a viewer filters /audit by a run an agent just made,
 * reads its events in words (no raw JSON unless asked), downloads the CSV and JSON lines exports and
 * they hold exactly the run's rows; saves the chain heads and checks them; and when one stored event
 * is tampered with in the database, the page names that link of that chain. The row is then put back
 * exactly as it was (this database is shared by the whole run) and the log verifies again.
 */
import { readFileSync } from "node:fs";
import type { Page } from "@playwright/test";
import { customerFor, expect, test, uniqueTag } from "./agent";
import { screenshotPath, signIn } from "./fixtures";
import { parseCsv } from "../support/csv";

/** Screenshots at 1280 px and 390 px; at 390 nothing in the page's content may be wider than its box. */
async function screenshotBothWidths(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: screenshotPath(name), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const layout = await page.evaluate(() => {
    const main = document.querySelector("main");
    const offenders: string[] = [];
    for (const el of main ? Array.from(main.querySelectorAll<HTMLElement>("*")) : []) {
      if (el.closest(".table-wrap") || el.clientWidth === 0 || getComputedStyle(el).overflowX !== "visible") continue;
      if (el.scrollWidth > el.clientWidth + 1) offenders.push(`<${el.tagName.toLowerCase()} class="${el.className}"> ${el.scrollWidth} > ${el.clientWidth}`);
    }
    return { page: document.documentElement.scrollWidth, main: main?.scrollWidth ?? 0, width: window.innerWidth, offenders };
  });
  expect(layout.offenders, "content wider than its box at 390 px").toEqual([]);
  expect(layout.main, "the audit page scrolls sideways at 390 px").toBeLessThanOrEqual(layout.width);
  await page.screenshot({ path: screenshotPath(`${name}-390`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function download(page: Page, link: ReturnType<Page["getByRole"]>): Promise<{ name: string; text: string }> {
  const [file] = await Promise.all([page.waitForEvent("download"), link.click()]);
  return { name: file.suggestedFilename(), text: readFileSync(await file.path(), "utf8") };
}

test("a viewer reads a run's audit events in words, exports them, and sees a tampered event named", async ({ page, seedUser, db, agent }) => {
  const tag = uniqueTag();
  const customer = customerFor(tag);
  const title = `Refund order 2001 for ${customer}`;
  const run = await agent.engine.startRun({ title, agent: agent.name, onBehalfOf: customer });
  await run.call("create_email_draft", { to: customer, subject: `Your refund, "order 2001" (${tag})`, body: "We refunded order 2001,\nas promised." });
  await run.call("create_ticket_draft", { summary: `Refund order 2001 (${tag})`, orderId: "2001" });
  const scope = `run:${run.runId}`;
  const rows = await db.auditEvent.findMany({ where: { scope }, orderBy: { id: "desc" } });
  expect(rows.map((r) => r.type)).toEqual(["step.confirmed", "step.intended", "step.confirmed", "step.intended", "run.started"]);

  const viewer = await seedUser("viewer");
  await signIn(page, viewer, "/audit");
  await expect(page.getByRole("heading", { name: "Audit log" })).toBeVisible();

  // Filter by the run, through the form.
  await page.getByLabel("Run", { exact: true }).fill(run.runId);
  await page.getByRole("button", { name: "Show events" }).click();
  await expect(page).toHaveURL(new RegExp(`/audit\\?run=${run.runId}$`));
  const table = page.locator("table");
  await expect(table.locator("tbody tr")).toHaveCount(rows.length);
  await expect(page.getByTestId("chain-status")).toContainText("This chain is intact");
  await expect(page.getByTestId("chain-status")).toContainText("All 5 links verify");

  // In words: who, what, and the data as a sentence; no JSON unless the raw event is opened.
  const started = table.locator("tbody tr").last();
  await expect(started).toContainText("Run started");
  await expect(started).toContainText(`Started “${title}”.`);
  await expect(started).toContainText("agent");
  await expect(started.getByRole("link", { name: agent.name })).toBeVisible();
  await expect(table.locator("tbody tr").nth(3)).toContainText("Step #0 will call create_email_draft (staging phase).");
  // Events written through the call commands name the step by its id (the row links it), not its index.
  await expect(table.locator("tbody tr").nth(2)).toContainText(/(Step #0|The step) happened in the real system, which calls it/);
  await expect(table.getByRole("link", { name: run.runId }).first()).toHaveAttribute("href", `/runs/${run.runId}`);
  expect(await table.innerText()).not.toMatch(/[{}]|"stepIdx"/);
  await started.getByText("Raw event").click();
  await expect(started.locator("pre")).toContainText(`"hash": "${rows.at(-1)!.hash}"`);
  await started.getByText("Raw event").click();
  await screenshotBothWidths(page, "audit-run");

  // The exports of this filter hold exactly the run's rows, newest first.
  const csv = await download(page, page.getByRole("link", { name: "CSV", exact: true }));
  expect(csv.name).toMatch(new RegExp(`^sagaboard-audit-${run.runId}-\\d{8}T\\d{4}Z\\.csv$`));
  const [header, ...records] = parseCsv(csv.text);
  expect(header).toEqual(["id", "at", "scope", "seq", "runId", "stepId", "type", "actor", "data", "prevHash", "hash"]);
  expect(records.map((r) => [Number(r[0]), r[1], r[2], Number(r[3]), r[6], r[7], JSON.parse(r[8]!), r[10]])).toEqual(
    rows.map((r) => [r.id, r.at.toISOString(), r.scope, r.seq, r.type, r.actor, r.data, r.hash]),
  );
  const jsonl = await download(page, page.getByRole("link", { name: "JSON lines" }));
  expect(jsonl.name).toMatch(/\.jsonl$/);
  const lines = jsonl.text.trimEnd().split("\n").map((l) => JSON.parse(l) as { id: number; hash: string; data: unknown; actor: string });
  expect(lines.map((l) => [l.id, l.actor, l.data, l.hash])).toEqual(rows.map((r) => [r.id, r.actor, r.data, r.hash]));

  // Save the chain heads; checked now, they match.
  const heads = await download(page, page.getByRole("link", { name: "Download chain heads" }));
  expect(heads.name).toMatch(/^sagaboard-chain-heads-\d{8}T\d{4}Z\.json$/);
  const headsFile = JSON.parse(heads.text) as { heads: { scope: string; seq: number }[] };
  expect(headsFile.heads).toEqual(expect.arrayContaining([expect.objectContaining({ scope, seq: 5 })]));
  await page.getByTestId("heads-file").setInputFiles({ name: heads.name, mimeType: "application/json", buffer: Buffer.from(heads.text) });
  await expect(page.getByTestId("heads-check")).toContainText("still match");

  // Tamper with one stored event: its actor, by raw SQL, as someone with database access would.
  const target = rows.find((r) => r.seq === 2)!;
  const original = (await db.$queryRaw<{ actor: string }[]>`SELECT "actor" FROM "AuditEvent" WHERE "id" = ${target.id}`)[0]!.actor;
  await db.$executeRaw`UPDATE "AuditEvent" SET "actor" = ${"user:mallory@example.com"} WHERE "id" = ${target.id}`;
  try {
    await page.reload();
    const status = page.getByTestId("chain-status");
    await expect(status).toContainText("This chain is broken");
    await expect(status).toContainText(`Link 2 of run ${run.runId} (event #${target.id}`);
    await expect(status).toContainText("Its content was changed after it was written");
    const row = page.locator(`tr[data-event-id="${target.id}"]`);
    await expect(row).toContainText("Broken link: its content was changed");
    await expect(row).toContainText("mallory@example.com");
    await page.getByRole("button", { name: "Verify every chain" }).click();
    const verification = page.getByTestId("verification");
    await expect(verification).toContainText(/chains? (is|are) broken/);
    await expect(verification).toContainText(`Link 2 of run ${run.runId} (event #${target.id}`);
    await screenshotBothWidths(page, "audit-broken");
  } finally {
    await db.$executeRaw`UPDATE "AuditEvent" SET "actor" = ${original} WHERE "id" = ${target.id}`;
  }
  const restored = await db.auditEvent.findUniqueOrThrow({ where: { id: target.id } });
  expect(restored).toEqual(target);
  await page.reload();
  await expect(page.getByTestId("chain-status")).toContainText("This chain is intact");
  await page.getByRole("button", { name: "Verify every chain" }).click();
  await expect(page.getByTestId("verification")).toContainText(/^All [\d,]+ chains? verified/);

  // The whole log, unfiltered, reads in words too.
  await page.goto("/audit");
  await expect(page.locator("table tbody tr").first()).toBeVisible();
  await screenshotBothWidths(page, "audit-log");
});
