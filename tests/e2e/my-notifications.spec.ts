/**
 * My notifications in the browser (issue 48), at 1366 and 390 px (test-results/screenshots/me-*.png):
 * a reviewer reaches the page from their name in the header (from the menu on a phone), turns pivots
 * off and sees it saved and kept; support sees the pivot topics greyed with the reason; a viewer
 * reads why nothing reaches them.
 */
import { expect, shootBothWidths, signIn, test } from "./fixtures";

test.describe("my notifications", () => {
  test("a reviewer opens the page from their name, turns pivots off, and the choice is saved and kept", async ({ page, seedUser, db }) => {
    const reviewer = await seedUser("reviewer");
    await signIn(page, reviewer, "/runs");
    await page.getByTestId("user-menu").getByRole("link", { name: reviewer.name }).click();
    await expect(page).toHaveURL(/\/me\/notifications$/);
    await expect(page.getByRole("heading", { name: "My notifications" })).toBeVisible();
    const pivots = page.getByTestId("topic-pivot_waiting").getByRole("checkbox");
    await expect(pivots).toBeChecked();
    await expect(page.getByTestId("topic-pivot_waiting")).toContainText("Your role's default.");
    await expect(page.getByTestId("topic-correction_waiting").getByRole("checkbox")).toBeDisabled();
    await expect(page.getByTestId("topic-correction_waiting")).toContainText("Not for you: your role (reviewer) cannot handle correction messages.");
    await pivots.uncheck();
    await page.getByRole("button", { name: "Save my choices" }).click();
    await expect(page.getByTestId("my-notifications-message")).toHaveText("Saved: the next notification follows these choices.");
    await expect(page.getByTestId("topic-pivot_waiting").getByRole("checkbox")).not.toBeChecked();
    await expect(page.getByTestId("topic-pivot_waiting")).toContainText("your role's default is on");
    await expect(page.getByTestId("topic-escalation_raised").getByRole("checkbox")).toBeChecked();
    const row = await db.notificationPreference.findMany({ where: { user: { email: reviewer.email } } });
    expect(row.map((r) => [r.topic, r.email])).toEqual([["pivot_waiting", false]]);
    await shootBothWidths(page, "me-notifications-reviewer");

    // On a phone the name gives way: the menu holds the page's link.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto("/runs");
    await expect(page.getByTestId("user-menu").getByRole("link", { name: reviewer.name })).toBeHidden();
    await page.getByTestId("nav-menu").getByText("Menu").click();
    await page.getByTestId("nav-menu").getByRole("link", { name: "My notifications" }).click();
    await expect(page).toHaveURL(/\/me\/notifications$/);
    await expect(page.getByTestId("topic-pivot_waiting").getByRole("checkbox")).not.toBeChecked();
  });

  test("support sees what their role cannot ask for and why; a viewer reads why nothing reaches them", async ({ page, seedUser }) => {
    const support = await seedUser("support");
    await signIn(page, support, "/me/notifications");
    await expect(page.getByTestId("topic-correction_waiting").getByRole("checkbox")).toBeChecked();
    await expect(page.getByTestId("topic-pivot_waiting").getByRole("checkbox")).toBeDisabled();
    await expect(page.getByTestId("topic-pivot_waiting")).toContainText("Not for you: your role (support) cannot decide pivots.");
    await shootBothWidths(page, "me-notifications-support");

    const viewer = await seedUser("viewer");
    await page.context().clearCookies();
    await signIn(page, viewer, "/me/notifications");
    await expect(page.getByTestId("my-notifications-empty")).toContainText("Your role (viewer) reads the dashboard and acts on nothing");
    await expect(page.getByRole("button", { name: "Save my choices" })).toHaveCount(0);
    await shootBothWidths(page, "me-notifications-viewer");
  });
});
