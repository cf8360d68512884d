/**
 * Sign-in and roles in a real browser: each role signs in and sees its role; a wrong password is
 * explained; a disabled account and a changed role take effect on the very next request (the role is
 * read from the database, not from the cookie); signed-out visits go to /signin and come back; the
 * session cookie carries only the user id; and the sign-in page is screenshotted for a person to look at.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { decode } from "next-auth/jwt";
import { ROLES } from "@/lib/server/auth/roles";
import { disableUser } from "@/lib/server/users/set-user-enabled";
import { setUserRole } from "@/lib/server/users/set-user-role";
import { expect, screenshotPath, signIn, test } from "./fixtures";

const SESSION_COOKIE = "next-auth.session-token";
const admin = { type: "system" as const, id: "e2e" };

test.describe("signing in", () => {
  for (const role of ROLES) {
    test(`${role === "admin" ? "an" : "a"} ${role} signs in and sees their name and role`, async ({ page, seedUser, db }) => {
      const user = await seedUser(role);
      await signIn(page, user);
      // Each role lands on what waits for it: support staff on the correction desk, others on the runs.
      await expect(page).toHaveURL((url) => url.pathname === (role === "support" ? "/corrections" : "/"));
      const menu = page.getByTestId("user-menu");
      await expect(menu).toContainText(user.name);
      await expect(page.getByTestId("user-role")).toHaveText(role);
      // What the page shows is what the database holds.
      expect((await db.user.findUniqueOrThrow({ where: { id: user.id } })).role).toBe(role);
    });
  }

  test("a wrong password is explained and no session is created", async ({ page, seedUser, context }) => {
    const user = await seedUser("reviewer");
    await page.goto("/signin");
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(`${user.password}-wrong`);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page.getByTestId("signin-error")).toHaveText(/do not match an account/);
    await expect(page).toHaveURL((url) => url.pathname === "/signin");
    expect((await context.cookies()).some((c) => c.name === SESSION_COOKIE)).toBe(false);
    await page.screenshot({ path: screenshotPath("signin-wrong-password") });
  });

  test("the session cookie carries only the user id and its session's id", async ({ page, seedUser, context, db }) => {
    const user = await seedUser("viewer");
    await signIn(page, user);
    const cookie = (await context.cookies()).find((c) => c.name === SESSION_COOKIE);
    expect(cookie?.httpOnly).toBe(true);
    // On SQLite the server generated its secret next to the e2e database (no NEXTAUTH_SECRET is set);
    // on PostgreSQL playwright.config.ts gives both instances one NEXTAUTH_SECRET.
    const dbFile = (process.env.DATABASE_URL ?? "").replace(/^file:/, "");
    const secret = process.env.NEXTAUTH_SECRET ?? readFileSync(path.join(path.dirname(dbFile), ".nextauth-secret"), "utf8").trim();
    const token = await decode({ token: cookie?.value, secret });
    expect(token?.sub).toBe(user.id);
    expect(Object.keys(token ?? {}).sort()).toEqual(["exp", "iat", "jti", "sid", "sub"]);
    // The session it names is open, and belongs to this person.
    expect(await db.userSession.findUniqueOrThrow({ where: { id: String(token?.sid) } })).toMatchObject({ userId: user.id, endedAt: null });
  });
});

test.describe("the database decides on every request", () => {
  test("a disabled account is refused on its next request and cannot sign in again", async ({ page, seedUser, db }) => {
    const user = await seedUser("reviewer");
    await signIn(page, user);
    await disableUser(db, { email: user.email, by: admin });
    expect((await db.user.findUniqueOrThrow({ where: { id: user.id } })).disabledAt).not.toBeNull();

    await page.reload();
    await expect(page).toHaveURL((url) => url.pathname === "/signin" && url.searchParams.get("error") === "AccountDisabled");
    await expect(page.getByTestId("signin-error")).toHaveText(/This account is disabled/);
    await expect(page.getByTestId("user-menu")).toHaveCount(0);

    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page.getByTestId("signin-error")).toHaveText(/This account is disabled/);
    await expect(page).toHaveURL((url) => url.pathname === "/signin");
  });

  test("a role change shows on the next request, without signing in again", async ({ page, seedUser, db }) => {
    const user = await seedUser("viewer");
    await signIn(page, user);
    await expect(page.getByTestId("user-role")).toHaveText("viewer");
    await setUserRole(db, { email: user.email, role: "reviewer", by: admin });
    await page.reload();
    await expect(page.getByTestId("user-role")).toHaveText("reviewer");
  });
});

test.describe("not allowed", () => {
  test("an account whose role Sagaboard does not know sees the 403 message instead of the page", async ({ page, seedUser, db }) => {
    const user = await seedUser("viewer");
    await signIn(page, user);
    // A hand-edited row (the lib functions only ever store known roles): it must not grant anything.
    await db.user.update({ where: { id: user.id }, data: { role: "auditor" } });
    await page.reload();
    await expect(page.getByRole("heading", { name: "You cannot open this page" })).toBeVisible();
    await expect(page.getByText('Your account has the role "auditor"')).toBeVisible();
    await expect(page.getByTestId("user-menu")).toHaveCount(0);
    await page.screenshot({ path: screenshotPath("forbidden"), fullPage: true });
  });
});

test.describe("a page the role may not open", () => {
  test("answers a real 403, with the reason and who could", async ({ page, seedUser }) => {
    const viewer = await seedUser("viewer");
    await signIn(page, viewer);
    for (const path of ["/admin/users", "/admin/tokens", "/admin/webhooks"]) {
      const response = await page.goto(path);
      expect(response?.status(), `${path} answers 403`).toBe(403);
      await expect(page.getByRole("heading", { name: "You cannot open this page" })).toBeVisible();
      await expect(page.getByText("Your role (viewer) cannot")).toBeVisible();
    }
    for (const [width, height, name] of [[1366, 800, "forbidden-403-desktop"], [390, 844, "forbidden-403-phone"]] as const) {
      await page.setViewportSize({ width, height });
      await page.screenshot({ path: screenshotPath(name), fullPage: true });
    }
  });
});

test.describe("signed out", () => {
  test("a signed-out visit goes to /signin and, after signing in, back to the page asked for", async ({ page, seedUser }) => {
    await page.goto("/?status=FAILED");
    await expect(page).toHaveURL((url) => url.pathname === "/signin" && url.searchParams.get("callbackUrl") === "/?status=FAILED");
    await expect(page.getByRole("heading", { name: "Sign in to Sagaboard" })).toBeVisible();
    await expect(page.getByTestId("user-menu")).toHaveCount(0);
    await page.screenshot({ path: screenshotPath("signin"), fullPage: true });

    const user = await seedUser("support");
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page.getByTestId("user-menu")).toBeVisible();
    await expect(page).toHaveURL((url) => url.pathname === "/" && url.searchParams.get("status") === "FAILED");
    await page.screenshot({ path: screenshotPath("signed-in-header"), clip: { x: 0, y: 0, width: 1280, height: 120 } });
  });

  test("a callbackUrl to another site is ignored", async ({ page, seedUser, baseURL }) => {
    const user = await seedUser("viewer");
    await page.goto(`/signin?callbackUrl=${encodeURIComponent("https://evil.example/phish")}`);
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page.getByTestId("user-menu")).toBeVisible();
    await expect(page).toHaveURL(`${baseURL}/`);
  });

  test("signing out ends the session: the next visit goes to /signin", async ({ page, seedUser, context }) => {
    const user = await seedUser("admin");
    await signIn(page, user);
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await expect(page).toHaveURL((url) => url.pathname === "/signin");
    expect((await context.cookies()).some((c) => c.name === SESSION_COOKIE)).toBe(false);
    await page.goto("/");
    await expect(page).toHaveURL((url) => url.pathname === "/signin");
  });
});
