/**
 * Single sign-on proven against a real identity provider: `oidc-provider` started here (its own
 * login form, PKCE required), and a Sagaboard instance configured for it (tests/e2e/app-instance.ts;
 * the suite's own server stays without one). The break-glass admin signs in with a password and maps
 * groups to roles on the users page; a member of a mapped group signs in through the provider and
 * lands as a reviewer; a SCIM deactivation ends that session; a person in no mapped group and a
 * callback with a forged state are refused with a page that says why, each in the audit log.
 */
import type { Page } from "@playwright/test";
import { createScimToken } from "@/lib/server/scim/scim-token";
import { setBreakGlass } from "@/lib/server/sso/set-break-glass";
import { SSO_SCOPE } from "@/lib/server/sso/sso-audit";
import { startTestIdp, type IdpPerson, type TestIdp } from "../support/oidc-idp";
import { freePort, startAppInstance, type AppInstance } from "./app-instance";
import { expect, shootBothWidths, test } from "./fixtures";

test.describe.configure({ mode: "serial" });

const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const reviewersGroup = `sagaboard-reviewers-${tag}`;
let idp: TestIdp;
let app: AppInstance;

test.beforeAll(async () => {
  const port = await freePort();
  idp = await startTestIdp({ redirectUri: `http://127.0.0.1:${port}/api/auth/callback/oidc` });
  app = await startAppInstance(port, { OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: idp.clientId, OIDC_CLIENT_SECRET: idp.clientSecret, OIDC_NAME: "Test IdP" });
});

test.afterAll(async () => {
  await app?.stop();
  await idp?.close();
});

/** Signs in through the provider's own login form, from Sagaboard's sign-in page. */
async function signInThroughProvider(page: Page, person: IdpPerson): Promise<void> {
  await page.goto(`${app.baseUrl}/signin`);
  await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
  await expect(page.getByRole("heading", { name: "Sign in to the test identity provider" })).toBeVisible();
  await page.getByLabel("Username").fill(person.username);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in at the provider" }).click();
}

function person(name: string, groups: string[]): IdpPerson {
  return { username: `${name}-${tag}`, password: `pw-${tag}-${name}`, email: `${name}-${tag}@sso.sagaboard.test`, name: `${name[0]!.toUpperCase()}${name.slice(1)} SSO`, groups };
}

test("the break-glass admin signs in with a password, maps a group to a role, and is flagged; other local accounts must use SSO", async ({ page, db, seedUser }) => {
  const admin = await seedUser("admin");
  await setBreakGlass(db, { email: admin.email, breakGlass: true, by: { type: "system", id: "e2e" } });
  const local = await seedUser("reviewer");

  await page.goto(`${app.baseUrl}/signin`);
  await page.getByLabel("Email").fill(local.email);
  await page.getByLabel("Password").fill(local.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByTestId("signin-error")).toContainText("signs in with single sign-on");

  await page.getByLabel("Email").fill(admin.email);
  await page.getByLabel("Password").fill(admin.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByTestId("user-menu")).toBeVisible();

  await page.goto(`${app.baseUrl}/admin/users`);
  await expect(page.getByTestId("break-glass-banner")).toContainText(`Break-glass account: ${admin.email}`);
  await expect(page.locator(`tr[data-email="${admin.email}"]`).getByTestId("break-glass-badge")).toBeVisible();
  const panel = page.getByTestId("sso-panel");
  await expect(panel).toContainText(`On: people sign in through ${idp.issuer}`);
  await panel.getByRole("button", { name: "Add a group" }).click();
  const rows = panel.getByRole("textbox", { name: /^Group \d+$/ });
  await rows.last().fill(reviewersGroup);
  await panel.getByRole("combobox", { name: /^Role of group \d+$/ }).last().selectOption("reviewer");
  await panel.getByRole("button", { name: "Save groups" }).click();
  await expect(page.getByTestId("sso-message")).toContainText("Saved");
  expect(await db.ssoGroupRole.findUnique({ where: { group: reviewersGroup } })).toMatchObject({ role: "reviewer", updatedBy: `user:${admin.email}` });
});

