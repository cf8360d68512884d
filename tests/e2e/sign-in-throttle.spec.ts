/**
 * Sign-in throttling in a real browser, against the production build with the default limits (5 wrong
 * passwords per account and client per 15 minutes, then a 1 minute block for that client): the form
 * explains the wait, the right password is refused from that browser while the block lasts (a made-up
 * X-Forwarded-For changes nothing), the HTTP answer is 429 with Retry-After, and the lockout is on the
 * account's audit chain. The test seeds its own account, so no other test is blocked.
 */
import { expect, screenshotPath, test } from "./fixtures";

test("five wrong passwords pause sign-in for that account; the form says how long", async ({ page, seedUser, db }) => {
  const user = await seedUser("reviewer");
  const attempt = async (password: string) => {
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
  };
  await page.goto("/signin");
  for (let i = 1; i <= 5; i++) {
    await attempt(`${user.password}-wrong-${i}`);
    await expect(page.getByTestId("signin-error")).toHaveText(/do not match an account/);
    // The next attempt must not reuse this error line: wait for the form to be ready again.
    await expect(page.getByRole("button", { name: "Sign in", exact: true })).toBeEnabled();
  }
  await attempt(`${user.password}-wrong-6`);
  await expect(page.getByTestId("signin-error")).toHaveText("Too many attempts; try again in 1 minute.");
  // Even the right password waits for the block to end.
  await attempt(user.password);
  await expect(page.getByTestId("signin-error")).toHaveText("Too many attempts; try again in 1 minute.");
  await expect(page).toHaveURL((url) => url.pathname === "/signin");
  await page.screenshot({ path: screenshotPath("signin-throttled") });

  // Over HTTP, from the same browser (the block is this account from this client): 429, Retry-After,
  // and our error code beside the url next-auth's client reads, on NEXTAUTH_URL's origin.
  const answer = await page.evaluate(
    async ({ email, password }) => {
      const { csrfToken } = (await (await fetch("/api/auth/csrf")).json()) as { csrfToken: string };
      const response = await fetch("/api/auth/callback/credentials", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": "198.51.100.77", "x-forwarded-proto": "https" },
        body: new URLSearchParams({ email, password, csrfToken, callbackUrl: "/", json: "true" }).toString(),
      });
      return { status: response.status, retryAfter: response.headers.get("retry-after"), body: (await response.json()) as { url: string; error: { code: string } } };
    },
    { email: user.email, password: user.password },
  );
  // A made-up X-Forwarded-For does not move the browser to another bucket.
  expect(answer.status).toBe(429);
  const retryAfter = Number(answer.retryAfter);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(answer.body.error.code).toBe("RATE_LIMITED");
  expect(new URL(answer.body.url).searchParams.get("error")).toMatch(/^RateLimited:\d+$/);
  expect(new URL(answer.body.url).origin).toBe(new URL(page.url()).origin);

  // The lockout is on the account's chain, without the email.
  await expect
    .poll(async () => (await db.auditEvent.findMany({ where: { scope: `user:${user.id}`, type: "user.sign_in_throttled" } })).map((e) => e.data))
    .toEqual([{ failures: 5, windowSeconds: 900, blockSeconds: 60, lockout: 1 }]);
});
