/**
 * Security a browser can see: a session cookie saved before sign-out no longer reads anything;
 * every page carries the security headers, its Content-Security-Policy with a fresh nonce that the
 * page's own scripts carry (the page works: nothing is blocked); API answers carry the static ones.
 */
import { expect, test } from "./fixtures";
import { signIn } from "./fixtures";

test("a cookie saved before sign-out is refused afterwards, for pages and the dashboard API", async ({ page, browser, baseURL, seedUser }) => {
  const reviewer = await seedUser("reviewer");
  await signIn(page, reviewer);
  const saved = await page.context().storageState();
  expect((await page.request.get("/api/dashboard/runs")).status()).toBe(200);

  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await page.waitForURL(/\/signin/);

  const thief = await browser.newContext({ baseURL, storageState: saved });
  expect((await thief.request.get("/api/dashboard/runs")).status()).toBe(401);
  const stolen = await thief.newPage();
  await stolen.goto("/escalations");
  await expect(stolen).toHaveURL(/\/signin/);
  await thief.close();
});

test("sign out everywhere ends the sessions of other browsers too", async ({ page, browser, baseURL, seedUser }) => {
  const support = await seedUser("support");
  const other = await browser.newContext({ baseURL });
  const otherPage = await other.newPage();
  await signIn(otherPage, support);
  await signIn(page, support);
  // It asks first, saying what it does; Cancel changes nothing.
  await page.getByRole("button", { name: "Sign out everywhere" }).click();
  const ask = page.getByRole("dialog", { name: "Sign out everywhere?" });
  await expect(ask).toContainText("Every browser and device where you are signed in");
  await ask.getByRole("button", { name: "Cancel" }).click();
  await expect(ask).toBeHidden();
  expect((await otherPage.request.get("/api/dashboard/runs")).status()).toBe(200);
  await page.getByRole("button", { name: "Sign out everywhere" }).click();
  await ask.getByRole("button", { name: "Yes, sign out everywhere" }).click();
  await page.waitForURL(/\/signin/);
  expect((await otherPage.request.get("/api/dashboard/runs")).status()).toBe(401);
  await other.close();
});

test("every page carries the security headers and a nonce-based CSP its scripts satisfy", async ({ page, seedUser }) => {
  const blocked: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to (execute|load)/i.test(message.text())) blocked.push(message.text());
  });
  const signin = await page.goto("/signin");
  const nonces = new Set<string>();
  const check = (headers: Record<string, string>, path: string) => {
    expect(headers["x-frame-options"], path).toBe("DENY");
    expect(headers["x-content-type-options"], path).toBe("nosniff");
    expect(headers["referrer-policy"], path).toBe("strict-origin-when-cross-origin");
    expect(headers["permissions-policy"], path).toContain("camera=()");
    const csp = headers["content-security-policy"] ?? "";
    expect(csp, path).toContain("frame-ancestors 'none'");
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce, `${path}: a nonce in script-src`).toBeTruthy();
    expect(csp, path).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    nonces.add(nonce ?? "");
  };
  check(signin?.headers() ?? {}, "/signin");
  const admin = await seedUser("admin");
  await signIn(page, admin);
  for (const path of ["/", "/escalations", "/revokes", "/corrections", "/admin/tools", "/admin/users", "/admin/tokens"]) {
    const response = await page.goto(path);
    expect(response?.status(), path).toBe(200);
    check(response?.headers() ?? {}, path);
    // The page hydrated under the policy: Next's scripts carry the nonce.
    await expect(page.getByTestId("user-menu")).toBeVisible();
  }
  expect(nonces.size, "a fresh nonce per page").toBeGreaterThanOrEqual(7);
  expect(blocked).toEqual([]);
  // A client-side interaction works (scripts ran): the tool table's filter links navigate.
  await page.goto("/admin/tools");
  await page.getByRole("navigation", { name: "Filter tools" }).getByRole("link", { name: "Reviewed", exact: true }).click();
  await expect(page).toHaveURL(/status=REVIEWED/);

  const api = await page.request.get("/api/health");
  expect(api.headers()["x-content-type-options"]).toBe("nosniff");
  expect(api.headers()["x-frame-options"]).toBe("DENY");
});

test("a malformed %-escape or a deeply nested body answers 4xx with the error shape, never 500", async ({ page, baseURL }) => {
  const deep = "[".repeat(5000) + "]".repeat(5000);
  const responses = await Promise.all([
    page.request.get("/api/v1/runs/%"),
    page.request.get("/api/v1/runs/%E0%A4%A"),
    page.request.get("/runs/%"),
    page.request.post("/api/v1/runs", { data: `{"title":${deep}}`, headers: { "content-type": "application/json", authorization: "Bearer sgb_x" } }),
    page.request.post("/api/dashboard/pivots/x/approve", { data: `{"planHash":${deep}}`, headers: { "content-type": "application/json", origin: baseURL ?? "" } }),
  ]);
  for (const response of responses) {
    expect(response.status(), response.url()).toBeGreaterThanOrEqual(400);
    expect(response.status(), response.url()).toBeLessThan(500);
  }
});
