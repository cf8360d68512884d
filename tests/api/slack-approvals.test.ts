/**
 * Approvals in Slack, against a local fake of Slack's Web API (tests/support/fake-slack.ts) on a real
 * database (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1): the notifier posts a waiting pivot with
 * Approve and Reject buttons through @slack/web-api; interactivity requests signed exactly as Slack
 * documents reach the route handler. A signed Approve decides as the mapped person and the agent's
 * commit runs the plan once; the message then says who decided. A bad signature and a request older
 * than 300 s get 401, an unknown Slack user an ephemeral refusal, Reject asks for a reason in a
 * modal; nothing is decided by any refusal, and each is audited.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as interactivity } from "@/app/api/slack/interactivity/route";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { seedSupportToolTable } from "@/lib/demo/seed/support-tool-table";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SLACK_SCOPE } from "@/lib/desks/approvals/answer-slack-interaction";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { Notifier } from "@/lib/server/notifications/notifier";
import { SlackAction } from "@/lib/server/slack/pivot-message";
import { slackConfig } from "@/lib/server/slack/slack-config";
import { createUser } from "@/lib/server/users/create-user";
import { startFakeSlack, type FakeSlack, type SlackCall } from "../support/fake-slack";
import { useTestDatabase } from "./api-test-kit";

process.env.SAGABOARD_SIM_SEARCH_LAG_MS = "0";
const getPrisma = useTestDatabase("slack");
const CHANNEL = "C0APPROVALS";
let slack: FakeSlack;
const saved = { ...process.env };

async function person(name: string, role: "reviewer" | "viewer") {
  const email = `${name}-${Date.now().toString(36)}@example.com`;
  const user = await createUser(await getPrisma(), { email, name: `${name[0]!.toUpperCase()}${name.slice(1)} Slack`, role, password: "correct horse battery", by: { type: "system", id: "test" } });
  return user;
}

/** A run waiting at a pivot that opens a ticket, posted to the approvals channel; returns the post. */
async function postedPivot(tag: string): Promise<{ run: Awaited<ReturnType<SagaEngine["startRun"]>>; pivotId: string; planHash: string; post: SlackCall }> {
  const prisma = await getPrisma();
  const e = new SagaEngine({ store: new PrismaSagaStore(prisma), registry: createSupportToolRegistry(getHostedWorld()), recheckAfterMs: 50, backoffMs: 5 });
  const run = await e.startRun({ title: `Ticket in Slack ${tag}`, agent: "support-agent", onBehalfOf: "bo@example.com" });
  const orderId = `S-${tag}`;
  await run.call("create_ticket_draft", { summary: `Reship ${tag}`, orderId });
  const pivot = await run.requestPivot({ summary: `Open the ticket for ${tag}.`, plan: [{ tool: "create_ticket", args: { summary: `Reship ${tag}`, orderId } }] });
  const notifier = new Notifier({ prisma, store: new PrismaSagaStore(prisma), notifierId: `slack-${tag}`, mailer: null, slack: slackConfig(), baseUrl: "http://sagaboard.test", slas: false });
  for (let round = await notifier.runOnce(); round.attempts.length > 0 || round.fannedOut > 0; round = await notifier.runOnce());
  const post = slack.callsOf("chat.postMessage").find((c) => String(c.args.text).includes(tag));
  if (!post) throw new Error("the notifier posted the pivot to Slack");
  return { run, pivotId: pivot.id, planHash: pivot.planHash, post };
}

const send = async (request: Request) => {
  const res = await interactivity(request);
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : null };
};

beforeAll(async () => {
  slack = await startFakeSlack();
  Object.assign(process.env, { SAGABOARD_SLACK_BOT_TOKEN: slack.botToken, SAGABOARD_SLACK_SIGNING_SECRET: slack.signingSecret, SAGABOARD_SLACK_API_URL: slack.apiUrl, SAGABOARD_SLACK_CHANNEL: CHANNEL });
  resetHostedWorld({ searchLagMs: 0 });
  await seedSupportToolTable(await getPrisma(), createSupportToolRegistry(getHostedWorld()));
});

afterAll(async () => {
  process.env = { ...saved };
  await slack.close();
});

