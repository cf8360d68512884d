/**
 * A missing run, pivot, escalation, correction or tool (a stale link, a mistyped id) gets a page that
 * says what is missing and links back to its list, inside the dashboard's header, answered 404.
 */
import { expect, signIn, test } from "./fixtures";

const MISSING = [
  { path: "/runs/run_doesnotexist", what: /run/i, back: /runs/i, role: "reviewer" },
  { path: "/pivots/pvt_doesnotexist", what: /pivot/i, back: /runs/i, role: "reviewer" },
  { path: "/escalations/esc_doesnotexist", what: /escalation/i, back: /escalation/i, role: "reviewer" },
  { path: "/corrections/cor_doesnotexist", what: /correction/i, back: /corrections/i, role: "support" },
  { path: "/admin/tools/nobody.no_such_tool", what: /tool/i, back: /tool table/i, role: "reviewer" },
] as const;

test("a missing run, pivot, escalation, correction or tool says so, answers 404, and links back to its list", async ({ page, seedUser }) => {
  const reviewer = await seedUser("reviewer");
  const support = await seedUser("support");
  for (const role of ["reviewer", "support"] as const) {
    await page.context().clearCookies();
    await signIn(page, role === "reviewer" ? reviewer : support);
    for (const missing of MISSING.filter((m) => m.role === role)) {
      await page.goto(missing.path);
      // Next's bare page says "This page could not be found." with no way back.
      await expect(page.getByText("This page could not be found.")).toHaveCount(0);
      const what = page.getByRole("heading", { level: 1 });
      await expect(what, missing.path).toContainText(missing.what);
      await expect(what, missing.path).toContainText(/not|no longer/i);
      expect((await page.request.get(missing.path)).status(), `${missing.path} answers 404`).toBe(404);
      const back = page.getByRole("main").getByRole("link", { name: missing.back }).first();
      await expect(back, `${missing.path} should link back`).toBeVisible();
      await expect(page.getByTestId("user-menu")).toBeVisible();
    }
  }
});
