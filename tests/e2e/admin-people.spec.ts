/**
 * The admin desk for people and agent tokens in a real browser:
 * - an admin creates an account, reads its initial password once (and copies it), and that person
 *   signs in with it in another browser; a role change and a disable in the page apply on the
 *   person's next request, and every change is a row and an audit event;
 * - an admin creates a token scoped to a few support tools, copies its secret from the page, an
 *   agent records a staged step with it over the API (the Step row and the hosted ledger agree),
 *   the admin revokes it in the page and the agent's next request gets 401;
 * - reviewer, support and viewer see no Users or Tokens links and get the 403 page.
 * Each page is screenshotted at 1280 and 390 px wide for a person to look at.
 */
import type { Page } from "@playwright/test";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { hashTokenSecret, tokenScope } from "@/lib/server/tokens/agent-token";
import { userScope } from "@/lib/server/users/user";
import { customerFor, effects, expect, test, uniqueTag, AGENT_STORE } from "./agent";
import { screenshotPath, signIn } from "./fixtures";

/**
 * Screenshots the page at 1280 px and at 390 px. At 390 nothing in the page's content may be wider
 * than its box (tables scroll inside .table-wrap, which is allowed); the site header (app/layout.tsx)
 * is not part of these desks and is reported, not judged, here.
 */
