/**
 * The run page says whether anything is happening: after the pivot it names the agent's last
 * contact and the call it is expected to make next; the irreversible metric says what it counts;
 * and a person reads labelled values and sentences, never raw JSON or minor units (the raw form is
 * one click away).
 */
import type { Page } from "@playwright/test";
import { expect, test, uniqueTag } from "./agent";
import { screenshotPath, signIn } from "./fixtures";
import { seedScreens } from "./screens";

/** What a person sees of a section (closed <details> are not rendered, so their raw JSON is not in it). */
async function seen(page: Page, section: string): Promise<string> {
  return page.locator(`section[aria-labelledby="${section}"]`).innerText();
}

test("an approved run names the agent's last contact and its next call, in words without raw JSON", async ({ page, seedUser, db, agent, world }) => {
  const tag = uniqueTag();
  const { screens, committingRunId } = await seedScreens(db, agent, world, tag);
  const reviewer = await seedUser("reviewer");
  await signIn(page, reviewer, `/runs/${committingRunId}`);
  await page.goto(`/runs/${committingRunId}`);

  const progress = page.getByTestId("run-progress");
  await expect(progress).toContainText("The agent is expected to call send_email next (approved call 2 of 2), and then complete the run.");
  await expect(page.getByTestId("last-contact")).toContainText(`step confirmed, step #3) by ${agent.name}`);
  await expect(progress).toContainText("Sagaboard raises it as stuck after its pivot, and a person decides: let a worker commit the approved plan, or unwind.");
  await expect(page.getByTestId("irreversible-metric")).toContainText("irreversible calls made before anyone approved them");
  await expect(page.getByTestId("irreversible-metric")).not.toContainText("irreversible steps before pivot");

  for (const section of ["steps", "pivots", "audit"]) {
    const text = await seen(page, section);
    expect(text, `${section} shows raw JSON`).not.toMatch(/[{}]|":/);
    expect(text, `${section} shows an amount in minor units`).not.toMatch(/\b1800\b/);
  }
  await expect(page.locator('section[aria-labelledby="steps"]')).toContainText("€18.00");
  // The raw arguments are one click away.
  const raw = page.locator('section[aria-labelledby="steps"] details.raw-inline').first();
  await raw.locator("summary").click();
  await expect(raw.locator("code.json")).toContainText('"summary"');
  await page.screenshot({ path: screenshotPath("run-progress-1280"), fullPage: true });

  // A run holding an irreversible step made after approval: the metric says what it counts.
  const unwound = screens.find((s) => s.name === "run-unwound")!;
  await page.goto(unwound.path);
  await expect(page.getByTestId("irreversible-metric")).toContainText("This run holds 1 irreversible step, each made only after a person approved it.");
  await expect(page.getByTestId("run-progress")).toContainText("support must send or dismiss 1 correction draft");
  const escalationsText = await seen(page, "corrections");
  expect(escalationsText).not.toMatch(/[{}]|":/);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: screenshotPath("run-progress-unwound-390"), fullPage: true });
});
