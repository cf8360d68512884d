/**
 * Issue 28, item 3: a reviewer edits a plan's wording, never who an irreversible email goes to. The
 * editor shows the recipient read-only and says why; a request that changes it anyway is refused
 * naming the argument, and the plan, its hash and its edit record stay as the agent proposed them.
 */
import { customerFor, expect, test, uniqueTag } from "./agent";
import { screenshotPath, signIn } from "./fixtures";

test("the plan editor keeps an email's recipient and the server refuses to change it, naming `to`", async ({ page, baseURL, seedUser, db, agent }) => {
  const tag = uniqueTag();
  const customer = customerFor(tag);
  const run = await agent.engine.startRun({ title: `Apology ${tag}`, agent: agent.name, onBehalfOf: customer });
  const mail = { to: customer, subject: `Sorry about order ${tag}`, body: "Your parcel ships Monday." };
  const pivot = await run.requestPivot({ summary: `Email ${customer}`, plan: [{ tool: "send_email", args: mail }] });

  const rita = await seedUser("reviewer", { name: `Rita Reviewer ${tag}` });
  await page.setViewportSize({ width: 1366, height: 900 });
  await signIn(page, rita, `/pivots/${pivot.id}`);
  await page.getByTestId("plan-item-0").getByRole("button", { name: /^Edit the arguments of call 1/ }).click();
  const editor = page.getByRole("form", { name: /Edit call 1/ });
  const to = editor.getByLabel("To", { exact: true });
  await expect(to).toHaveValue(customer);
  await expect(to).toHaveAttribute("readonly", "");
  await expect(editor).toContainText("Not yours to change: it says who or what the call acts on.");
  await expect(editor.getByLabel("Body")).toBeEditable();
  await page.screenshot({ path: screenshotPath("plan-edit-locked-1366"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: screenshotPath("plan-edit-locked-390"), fullPage: true });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1366, height: 900 });

  // Around the page: the same request a changed form would send.
  const response = await page.request.post(`/api/dashboard/pivots/${pivot.id}/edit`, {
    data: { planHash: pivot.planHash, itemIdx: 0, args: { ...mail, to: "someone.else@elsewhere.example" }, note: "send it elsewhere" },
    headers: { origin: baseURL ?? "" },
  });
  expect(response.status()).toBe(200);
  const body = (await response.json()) as { ok: boolean; reason: string; arguments: string[]; message: string };
  expect(body).toMatchObject({ ok: false, reason: "argument_locked", arguments: ["to"] });
  expect(body.message).toContain("You may not change `to`");

  const row = await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } });
  expect(row.planHash).toBe(pivot.planHash);
  expect(row.edits ?? []).toEqual([]);
  expect((row.plan as { args: unknown }[])[0]?.args).toEqual(mail);
});
