/**
 * Accessibility: every dashboard screen, read by the role that uses it, has no serious or critical
 * violation by axe (WCAG 2.1 A and AA rules), at desktop width and on a phone; and the main actions
 * can be reached with the keyboard alone (a skip link first, then Tab to the action, Enter to use it).
 */
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, test, uniqueTag } from "./agent";
import { signIn, type SeededUser } from "./fixtures";
import { seedScreens, type SeededScreens } from "./screens";
import { rawWordsOn } from "./words";

/** Seeded once for the whole file (the suite runs in one worker, one test after another). */
let seeded: SeededScreens | null = null;
const users = new Map<string, SeededUser>();

async function seeding(fixtures: Parameters<typeof seedScreens>): Promise<SeededScreens> {
  seeded ??= await seedScreens(...fixtures);
  return seeded;
}

/** Serious and critical violations, each as "rule: what (n places: selectors)". */
async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help}; ${v.nodes.length} place(s): ${v.nodes.slice(0, 4).map((n) => n.target.join(" ")).join(" | ")}`);
}

const SCREEN_NAMES = ["runs", "run-committing", "run-unwound", "pivot", "escalations", "escalation", "corrections", "correction", "revokes", "audit", "tools", "tool", "users", "tokens"];

for (const name of SCREEN_NAMES) {
  test(`axe finds no serious or critical violation on ${name}, at 1280 px and 390 px, and it reads in words`, async ({ page, seedUser, db, agent, world }) => {
    const { screens } = await seeding([db, agent, world, uniqueTag()]);
    const screen = screens.find((s) => s.name === name);
    if (!screen) throw new Error(`no seeded screen named ${name}`);
    let user = users.get(screen.role);
    if (!user) users.set(screen.role, (user = await seedUser(screen.role)));
    await signIn(page, user);
    const found: string[] = [];
    for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
      await page.setViewportSize(viewport);
      await page.goto(screen.path);
      // Inside the page itself: on a phone the header's links sit in a closed menu ("Corrections" there is not the page).
      await expect(page.getByRole("main").getByText(screen.ready).first()).toBeVisible();
      for (const v of await seriousViolations(page)) found.push(`${viewport.width} px: ${v}`);
    }
    expect(found, `serious or critical axe violations on ${screen.path}`).toEqual([]);
    // What a person reads is words: no status codes or machine times outside code and raw JSON.
    const toolNames = [...(await db.toolPolicy.findMany({ select: { name: true } })), ...(await db.compensator.findMany({ select: { name: true } }))].map((t) => t.name);
    expect(await rawWordsOn(page, toolNames), `raw vocabulary or ISO times on ${screen.path}`).toEqual([]);
  });
}

test("a reviewer reaches a waiting pivot's Approve button from the runs list with the keyboard alone", async ({ page, seedUser, db, agent, world }) => {
  const { screens } = await seeding([db, agent, world, uniqueTag()]);
  const runs = screens.find((s) => s.name === "runs")!;
  const reviewer = await seedUser("reviewer");
  await signIn(page, reviewer);
  await page.goto(runs.path);
  await expect(page.getByText(runs.ready).first()).toBeVisible();

  // The first Tab lands on the skip link, which moves focus past the header to the page's content.
  await page.locator("body").focus();
  await page.keyboard.press("Tab");
  await expect(page.locator(":focus")).toHaveText("Skip to content");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/#content$/);

  /** Presses Tab until `name` has the focus (at most `max` times); how many presses it took. */
  async function tabTo(name: RegExp, max = 80): Promise<number> {
    for (let i = 1; i <= max; i++) {
      await page.keyboard.press("Tab");
      const focused = await page.evaluate(() => (document.activeElement as HTMLElement | null)?.innerText?.trim() ?? "");
      if (name.test(focused)) return i;
    }
    throw new Error(`${String(name)} was not reached with ${max} presses of Tab`);
  }

  expect(await tabTo(/^Pivot to decide/)).toBeGreaterThan(0);
  await page.keyboard.press("Enter");
  await page.waitForURL(/\/pivots\//);
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  expect(await tabTo(/^Approve/)).toBeGreaterThan(0);
  await expect(page.locator(":focus")).toBeEnabled();

  // The user menu is reachable too: Sign out after the header's links.
  await page.goto("/");
  await page.locator("body").focus();
  expect(await tabTo(/^Sign out$/, 20)).toBeGreaterThan(0);
});