describe("approvals in Slack", () => {
  it("posts the pivot with its buttons; a signed Approve by a mapped reviewer decides, the agent commits once, and the message says who decided", async () => {
    const rita = await person("rita", "reviewer");
    slack.addUser("U0RITA", rita.email);
    const { run, pivotId, post } = await postedPivot(`a${Date.now().toString(36)}`);
    expect(post.args.channel).toBe(CHANNEL);
    const prisma = await getPrisma();
    expect(await prisma.slackMessage.findFirstOrThrow({ where: { pivotId } })).toMatchObject({ channel: CHANNEL, ts: post.answer?.ts });

    const answer = await send(slack.click(post, SlackAction.approve, "U0RITA"));
    expect(answer.status).toBe(200);
    expect(await prisma.pivot.findUniqueOrThrow({ where: { id: pivotId } })).toMatchObject({ status: "APPROVED", decidedBy: rita.email });
    const update = slack.callsOf("chat.update").at(-1)!;
    expect(update.args).toMatchObject({ channel: CHANNEL, ts: post.answer?.ts });
    expect(JSON.stringify(update.args.blocks)).toContain(`Approved* by Rita Slack (${rita.email})`);
    expect(JSON.stringify(update.args.blocks)).not.toContain(SlackAction.approve);

    await run.commitPlan(pivotId);
    const orderId = (post.args.text as string).match(/Ticket in Slack (\w+)/)?.[1];
    expect(getHostedWorld().ledger.effects({ op: "ticketing.create" }).filter((x) => (x.args as { orderId?: string }).orderId === `S-${orderId}`)).toHaveLength(1);

    // The same signed request again (inside its 300 s): nothing decided twice; Rita is told, in private.
    const ephemeralBefore = slack.callsOf("chat.postEphemeral").length;
    expect((await send(slack.click(post, SlackAction.approve, "U0RITA"))).status).toBe(200);
    expect(slack.callsOf("chat.postEphemeral").slice(ephemeralBefore)).toEqual([expect.objectContaining({ args: expect.objectContaining({ user: "U0RITA", text: expect.stringContaining("already approved") }) })]);
  });

  it("a bad signature and a request older than 300 s get 401; an unknown Slack user gets an ephemeral refusal; nothing is decided, all audited", async () => {
    const { pivotId, post } = await postedPivot(`r${Date.now().toString(36)}`);
    const prisma = await getPrisma();
    const before = await prisma.auditEvent.count({ where: { scope: SLACK_SCOPE, type: "slack.request_refused" } });

    const forged = await send(slack.click(post, SlackAction.approve, "U0RITA", { secret: "not-the-signing-secret" }));
    expect(forged.status).toBe(401);
    expect(String(forged.json?.error)).toContain("signature does not match");
    const stale = await send(slack.click(post, SlackAction.approve, "U0RITA", { timestampSec: Math.floor(Date.now() / 1000) - 301 }));
    expect(stale.status).toBe(401);
    expect(String(stale.json?.error)).toContain("more than 300 s");
    const unsigned = new Request("http://localhost/api/slack/interactivity", { method: "POST", body: "payload=%7B%7D", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect((await send(unsigned)).status).toBe(401);
    expect(await prisma.auditEvent.count({ where: { scope: SLACK_SCOPE, type: "slack.request_refused" } })).toBe(before + 3);

    // A member of the workspace Sagaboard has no account for; and a viewer, who may not decide.
    slack.addUser("U0STRANGER", `stranger-${Date.now().toString(36)}@example.com`);
    const vic = await person("vic", "viewer");
    slack.addUser("U0VIC", vic.email);
    for (const [user, words] of [
      ["U0STRANGER", "Sagaboard has no enabled account"],
      ["U0VIC", "deciding pivots needs the reviewer or admin role"],
    ] as const) {
      const answer = await send(slack.click(post, SlackAction.approve, user));
      expect(answer.status).toBe(200);
      const told = slack.callsOf("chat.postEphemeral").at(-1)!;
      expect(told.args).toMatchObject({ channel: CHANNEL, user });
      expect(String(told.args.text)).toContain("Nothing was decided");
      expect(String(told.args.text)).toContain(words);
    }
    expect((await prisma.pivot.findUniqueOrThrow({ where: { id: pivotId } })).status).toBe("PENDING");
    const all = (await prisma.auditEvent.findMany({ where: { type: "slack.user_refused" } })).filter((e) => (e.data as { pivotId?: string }).pivotId === pivotId);
    expect(all.map((e) => (e.data as { slackUser: string }).slackUser).sort()).toEqual(["U0STRANGER", "U0VIC"]);
  });

  it("Reject asks for a reason in a modal; its submission rejects as the mapped person with that reason", async () => {
    const rob = await person("rob", "reviewer");
    slack.addUser("U0ROB", rob.email);
    const { pivotId, post } = await postedPivot(`j${Date.now().toString(36)}`);
    expect((await send(slack.click(post, SlackAction.reject, "U0ROB"))).status).toBe(200);
    const opened = slack.callsOf("views.open").at(-1)!;
    expect(opened.args.view).toMatchObject({ type: "modal", callback_id: SlackAction.rejectModal });
    const prisma = await getPrisma();
    expect((await prisma.pivot.findUniqueOrThrow({ where: { id: pivotId } })).status).toBe("PENDING");

    // An empty reason is answered in the modal itself.
    expect((await send(slack.submitModal(opened, "U0ROB", "  "))).json).toMatchObject({ response_action: "errors" });
    const submitted = await send(slack.submitModal(opened, "U0ROB", "The customer asked for store credit instead."));
    expect(submitted.json).toEqual({ response_action: "clear" });
    expect(await prisma.pivot.findUniqueOrThrow({ where: { id: pivotId } })).toMatchObject({ status: "REJECTED", decidedBy: rob.email, reason: "The customer asked for store credit instead." });
    expect(JSON.stringify(slack.callsOf("chat.update").at(-1)!.args.blocks)).toContain(`Rejected* by Rob Slack (${rob.email})`);
  });
});
