/**
 * Approvals by email, in a browser, against a local SMTP server: a real agent waits at its pivot, a
 * notifier in the test process emails every reviewer a link of their own. A mail scanner's GET and
 * HEAD (no session) decide nothing; the approver signs in, sees the confirm page (the whole pivot:
 * staged effects by system and audience, the plan) and approves with its POST; the agent commits and
 * the email goes out once. The same link again is 409, a forwarded one is 403 for another signed-in
 * reviewer, and a plan edited after sending ends the link (410).
 */
import type { Browser } from "@playwright/test";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { Notifier } from "@/lib/server/notifications/notifier";
import type { PrismaClient } from "@/lib/core/db/prisma";
import { approvalSecretIn, startSmtpInbox, type SmtpInbox } from "../support/smtp-inbox";
import { customerFor, effects, expect, sentTo, stageReship, test, uniqueTag, type TestAgent } from "./agent";
import { shootBothWidths, signIn, type SeededUser } from "./fixtures";

let inbox: SmtpInbox;

test.beforeAll(async () => {
  inbox = await startSmtpInbox();
});

test.afterAll(async () => {
  await inbox?.close();
});

/** A run waiting at a pivot (capture + customer email), announced by email to every reviewer; returns the link sent to `to`. */
async function announcedPivot(db: PrismaClient, agent: TestAgent, baseURL: string, to: SeededUser) {
  // What other tests left in the outbox goes out without email first, so this round mails only this pivot.
  await new Notifier({ prisma: db, store: new PrismaSagaStore(db), notifierId: "e2e-mail-drain", mailer: null, slas: false }).runOnce();
  const tag = uniqueTag();
  const customer = customerFor(tag);
  const run = await agent.engine.startRun({ title: `Reship with an email approval ${tag}`, agent: agent.name, onBehalfOf: customer });
  const staged = await stageReship(run, customer, tag);
  const mail = { to: customer, subject: `Your replacement ships today (${tag})`, body: "We re-shipped order 2001." };
  const pivot = await run.requestPivot({
    summary: `Capture the hold and email ${customer}.`,
    plan: [
      { tool: "capture_payment", args: { paymentIntentId: staged.paymentIntentId, amount: staged.amount } },
      { tool: "send_email", args: mail },
    ],
  });
  const notifier = new Notifier({ prisma: db, store: new PrismaSagaStore(db), notifierId: "e2e-mail", mailer: inbox.mailer, baseUrl: baseURL, slas: false });
  for (let i = 0; i < 50 && !inbox.mails.some((m) => m.to.includes(to.email) && m.text.includes(pivot.id)); i++) await notifier.runOnce();
  const secret = approvalSecretIn((await inbox.waitFor(to.email, pivot.id)).text);
  if (!secret) throw new Error("the approval email carries a link");
  return { run, pivot, customer, secret, link: `${baseURL}/approve/${secret}` };
}

/** A page in a browser context of its own, signed in as `user`. */
async function pageOf(browser: Browser, user: SeededUser) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, user);
  return { page, close: () => context.close() };
}

test("a scanner's GET and HEAD decide nothing; the approver approves on the confirm page; the same link again is 409", async ({ page, db, agent, world, seedUser, baseURL, playwright }) => {
  const rita = await seedUser("reviewer", { name: "Rita Email" });
  const { run, pivot, customer, secret, link } = await announcedPivot(db, agent, baseURL!, rita);

  // A mail scanner follows the link before Rita does: no session, sent to sign in, nothing decided.
  const scanner = await playwright.request.newContext();
  for (const method of ["GET", "HEAD"] as const) {
    const answer = await scanner.fetch(link, { method, maxRedirects: 0 });
    expect(answer.status()).toBe(303);
    expect(answer.headers().location).toContain("/signin?callbackUrl=%2Fapprove%2F");
  }
  await scanner.dispose();
  expect((await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");

  // Rita clicks it: sign in, then the confirm page (the secret is no longer in the address).
  await page.goto(link);
  await expect(page).toHaveURL(/\/signin\?callbackUrl=/);
  await page.getByLabel("Email").fill(rita.email);
  await page.getByLabel("Password").fill(rita.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByRole("heading", { name: /^Decide: Reship with an email approval/ })).toBeVisible();
  expect(page.url()).not.toContain(secret);
  await expect(page.getByRole("heading", { name: /What is staged so far/ })).toBeVisible();
  await expect(page.getByRole("heading", { name: /What approving lets the agent do/ })).toBeVisible();
  await expect(page.getByTestId("approval-confirm-link")).toContainText("works once");
  await shootBothWidths(page, "email-approval-confirm");
  expect((await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");

  const forms = page.getByTestId("approval-confirm-forms");
  await forms.getByRole("checkbox").check();
  await forms.getByRole("button", { name: "Approve this plan" }).click();
  await expect(page.getByTestId("approval-confirm-done")).toContainText("You approved this pivot");
  expect(await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).toMatchObject({ status: "APPROVED", decidedBy: rita.email });

  // The agent commits the approved plan: the customer's email goes out once.
  await run.commitPlan(pivot.id);
  expect(await effects(world, { op: "email.send" }, sentTo(customer))).toHaveLength(1);

  // The same link again: 409, with a page that says what it did.
  const again = await page.goto(link);
  expect(again?.status()).toBe(409);
  await expect(page.getByTestId("approval-link-refused")).toContainText("already used");
  await shootBothWidths(page, "email-approval-used");
});

test("a forwarded link is 403 for another reviewer, and a plan edited after sending ends the link (410)", async ({ browser, db, agent, seedUser, baseURL }) => {
  const [rita, rob] = [await seedUser("reviewer", { name: "Rita Forward" }), await seedUser("reviewer", { name: "Rob Forward" })];
  const { pivot, link } = await announcedPivot(db, agent, baseURL!, rita);

  const robs = await pageOf(browser, rob);
  const forwarded = await robs.page.goto(link);
  expect(forwarded?.status()).toBe(403);
  await expect(robs.page.getByTestId("approval-link-refused")).toContainText("sent to someone else");
  expect((await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");

  // Rob lowers the capture through the pivot screen's edit route (his session): a new plan.
  const capture = pivot.plan[0]!;
  const edited = await robs.page.request.post(`${baseURL}/api/dashboard/pivots/${pivot.id}/edit`, {
    headers: { origin: baseURL! },
    data: { planHash: pivot.planHash, itemIdx: 0, args: { ...(capture.args as object), amount: 1500 }, note: "partial capture" },
  });
  expect(edited.status()).toBe(200);
  expect(await edited.json()).toMatchObject({ ok: true });
  await robs.close();

  const ritas = await pageOf(browser, rita);
  const killed = await ritas.page.goto(link);
  expect(killed?.status()).toBe(410);
  await expect(ritas.page.getByTestId("approval-link-refused")).toContainText("The plan changed after this email was sent");
  await ritas.close();
  const reasons = (await db.auditEvent.findMany({ where: { runId: pivot.runId, type: "approval_link.refused" }, orderBy: { seq: "asc" } })).map((e) => (e.data as { reason: string }).reason);
  expect(reasons).toEqual(["forwarded", "plan_changed"]);
  expect((await db.pivot.findUniqueOrThrow({ where: { id: pivot.id } })).status).toBe("PENDING");
});
