/**
 * Issue 28, item 4: a tool's durations in the units people use. A one-minute window reads "1
 * minutes" (not 0.02 hours), the form says "No changes" until something changes, saving another
 * field leaves the window at exactly 60 s, and a window typed in minutes is stored to the second.
 */
import { expect, screenshotPath, signIn, test } from "./fixtures";
import { uniqueTag } from "./agent";

test("durations read and save in minutes, hours and days, with no rounding and no phantom change", async ({ page, seedUser, db }) => {
  const tag = uniqueTag();
  const name = `e2e_notify_${tag}`;
  await db.toolPolicy.create({
    data: {
      name,
      toolClass: "IRREVERSIBLE",
      lookupAvailable: true,
      owner: "support-leads",
      correctionSubject: "Correction",
      correctionBody: "Please disregard our last message.",
      revocationWindowSec: 60,
      keyRetentionSec: 86_400,
      status: "REVIEWED",
      updatedBy: "system:e2e",
    },
  });
  const admin = await seedUser("admin", { name: `Ada Admin ${tag}` });
  await page.setViewportSize({ width: 1366, height: 900 });
  await signIn(page, admin, `/admin/tools/${name}`);
  const form = page.locator('form[aria-labelledby="edit"]');
  const window = form.getByLabel("Revocation window", { exact: true });
  await expect(window).toHaveValue("1");
  await expect(form.getByLabel("Revocation window: unit")).toHaveValue("minutes");
  await expect(form.getByLabel("Provider key retention", { exact: true })).toHaveValue("1");
  await expect(form.getByLabel("Provider key retention: unit")).toHaveValue("days");
  await expect(form.getByRole("button", { name: "No changes" })).toBeDisabled();
  await page.screenshot({ path: screenshotPath("durations-form-1366"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: screenshotPath("durations-form-390"), fullPage: true });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1366, height: 900 });

  // Another field saved: the window stays exactly 60 s, and the history names only that field.
  await form.getByLabel("Owner (team)").fill("support-leads-eu");
  await form.getByRole("button", { name: "Save 1 change" }).click();
  await expect.poll(async () => (await db.toolPolicy.findUniqueOrThrow({ where: { name } })).owner).toBe("support-leads-eu");
  let row = await db.toolPolicy.findUniqueOrThrow({ where: { name } });
  expect([row.revocationWindowSec, row.keyRetentionSec, row.policyVersion]).toEqual([60, 86_400, 2]);
  const version = await db.toolPolicyVersion.findFirstOrThrow({ where: { toolName: name, version: 2 } });
  expect(Object.keys(version.diff as object)).toEqual(["owner"]);
  await expect(form.getByRole("button", { name: "No changes" })).toBeVisible();

  // A window typed in minutes is stored to the second and read back in minutes.
  await window.fill("15");
  await form.getByRole("button", { name: "Save 1 change" }).click();
  await expect.poll(async () => (await db.toolPolicy.findUniqueOrThrow({ where: { name } })).revocationWindowSec).toBe(900);
  row = await db.toolPolicy.findUniqueOrThrow({ where: { name } });
  expect(row.policyVersion).toBe(3);
  await expect(window).toHaveValue("15");
  await expect(form.getByLabel("Revocation window: unit")).toHaveValue("minutes");
  await expect(page.getByText("15m").first()).toBeVisible();
  await expect(form.getByRole("button", { name: "No changes" })).toBeVisible();
});