test("a member of a mapped group signs in through the provider (PKCE, state) and lands as a reviewer; a SCIM deactivation ends the session", async ({ page, db }) => {
  const rita = person("rita", [reviewersGroup, `everyone-${tag}`]);
  idp.addPerson(rita);
  await signInThroughProvider(page, rita);
  await expect(page.getByTestId("user-menu")).toBeVisible();
  expect(new URL(page.url()).origin).toBe(app.baseUrl);

  const account = await db.user.findUniqueOrThrow({ where: { email: rita.email } });
  expect(account).toMatchObject({ role: "reviewer", source: "sso", passwordHash: null, disabledAt: null });
  expect(await db.userSession.findFirstOrThrow({ where: { userId: account.id, endedAt: null } })).toMatchObject({ method: "sso" });
  // What Sagaboard sent the provider: a state and an S256 PKCE challenge, and the groups scope.
  const sent = idp.authorizations.at(-1)!;
  expect(sent.state).toMatch(/.{16,}/);
  expect(sent).toMatchObject({ codeChallengeMethod: "S256", codeChallenge: expect.stringMatching(/^[\w-]{43}$/) });
  expect(sent.scope?.split(" ")).toEqual(expect.arrayContaining(["openid", "email", "groups"]));

  await page.goto(`${app.baseUrl}/runs`);
  await expect(page.getByTestId("user-menu")).toBeVisible();

  // The provider deactivates Rita over SCIM; her next request is refused.
  const { secret } = await createScimToken(db, { name: `e2e-idp-${tag}`, by: { type: "system", id: "e2e" } });
  const started = Date.now();
  const patched = await fetch(`${app.baseUrl}/scim/v2/Users/${account.id}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/scim+json" },
    body: JSON.stringify({ schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "active", value: false }] }),
  });
  expect(patched.status).toBe(200);
  // The open page polls once a second: it says the account is disabled without a reload.
  await expect(page.locator(".live-marker.stale")).toContainText("disabled", { timeout: 60_000 });
  const endedWithinMs = Date.now() - started;
  console.log(`sso: a SCIM deactivation ended the open session in ${endedWithinMs} ms (must be under 60000)`);
  expect(endedWithinMs).toBeLessThan(60_000);
  await page.reload();
  await expect(page).toHaveURL(/\/signin/);
  expect(await db.userSession.count({ where: { userId: account.id, endedAt: null } })).toBe(0);
  const events = await db.auditEvent.findMany({ where: { scope: `user:${account.id}` }, orderBy: { seq: "asc" } });
  expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["user.created", "user.deprovisioned", "user.sessions_ended"]));
});

test("a person in no mapped group is refused with a page that says why, and the refusal is audited", async ({ page, db }) => {
  const carl = person("carl", [`contractors-${tag}`]);
  idp.addPerson(carl);
  await signInThroughProvider(page, carl);
  await expect(page).toHaveURL(/\/signin\/refused/);
  const refused = page.getByTestId("sso-refused");
  await expect(refused).toContainText(`signed you in as ${carl.email}, but none of your groups gives a Sagaboard role`);
  await expect(refused).toContainText(`contractors-${tag}`);
  await expect(refused.getByRole("link", { name: "Back to sign in" })).toBeVisible();
  await shootBothWidths(page, "sso-refused");
  expect(await db.user.findUnique({ where: { email: carl.email } })).toBeNull();
  const events = await db.auditEvent.findMany({ where: { scope: SSO_SCOPE, type: "sso.refused" } });
  expect(events.map((e) => e.data)).toContainEqual(expect.objectContaining({ reason: "no_mapped_group", email: carl.email }));
});

test("a callback whose state was tampered with is refused, signs nobody in, and is audited", async ({ page, db }) => {
  const dora = person("dora", [reviewersGroup]);
  idp.addPerson(dora);
  const before = await db.auditEvent.count({ where: { scope: SSO_SCOPE, type: "sso.callback_refused" } });
  // The provider's redirect back to Sagaboard arrives with another state than the one Sagaboard sent
  // (the code is real, and the browser still holds Sagaboard's state cookie).
  idp.rewriteCallback = (location) => {
    expect(location.searchParams.get("code")).toBeTruthy();
    location.searchParams.set("state", `forged-${tag}`);
    return location;
  };
  try {
    await signInThroughProvider(page, dora);
    await expect(page).toHaveURL(/\/signin\?.*error=OAuthCallback/);
  } finally {
    idp.rewriteCallback = null;
  }
  await expect(page.getByTestId("signin-error")).toContainText("failed Sagaboard's checks");
  expect(await db.user.findUnique({ where: { email: dora.email } })).toBeNull();
  await expect.poll(() => db.auditEvent.count({ where: { scope: SSO_SCOPE, type: "sso.callback_refused" } })).toBe(before + 1);
  const last = await db.auditEvent.findFirstOrThrow({ where: { scope: SSO_SCOPE, type: "sso.callback_refused" }, orderBy: { seq: "desc" } });
  expect(JSON.stringify(last.data)).toContain("state mismatch");
});

test("the users page shows roles that follow groups and the break-glass flag, at 1366 and 390 px", async ({ page, db, seedUser }) => {
  const admin = await seedUser("admin");
  // There is one break-glass account: it moves to this admin, who then signs in with a password while SSO is on.
  const glass = await db.user.findFirstOrThrow({ where: { breakGlass: true } });
  await setBreakGlass(db, { email: glass.email, breakGlass: false, by: { type: "system", id: "e2e" } });
  await setBreakGlass(db, { email: admin.email, breakGlass: true, by: { type: "system", id: "e2e" } });
  await page.goto(`${app.baseUrl}/signin`);
  await page.getByLabel("Email").fill(admin.email);
  await page.getByLabel("Password").fill(admin.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByTestId("user-menu")).toBeVisible();
  await page.goto(`${app.baseUrl}/admin/users`);
  const rita = page.locator(`tr[data-email="rita-${tag}@sso.sagaboard.test"]`);
  // The list is by email, 100 a page: the other specs' accounts (e2e-...) may push rita past the first.
  const rows = page.locator("tr[data-email]");
  await expect(rows.first()).toBeVisible();
  for (let pages = 0; pages < 20 && (await rita.count()) === 0; pages++) {
    const next = page.getByRole("link", { name: "Next page →" });
    if ((await next.count()) === 0) break;
    const firstBefore = await rows.first().getAttribute("data-email");
    await next.click();
    await expect(rows.first()).not.toHaveAttribute("data-email", firstBefore ?? "");
  }
  await expect(rita.getByTestId("role-from-groups")).toContainText(`from groups: everyone-${tag}, ${reviewersGroup}`);
  await expect(rita).toContainText("deprovisioned by the identity provider");
  await shootBothWidths(page, "admin-users-sso");
});