async function screenshotBothWidths(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: screenshotPath(name), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const layout = await page.evaluate(() => {
    const main = document.querySelector("main");
    const offenders: string[] = [];
    for (const el of main ? Array.from(main.querySelectorAll<HTMLElement>("*")) : []) {
      if (el.closest(".table-wrap") || el.clientWidth === 0 || getComputedStyle(el).overflowX !== "visible") continue;
      if (el.scrollWidth > el.clientWidth + 1) offenders.push(`<${el.tagName.toLowerCase()} class="${el.className}"> ${el.scrollWidth} > ${el.clientWidth}`);
    }
    return { main: main?.scrollWidth ?? 0, header: document.querySelector("header")?.scrollWidth ?? 0, width: window.innerWidth, offenders };
  });
  expect(layout.offenders, "content wider than its box at 390 px").toEqual([]);
  expect(layout.main, "the page's content scrolls sideways at 390 px").toBeLessThanOrEqual(layout.width);
  if (layout.header > layout.width) test.info().annotations.push({ type: "layout", description: `the site header is ${layout.header} px wide at ${layout.width} px` });
  await page.screenshot({ path: screenshotPath(`${name}-390`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** What the clipboard holds now (the test's context granted clipboard access). */
function clipboardText(page: Page): Promise<string> {
  return page.evaluate(() => navigator.clipboard.readText());
}

test.describe("the people desk", () => {
  test("an admin creates an account whose initial password is shown once; the person signs in with it; a role change and a disable apply on their next request", async ({
    page,
    context,
    browser,
    baseURL,
    seedUser,
    db,
  }) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseURL });
    const admin = await seedUser("admin");
    await signIn(page, admin, "/admin/users");
    await expect(page).toHaveURL((url) => url.pathname === "/admin/users");
    const nav = page.getByRole("navigation", { name: "Main" });
    await expect(nav.getByRole("link", { name: "Users" })).toBeVisible();
    await expect(nav.getByRole("link", { name: "Tokens" })).toBeVisible();
    await expect(page.getByRole("heading", { name: "Users", exact: true })).toBeVisible();
    await expect(page.locator(`tr[data-email="${admin.email}"]`)).toContainText("you");

    // A taken email is explained in a sentence, and nothing is created.
    await page.getByLabel("Email", { exact: true }).fill(admin.email);
    await page.getByLabel("Name", { exact: true }).fill("Someone Else");
    await page.getByRole("button", { name: "Create account" }).click();
    await expect(page.locator('form[aria-label="Add a person"] [role="alert"]')).toHaveText(`A user with the email ${admin.email} already exists; change their role or name instead of creating them again.`);
    expect(await db.user.count({ where: { email: admin.email } })).toBe(1);
    await page.screenshot({ path: screenshotPath("admin-users-error"), fullPage: true });

    // The new account.
    const tag = uniqueTag();
    const email = `e2e-desk-${tag}@sagaboard.test`;
    const name = `Dana Desk ${tag}`;
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel("Role", { exact: true }).selectOption("reviewer");
    await expect(page.getByText("Decides pivots, works the escalation queue, pulls revoke triggers.")).toBeVisible();
    await page.getByRole("button", { name: "Create account" }).click();
    const secret = page.getByTestId("initial-password");
    await expect(secret).toBeVisible();
    const password = (await secret.textContent())?.trim() ?? "";
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    await expect(page.getByText("It will not be shown again:")).toBeVisible();
    await page.getByRole("button", { name: "Copy" }).click();
    await expect(page.getByRole("button", { name: "Copied ✓" })).toBeVisible();
    expect(await clipboardText(page)).toBe(password);

    const row = await db.user.findUniqueOrThrow({ where: { email } });
    expect(row).toMatchObject({ name, role: "reviewer", disabledAt: null });
    expect(row.passwordHash).toMatch(/^\$2[aby]\$10\$/);
    expect(JSON.stringify(row)).not.toContain(password);
    const created = await db.auditEvent.findMany({ where: { scope: userScope(row.id) } });
    expect(created.map((e) => [e.type, e.actor])).toEqual([["user.created", `user:${admin.email}`]]);
    const userRow = page.locator(`tr[data-email="${email}"]`);
    await expect(userRow).toContainText(name);
    await expect(userRow).toContainText("ENABLED");
    await screenshotBothWidths(page, "admin-users");

    // Shown once: gone when closed, and not in the page after a reload.
    await page.getByRole("button", { name: "Done" }).click();
    await expect(secret).toHaveCount(0);
    await page.reload();
    await expect(userRow).toBeVisible();
    expect(await page.content()).not.toContain(password);

    // The person signs in with it, in their own browser.
    const theirs = await browser.newContext({ baseURL });
    const person = await theirs.newPage();
    await signIn(person, { email, password });
    await expect(person.getByTestId("user-role")).toHaveText("reviewer");
    await expect(person.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Users" })).toHaveCount(0);

    // The admin changes the role: the next request shows it.
    await userRow.getByLabel(`Role of ${email}`).selectOption("support");
    await userRow.getByRole("button", { name: "Save" }).click();
    await expect(page.getByTestId("users-message")).toContainText(`${email} is now support, from their next request.`);
    expect((await db.user.findUniqueOrThrow({ where: { email } })).role).toBe("support");
    await person.reload();
    await expect(person.getByTestId("user-role")).toHaveText("support");

    // The admin disables the account, after confirming: the next request is refused.
    await userRow.getByRole("button", { name: "Disable" }).click();
    await expect(userRow.getByText(`Disable ${email}? Their next request is refused.`)).toBeVisible();
    await page.screenshot({ path: screenshotPath("admin-users-confirm-disable"), fullPage: true });
    await userRow.getByRole("button", { name: "Yes, disable" }).click();
    await expect(page.getByTestId("users-message")).toContainText(`Disabled ${email}`);
    await expect(userRow).toContainText("DISABLED");
    expect((await db.user.findUniqueOrThrow({ where: { email } })).disabledAt).not.toBeNull();
    await person.reload();
    await expect(person).toHaveURL((url) => url.pathname === "/signin" && url.searchParams.get("error") === "AccountDisabled");
    const api = await person.request.get("/api/dashboard/runs");
    expect(api.status()).toBe(401);

    // And enables it again.
    await userRow.getByRole("button", { name: "Enable" }).click();
    await expect(page.getByTestId("users-message")).toContainText(`Enabled ${email}: they can sign in again, as support.`);
    expect((await db.user.findUniqueOrThrow({ where: { email } })).disabledAt).toBeNull();
    const events = await db.auditEvent.findMany({ where: { scope: userScope(row.id) }, orderBy: { seq: "asc" } });
    expect(events.map((e) => [e.type, e.actor])).toEqual([
      ["user.created", `user:${admin.email}`],
      ["user.role_changed", `user:${admin.email}`],
      ["user.disabled", `user:${admin.email}`],
      // Disabling ends every session of the account (the person had signed in).
      ["user.sessions_ended", `user:${admin.email}`],
      ["user.enabled", `user:${admin.email}`],
    ]);
    await theirs.close();
  });
});

test.describe("the token desk", () => {
  test("an admin creates a scoped token and copies its secret; an agent records a staged step with it; after the admin revokes it the agent gets 401", async ({
    page,
    context,
    baseURL,
    seedUser,
    db,
    world,
  }) => {
    if (!baseURL) throw new Error("baseURL is not set; run the e2e tests through playwright.config.ts.");
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseURL });
    const registry = createSupportToolRegistry(world);
    await syncToolPolicies(db, registry, "system:e2e");
    const admin = await seedUser("admin");
    await signIn(page, admin, "/admin/tokens");
    await expect(page.getByRole("heading", { name: "Agent tokens" })).toBeVisible();
    for (const tool of registry.list()) await expect(page.getByRole("checkbox", { name: tool.name, exact: true })).toBeVisible();

    // No tool picked: said in a sentence, nothing sent.
    const tag = uniqueTag();
    const name = `e2e-desk-${tag}`;
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByRole("button", { name: "Create token" }).click();
    await expect(page.locator('form[aria-label="Create a token"] [role="alert"]')).toHaveText("Pick at least one tool the token may use.");
    // A tool the table does not have is refused by the server, naming it (the page never offers one).
    const unknown = await page.request.post("/api/dashboard/admin/tokens", { data: { name, tools: ["search_orders", "my_tool"] }, headers: { origin: baseURL } });
    expect(unknown.status()).toBe(400);
    expect((await unknown.json()) as unknown).toMatchObject({ error: { code: "VALIDATION_FAILED", details: [{ path: "tools", message: "not in the tool table: my_tool" }] } });
    expect(await db.agentToken.count({ where: { name } })).toBe(0);

    const tools = ["create_ticket_draft", "search_orders"];
    for (const tool of tools) await page.getByRole("checkbox", { name: tool, exact: true }).check();
    await page.getByRole("button", { name: "Create token" }).click();
    const secretBox = page.getByTestId("token-secret");
    await expect(secretBox).toBeVisible();
    await expect(page.getByText("This secret will not be shown again:")).toBeVisible();
    await page.getByRole("button", { name: "Copy" }).click();
    await expect(page.getByRole("button", { name: "Copied ✓" })).toBeVisible();
    const secret = await clipboardText(page);
    expect(secret).toMatch(/^sgb_[A-Za-z0-9_-]{43}$/);
    expect(secret).toBe((await secretBox.textContent())?.trim());

    const row = await db.agentToken.findUniqueOrThrow({ where: { name } });
    expect(row).toMatchObject({ role: "agent", tools, createdBy: admin.email, revokedAt: null, tokenHash: hashTokenSecret(secret) });
    expect(JSON.stringify(row)).not.toContain(secret);
    expect((await db.auditEvent.findMany({ where: { scope: tokenScope(row.id) } })).map((e) => [e.type, e.actor])).toEqual([
      ["agent_token.created", `user:${admin.email}`],
    ]);
    const tokenRow = page.locator(`tr[data-token="${name}"]`);
    await expect(tokenRow).toContainText("ACTIVE");
    await expect(tokenRow).toContainText("never");
    await screenshotBothWidths(page, "admin-tokens");
    await page.getByRole("button", { name: "Done" }).click();
    await expect(secretBox).toHaveCount(0);

    // The agent works with the copied secret over the API, against the systems the server hosts.
    const engine = new SagaEngine({ store: new HttpSagaStore({ baseUrl: baseURL, token: secret, ...AGENT_STORE }), registry, recheckAfterMs: 500, backoffMs: 50, maxAttempts: 3 });
    const customer = customerFor(tag);
    const run = await engine.startRun({ title: `Desk token run ${tag}`, agent: name, onBehalfOf: customer });
    const staged = await run.call("create_ticket_draft", { summary: `Reship order 2001 (${tag})`, orderId: "2001" });
    if (staged.status !== "ok" || !staged.externalRef) throw new Error(`the draft should stage freely, got ${JSON.stringify(staged)}`);
    const step = await db.step.findFirstOrThrow({ where: { runId: run.runId, tool: "create_ticket_draft" } });
    expect(step).toMatchObject({ status: "CONFIRMED", externalRef: staged.externalRef });
    expect((await db.run.findUniqueOrThrow({ where: { id: run.runId } })).agent).toBe(name);
    expect(await effects(world, { op: "ticketing.createDraft", ref: staged.externalRef })).toHaveLength(1);
    // Outside its scope it is refused.
    await expect(run.call("create_ticket", { summary: `Not mine (${tag})`, orderId: "2001" })).rejects.toMatchObject({ status: 403 });
    await expect(tokenRow.locator("time")).toHaveCount(2); // created and last used

    // The admin revokes it, after confirming.
    await tokenRow.getByRole("button", { name: "Revoke" }).click();
    await expect(tokenRow.getByText(`Revoke “${name}”? Its next request gets 401; this cannot be undone.`)).toBeVisible();
    await tokenRow.getByRole("button", { name: "Yes, revoke" }).click();
    await expect(page.getByTestId("tokens-message")).toHaveText(/Revoked “.+”: its next request gets 401\./);
    await expect(tokenRow).toContainText("REVOKED");
    await expect(tokenRow.getByRole("button", { name: "Revoke" })).toHaveCount(0);
    const revoked = await db.agentToken.findUniqueOrThrow({ where: { name } });
    expect(revoked.revokedAt).not.toBeNull();
    // The refused call outside its scope is on the token's chain as an attempt.
    expect((await db.auditEvent.findMany({ where: { scope: tokenScope(row.id) }, orderBy: { seq: "asc" } })).map((e) => e.type)).toEqual([
      "agent_token.created",
      "agent_token.refused",
      "agent_token.revoked",
    ]);

    // The agent's next request is refused.
    await expect(engine.startRun({ title: `After revocation ${tag}`, agent: name, onBehalfOf: customer })).rejects.toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    const raw = await fetch(`${baseURL}/api/v1/tools`, { headers: { authorization: `Bearer ${secret}` } });
    expect(raw.status).toBe(401);
    expect(await db.run.count({ where: { title: `After revocation ${tag}` } })).toBe(0);
    await page.screenshot({ path: screenshotPath("admin-tokens-revoked"), fullPage: true });
  });
});

test.describe("token lifetimes", () => {
  test("an admin gives a token a lifetime; one that ends within a week is flagged; the default for new tokens is set on the page", async ({ page, db, seedUser, world }) => {
    await syncToolPolicies(db, createSupportToolRegistry(world), "system:e2e");
    const admin = await seedUser("admin");
    const tag = uniqueTag();
    const name = `brief-${tag}`;
    await signIn(page, admin, "/admin/tokens");
    const form = page.locator('form[aria-label="Create a token"]');
    await form.getByLabel("Name").fill(name);
    await form.getByLabel("Days until it expires").fill("5");
    await form.getByRole("checkbox").first().check();
    await page.getByRole("button", { name: "Create token" }).click();
    await expect(page.getByTestId("token-secret")).toBeVisible();
    await page.getByRole("button", { name: "Done" }).click();
    const row = await db.agentToken.findUniqueOrThrow({ where: { name } });
    expect(Math.round((row.expiresAt!.getTime() - row.createdAt.getTime()) / 86_400_000)).toBe(5);
    const tokenRow = page.locator(`tr[data-token="${name}"]`);
    await expect(tokenRow).toContainText("within a week");
    await expect(page.getByTestId("tokens-expiring")).toContainText(name);

    const lifetime = page.locator('form[aria-label="Default token lifetime"]');
    await lifetime.getByLabel("Days").fill("90");
    await lifetime.getByRole("button", { name: "Save the lifetime" }).click();
    await expect(page.getByTestId("tokens-message")).toContainText("New tokens now expire after 90 days; existing tokens keep theirs.");
    await expect(form).toContainText("after 90 days (the default)");
    for (const [width, height] of [[1366, 900], [390, 844]] as const) {
      await page.setViewportSize({ width, height });
      await page.screenshot({ path: screenshotPath(`admin-tokens-lifetime-${width}`), fullPage: true });
    }
    await lifetime.getByRole("button", { name: "Never expire" }).click();
    await expect(page.getByTestId("tokens-message")).toContainText("New tokens no longer expire unless their creator picks a lifetime.");
    expect((await db.setting.findUniqueOrThrow({ where: { key: "agentTokens.defaultLifetimeSec" } })).value).toBeNull();
  });
});

test.describe("not for other roles", () => {
  for (const role of ["reviewer", "support", "viewer"] as const) {
    test(`a ${role} sees no Users or Tokens links and gets the 403 page from both desks`, async ({ page, seedUser }) => {
      const user = await seedUser(role);
      await signIn(page, user);
      const nav = page.getByRole("navigation", { name: "Main" });
      await expect(nav.getByRole("link", { name: "Runs" })).toBeVisible();
      await expect(nav.getByRole("link", { name: "Users" })).toHaveCount(0);
      await expect(nav.getByRole("link", { name: "Tokens" })).toHaveCount(0);
      for (const [path, what] of [
        ["/admin/users", "manage users"],
        ["/admin/tokens", "manage agent tokens"],
      ] as const) {
        await page.goto(path);
        await expect(page.getByRole("heading", { name: "You cannot open this page" })).toBeVisible();
        await expect(page.getByText(`Your role (${role}) cannot ${what}`)).toBeVisible();
        await expect(page.getByRole("button", { name: /Create|Disable|Revoke/ })).toHaveCount(0);
      }
      if (role === "viewer") await page.screenshot({ path: screenshotPath("admin-tokens-forbidden"), fullPage: true });
    });
  }
});
