/**
 * The tool table in the browser, with a real agent over the API: a team declares its own tool and
 * its first call is held; the admin sees declared beside accepted and accepts it; the call then runs
 * once (the hosted ledger says so). A pivot approved before the admin makes the tool irreversible is
 * stale: the agent's next call of it is held for a fresh approval and nothing reaches the provider.
 * A bad edit names its field and changes nothing. People who are not admins see no admin navigation,
 * may read the table, and get 403 from every admin page and endpoint.
 *
 * Each test declares tools in its own namespace, so it never changes a row another test uses.
 */
import type { Page } from "@playwright/test";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { stepKey } from "@/packages/client/src/saga/keys";
import { World } from "@/lib/demo/sim";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { effects, expect, test, uniqueTag, AGENT_STORE } from "./agent";
import { screenshotPath, signIn } from "./fixtures";
import { TEAM_MANIFEST, teamRegistry } from "../support/team-connector";

/** Elements that reach past the right edge of the viewport (the page would scroll sideways), outside boxes that scroll by themselves (tables, the phone's header links). */
async function widerThanViewport(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    return [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > width + 0.5 && !el.closest(".table-wrap, .site-header nav"))
      .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join(".")} right=${Math.round(el.getBoundingClientRect().right)}`)
      .slice(0, 5);
  });
}

const MANIFEST = TEAM_MANIFEST;

test("a declared tool is held until the admin accepts it; an edit makes an approved plan stale", async ({ page, db, world, baseURL, seedUser }) => {
  const ns = `team-${uniqueTag()}`;
  const tool = `${ns}.open_case`;
  await syncToolPolicies(db, createSupportToolRegistry(world), "system:e2e");
  const { secret } = await createAgentToken(db, { name: ns, tools: ["search_orders"], createdBy: "system:e2e" });

  // The team declares its tool over the API with its own token.
  const declared = await fetch(`${baseURL}/api/v1/tools/declarations`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify(MANIFEST) });
  expect(declared.status).toBe(200);
  expect(await db.toolPolicy.findUniqueOrThrow({ where: { name: tool } })).toMatchObject({ status: "UNREVIEWED", namespace: ns, policyVersion: 1 });

  const engine = new SagaEngine({ store: new HttpSagaStore({ baseUrl: baseURL ?? "", token: secret, ...AGENT_STORE }), registry: teamRegistry(world, ns), recheckAfterMs: 500, backoffMs: 50 });
  const run = await engine.startRun({ title: `Open a case for ${ns}`, agent: ns });
  const held = await run.call(tool, { summary: "Kettle arrived broken", orderId: "2001" });
  expect(held).toMatchObject({ status: "approval_required", reason: "UNREVIEWED" });
  expect(await effects(world, { key: stepKey(run.runId, 0, tool) })).toHaveLength(0);

  // The admin's landing lists what waits for an admin; the tools waiting for review lead to the table.
  const admin = await seedUser("admin");
  await signIn(page, admin);
  const waits = page.getByRole("region", { name: "What waits for an admin" });
  const unreviewed = await db.toolPolicy.count({ where: { status: "UNREVIEWED" } });
  await expect(waits.getByRole("link", { name: new RegExp(`^${unreviewed} declared tools? waits? for your review`) })).toBeVisible();
  await expect(waits).toContainText("failed every attempt");
  // The first view a person gets, at 1366 px and on a phone: the header on one line, at most 100 px on the phone.
  for (const [width, height] of [[1366, 900], [390, 844]] as const) {
    await page.setViewportSize({ width, height });
    await page.screenshot({ path: screenshotPath(`admin-landing-${width}`) });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await waits.getByRole("link", { name: /declared tools? waits? for your review/ }).click();
  await expect(page.getByRole("heading", { name: "Tool table" })).toBeVisible();
  await expect(page).toHaveURL(/status=UNREVIEWED/);
  await page.getByRole("link", { name: tool }).click();
  await expect(page.getByRole("heading", { name: tool })).toBeVisible();
  const compare = page.locator('section[aria-labelledby="declared"]');
  await expect(compare).toContainText(`${ns} proposed`);
  await expect(compare).toContainText("every call is held and treated as irreversible");
  await expect(compare.getByRole("row", { name: /Compensating tool/ })).toContainText(`${ns}.close_case`);
  // The compensator picker offers this team's compensators only, not the server's or another team's.
  const picker = page.getByLabel("Compensating tool");
  const choices = (await picker.locator("option").allTextContents()).filter((c) => c.trim() && !/^—|none|pick/i.test(c.trim()));
  expect(choices.length).toBeGreaterThan(0);
  expect(choices.filter((c) => !c.startsWith(`${ns}.`)), "compensators of other teams in the picker").toEqual([]);
  await page.screenshot({ path: screenshotPath("admin-tool-unreviewed"), fullPage: true });
  await page.getByRole("button", { name: "Accept this tool" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Accepted. Version 2" })).toBeVisible();
  expect(await db.toolPolicy.findUniqueOrThrow({ where: { name: tool } })).toMatchObject({ status: "REVIEWED", policyVersion: 2, verifiedBy: `user:${admin.email}` });
  if (held.status === "approval_required" && held.escalationId) {
    expect((await db.escalation.findUniqueOrThrow({ where: { id: held.escalationId } })).status).toBe("RESOLVED");
  }

  // The agent's next call runs, once.
  expect(await run.call(tool, { summary: "Kettle arrived broken", orderId: "2001" })).toMatchObject({ status: "ok" });
  expect(await effects(world, { key: stepKey(run.runId, 0, tool) })).toHaveLength(1);

  // A pivot whose plan opens a second case, approved by the admin (who may decide pivots too).
  const second = { summary: "Follow-up for the courier", orderId: "2001" };
  const pivot = await run.requestPivot({ summary: "Open a follow-up case.", plan: [{ tool, args: second }] });
  await page.goto(`/pivots/${pivot.id}`);
  await page.getByRole("button", { name: /^Approve/ }).click();
  await expect(page.locator(".decide-panel .decided")).toContainText(`Approved by ${admin.email}`);
  expect((await run.awaitPivot(pivot.id, { timeoutMs: 10_000, pollMs: 100 })).status).toBe("APPROVED");

  // After the approval, the admin makes the tool irreversible in the browser.
  await page.goto(`/admin/tools/${tool}`);
  const form = page.locator('form[aria-labelledby="edit"]');
  await form.getByLabel("Class", { exact: true }).selectOption("IRREVERSIBLE");
  await form.getByLabel("Compensating tool", { exact: true }).selectOption("");
  await form.getByLabel(/Correction subject/).fill("Correction about case {{summary}}");
  await form.getByLabel("Correction body").fill("Please disregard the case we opened about {{summary}}.");
  await form.getByLabel("Why (kept in the history)").fill("cases reach the customer's inbox");
  await form.getByRole("button", { name: /^Save/ }).click();
  await expect(page.getByRole("status").filter({ hasText: "Saved. Version 3" })).toBeVisible();
  const history = page.locator('section[aria-labelledby="history"]');
  await expect(history.locator("li").first()).toContainText("Version 3 · edited by user:");
  await expect(history.locator("li").first()).toContainText("Class: COMPENSATABLE → IRREVERSIBLE");
  await expect(history.locator("li").first()).toContainText("“cases reach the customer's inbox”");
  await page.screenshot({ path: screenshotPath("admin-tool-history"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByRole("heading", { name: tool })).toBeVisible();
  expect(await widerThanViewport(page)).toEqual([]);
  await page.screenshot({ path: screenshotPath("admin-tool-history-390"), fullPage: true });
  await page.goto("/admin/tools");
  expect(await widerThanViewport(page)).toEqual([]);
  await page.screenshot({ path: screenshotPath("admin-tools-390"), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: screenshotPath("admin-tools"), fullPage: true });

  const version = await db.toolPolicyVersion.findUniqueOrThrow({ where: { toolName_version: { toolName: tool, version: 3 } } });
  expect(version).toMatchObject({ change: "edited", changedBy: `user:${admin.email}`, diff: expect.objectContaining({ toolClass: { from: "COMPENSATABLE", to: "IRREVERSIBLE" } }) });

  // The approved plan item is stale: the agent's call is held for a fresh approval, and nothing is opened.
  const stale = await run.call(tool, second);
  expect(stale).toMatchObject({ status: "approval_required", reason: "POLICY_CHANGED" });
  expect(await effects(world, { key: stepKey(run.runId, 1, tool) })).toHaveLength(0);
  expect(await db.step.count({ where: { runId: run.runId } })).toBe(1);
});

test("a team's change to a reviewed tool waits as a proposal: the admin sees it as a diff, refuses it (the row stands) or accepts it (a new version)", async ({ page, db, world, baseURL, seedUser }) => {
  const ns = `prop-${uniqueTag()}`;
  const tool = `${ns}.open_case`;
  await syncToolPolicies(db, createSupportToolRegistry(world), "system:e2e");
  const { secret } = await createAgentToken(db, { name: ns, tools: ["search_orders"], createdBy: "system:e2e" });
  const declare = (entry: Record<string, unknown>) =>
    fetch(`${baseURL}/api/v1/tools/declarations`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify({ ...MANIFEST, tools: [{ ...MANIFEST.tools[0], ...entry }] }) });
  expect((await declare({})).status).toBe(200);
  const admin = await seedUser("admin");
  await signIn(page, admin, `/admin/tools/${tool}`);
  await page.getByRole("button", { name: "Accept this tool" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Accepted. Version 2" })).toBeVisible();
  const inForce = await db.toolPolicy.findUniqueOrThrow({ where: { name: tool } });
  expect(inForce).toMatchObject({ toolClass: "COMPENSATABLE", owner: "team-ops", status: "REVIEWED" });

  // The team's token re-declares it as PURE, owned by someone else: nothing in force changes.
  const attack = await declare({ class: "PURE", owner: "attacker", compensation: undefined, lookup: false });
  expect((await attack.json()).tools[0]).toMatchObject({ outcome: "recorded", status: "REVIEWED" });
  expect(await db.toolPolicy.findUniqueOrThrow({ where: { name: tool } })).toMatchObject({ toolClass: "COMPENSATABLE", owner: "team-ops", policyVersion: 2 });

  await page.goto("/admin/tools?status=PROPOSED");
  await expect(page.getByRole("link", { name: tool })).toBeVisible();
  await page.getByRole("link", { name: tool }).click();
  const proposal = page.locator('section[aria-labelledby="declared"]');
  await expect(proposal.getByRole("heading", { name: "Change proposed by its team" })).toBeVisible();
  await expect(proposal).toContainText("the reviewed row stands exactly as it is");
  await expect(proposal.getByRole("note")).toContainText("Accepting would lower");
  await expect(proposal.getByRole("row", { name: /^Class/ })).toContainText("COMPENSATABLE");
  await expect(proposal.getByRole("row", { name: /^Class/ })).toContainText("PURE");
  await expect(proposal.getByRole("row", { name: /^Owner/ })).toContainText("lowers a control");
  for (const [width, height] of [[1366, 900], [390, 844]] as const) {
    await page.setViewportSize({ width, height });
    expect(await widerThanViewport(page)).toEqual([]);
    await page.screenshot({ path: screenshotPath(`admin-tool-proposal-${width}`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });

  await proposal.getByLabel("Why (kept in the history)").fill("it writes cases; it is not read-only");
  await proposal.getByRole("button", { name: "Refuse it" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Refused: the row stays as it was" })).toBeVisible();
  expect(await db.toolPolicy.findUniqueOrThrow({ where: { name: tool } })).toMatchObject({ toolClass: "COMPENSATABLE", owner: "team-ops", policyVersion: 2, proposal: null });

  // A reasonable change proposed later is accepted: the row takes it as a new version.
  expect((await declare({ owner: "team-ops-north" })).status).toBe(200);
  await page.reload();
  await proposal.getByRole("button", { name: "Accept the proposal" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Accepted: the row takes the proposal. Version 3: owner changed" })).toBeVisible();
  expect(await db.toolPolicy.findUniqueOrThrow({ where: { name: tool } })).toMatchObject({ owner: "team-ops-north", policyVersion: 3, proposal: null });
});

test("a declared tool without an argument schema says so, and the admin accepts it only knowingly", async ({ page, db, world, baseURL, seedUser }) => {
  const ns = `bare-${uniqueTag()}`;
  const tool = `${ns}.open_case`;
  await syncToolPolicies(db, createSupportToolRegistry(world), "system:e2e");
  const { secret } = await createAgentToken(db, { name: ns, tools: ["search_orders"], createdBy: "system:e2e" });
  const bare = { ...TEAM_MANIFEST, tools: TEAM_MANIFEST.tools.map(({ argsSchema: _dropped, ...t }) => t) };
  const declared = await fetch(`${baseURL}/api/v1/tools/declarations`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify(bare) });
  expect(declared.status).toBe(200);

  const admin = await seedUser("admin");
  await signIn(page, admin, `/admin/tools/${tool}`);
  await page.setViewportSize({ width: 1366, height: 900 });
  await expect(page.getByRole("heading", { name: tool })).toBeVisible();
  await expect(page.getByRole("region", { name: "Status" }).getByRole("note")).toContainText("No argument schema.");
  await expect(page.locator('section[aria-labelledby="declared"]')).toContainText("It declares no argument schema: calls take any JSON.");
  const accept = page.getByRole("button", { name: "Accept this tool" });
  await expect(accept).toBeDisabled();
  await page.screenshot({ path: screenshotPath("admin-tool-no-schema"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await widerThanViewport(page)).toEqual([]);
  await page.screenshot({ path: screenshotPath("admin-tool-no-schema-390"), fullPage: true });
  await page.getByLabel(`I accept ${tool} without an argument schema`).check();
  await accept.click();
  await expect(page.getByRole("status").filter({ hasText: "Accepted. Version 2" })).toBeVisible();
  expect(await db.toolPolicy.findUniqueOrThrow({ where: { name: tool } })).toMatchObject({ status: "REVIEWED", policyVersion: 2 });
  expect((await db.toolPolicyVersion.findUniqueOrThrow({ where: { toolName_version: { toolName: tool, version: 2 } } })).reason).toContain("accepted without an argument schema");
});

test("a bad edit in the browser names the field, and the row is unchanged", async ({ page, db, seedUser }) => {
  const admin = await seedUser("admin");
  await syncToolPolicies(db, createSupportToolRegistry(new World()), "system:e2e");
  const before = await db.toolPolicy.findUniqueOrThrow({ where: { name: "charge_card" } });
  await signIn(page, admin, `/admin/tools/${before.name}`);
  const form = page.locator('form[aria-labelledby="edit"]');
  // A class that can be pulled back, chosen while the window is empty, gets the class's default window, shown before saving.
  await form.getByLabel("Revocation window", { exact: true }).fill("");
  await form.getByLabel("Class", { exact: true }).selectOption("IRREVERSIBLE");
  await form.getByLabel("Class", { exact: true }).selectOption("COMPENSATABLE");
  await expect(form.getByLabel("Revocation window", { exact: true })).toHaveValue("1");
  await expect(form).toContainText("Filled with the class's default (1d)");
  await page.reload();
  await form.getByLabel("Revocation window", { exact: true }).fill("-2");
  await form.getByRole("button", { name: /^Save/ }).click();
  await expect(form.getByRole("alert")).toContainText("Not saved: one field needs a change (marked above): Revocation window. Nothing was changed.");
  await expect(form.locator("#err-revocationWindowSec")).toContainText("Cannot be negative");
  await page.screenshot({ path: screenshotPath("admin-tool-bad-edit"), fullPage: true });
  expect(await db.toolPolicy.findUniqueOrThrow({ where: { name: before.name } })).toEqual(before);
});

test("reviewer, support and viewer see no admin navigation, read the table, and get 403 from every admin page and endpoint", async ({ page, baseURL, db, seedUser, browser }) => {
  await syncToolPolicies(db, createSupportToolRegistry(new World()), "system:e2e");
  const before = await db.toolPolicy.findUniqueOrThrow({ where: { name: "charge_card" } });
  const origin = { origin: baseURL ?? "" };
  for (const role of ["reviewer", "support", "viewer"] as const) {
    const context = role === "reviewer" ? page.context() : await browser.newContext({ baseURL });
    const p = role === "reviewer" ? page : await context.newPage();
    const user = await seedUser(role);
    await signIn(p, user);
    const nav = p.getByRole("navigation", { name: "Main" });
    await expect(nav.getByRole("link", { name: "Tools" })).toBeVisible();
    await expect(nav.getByRole("link", { name: "Users" })).toHaveCount(0);
    await expect(nav.getByRole("link", { name: "Tokens" })).toHaveCount(0);
    for (const path of ["/admin/users", "/admin/tokens"]) {
      await p.goto(path);
      await expect(p.getByRole("heading", { name: "You cannot open this page" }), `${role} at ${path}`).toBeVisible();
    }
    await p.goto("/admin/tools/charge_card");
    await expect(p.getByText("You can read this row. Editing it needs the admin role.")).toBeVisible();
    await expect(p.locator('form[aria-labelledby="edit"]')).toHaveCount(0);
    if (role === "viewer") await p.screenshot({ path: screenshotPath("admin-tool-viewer"), fullPage: true });

    const attempts = [
      p.request.post("/api/dashboard/admin/tools/charge_card", { data: { expectedVersion: before.policyVersion, changes: { owner: role } }, headers: origin }),
      p.request.get("/api/dashboard/admin/users"),
      p.request.post("/api/dashboard/admin/users", { data: { email: `x-${role}@example.com`, name: "x", role: "admin" }, headers: origin }),
      p.request.get("/api/dashboard/admin/tokens"),
      p.request.post("/api/dashboard/admin/tokens", { data: { name: `x-${role}`, role: "agent", tools: ["charge_card"] }, headers: origin }),
    ];
    for (const response of await Promise.all(attempts)) expect(response.status(), `${role}: ${response.url()}`).toBe(403);
    if (context !== page.context()) await context.close();
  }
  expect(await db.toolPolicy.findUniqueOrThrow({ where: { name: "charge_card" } })).toEqual(before);
  expect(await db.user.count({ where: { email: { startsWith: "x-" } } })).toBe(0);
});
