/**
 * Phones: at 390 px no dashboard page scrolls sideways (wide tables scroll inside their own box or
 * stack), the signed-in person's role and Sign out are on the first view of every page, and the
 * header takes at most 100 px of a phone's first view and one line at 1366 px.
 * Each page is visited by the role that uses it; screenshots at 390 px and 1280 px for a person to look at.
 */
import type { Browser, Page } from "@playwright/test";
import { expect, test, uniqueTag } from "./agent";
import { screenshotPath, signIn, type SeededUser } from "./fixtures";
import { seedScreens, type Screen } from "./screens";

const PHONE = { width: 390, height: 844 };

async function signedInPage(browser: Browser, baseURL: string | undefined, user: SeededUser): Promise<Page> {
  const context = await browser.newContext({ baseURL, viewport: PHONE });
  const page = await context.newPage();
  await signIn(page, user);
  return page;
}

/** Opens the screen; false when it did not render its content (an error page), which is reported, not measured. */
async function visit(page: Page, screen: Screen): Promise<boolean> {
  await page.goto(screen.path);
  // Inside the page itself: on a phone the header's links sit in a closed menu, and "Corrections" there is not the page.
  return page
    .getByRole("main")
    .getByText(screen.ready)
    .first()
    .waitFor({ state: "visible", timeout: 10_000 })
    .then(() => true, () => false);
}

test("no dashboard page scrolls sideways at 390 px, and the role and Sign out are on the first view", async ({ browser, baseURL, seedUser, db, agent, world }) => {
  test.setTimeout(180_000);
  const tag = uniqueTag();
  const { screens } = await seedScreens(db, agent, world, tag);
  const pages = new Map<string, Page>();
  const tooWide: string[] = [];
  const broken: string[] = [];
  for (const screen of screens) {
    let page = pages.get(screen.role);
    if (!page) {
      page = await signedInPage(browser, baseURL, await seedUser(screen.role));
      pages.set(screen.role, page);
    }
    await page.setViewportSize(PHONE);
    const rendered = await visit(page, screen);
    if (!rendered) broken.push(`${screen.name} (${screen.path}) did not show “${String(screen.ready)}”`);
    await page.screenshot({ path: screenshotPath(`phone-${screen.name}-390`), fullPage: true });
    const width = await page.evaluate(() => (document.scrollingElement ?? document.documentElement).scrollWidth);
    if (width > PHONE.width) tooWide.push(`${screen.name} (${screen.path}) is ${width} px wide`);

    // Each destination once in the header (two changes that both added a link left it twice).
    const hrefs = await page.getByRole("navigation", { name: "Main" }).getByRole("link").evaluateAll((links) => links.map((a) => a.getAttribute("href")));
    expect(hrefs.length, `${screen.name}: the header's links`).toBe(new Set(hrefs).size);

    // The role and Sign out are reachable without scrolling: inside the first 390 x 844.
    for (const locator of [page.getByTestId("user-role"), page.getByRole("button", { name: "Sign out", exact: true })]) {
      const box = await locator.boundingBox();
      expect(box, `${screen.name}: ${String(locator)} should be visible`).not.toBeNull();
      expect(box!.x + box!.width, `${screen.name}: ${String(locator)} should fit the phone's width`).toBeLessThanOrEqual(PHONE.width);
      expect(box!.y + box!.height, `${screen.name}: ${String(locator)} should be on the first view`).toBeLessThanOrEqual(PHONE.height);
    }

    // The header leaves the page the first view: at most 100 px on a phone, one line at 1366 px.
    const phoneHeader = await page.locator(".site-header").boundingBox();
    expect(phoneHeader!.height, `${screen.name}: the header's height at 390 px`).toBeLessThanOrEqual(100);
    await page.setViewportSize({ width: 1366, height: 900 });
    const tops = await page.locator(".site-header-inner > *, .site-header nav a, .site-header button").evaluateAll((els) =>
      els.filter((el) => el.getBoundingClientRect().height > 0).map((el) => Math.round(el.getBoundingClientRect().top + el.getBoundingClientRect().height / 2)),
    );
    expect(Math.max(...tops) - Math.min(...tops), `${screen.name}: the header is one line at 1366 px`).toBeLessThanOrEqual(6);

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: screenshotPath(`phone-${screen.name}-1280`), fullPage: true });
  }
  expect(tooWide, "pages that scroll sideways at 390 px").toEqual([]);
  expect(broken, "pages that did not render").toEqual([]);
  for (const page of pages.values()) await page.context().close();
});
