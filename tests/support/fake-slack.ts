/**
 * A local fake of Slack for the tests: the Web API methods Sagaboard calls (chat.postMessage,
 * chat.update, chat.postEphemeral, users.info, users.lookupByEmail, views.open) on 127.0.0.1 and a
 * free port, answering as Slack does (`{ ok, ... }`, form or JSON bodies, the bot token checked) and
 * recording every call; and the other direction, interactivity requests as Slack sends them: a form
 * body `payload=<JSON>`, signed with the app's signing secret exactly as Slack documents
 * (`X-Slack-Signature: v0=hex(HMAC-SHA256(secret, "v0:" + timestamp + ":" + body))`,
 * `X-Slack-Request-Timestamp`), built from the buttons of a message that was really posted.
 */
import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One Web API call as the fake received it. */
export interface SlackCall {
  method: string;
  args: Record<string, unknown>;
  /** What the fake answered (chat.postMessage: the message's ts). */
  answer?: Record<string, unknown>;
}

/** A running fake. */
export interface FakeSlack {
  /** SAGABOARD_SLACK_API_URL. */
  apiUrl: string;
  botToken: string;
  signingSecret: string;
  /** Every call, oldest first. */
  calls: SlackCall[];
  /** The calls of one method. */
  callsOf(method: string): SlackCall[];
  /** A workspace member (users.info and users.lookupByEmail know them). */
  addUser(id: string, email: string | null): void;
  /** The signed interactivity request of `userId` clicking `actionId` on the posted message `posted` (a chat.postMessage call). */
  click(posted: SlackCall, actionId: string, userId: string, options?: SignOptions): Request;
  /** The signed view_submission of the reject modal that views.open call `opened` showed, with `reason`. */
  submitModal(opened: SlackCall, userId: string, reason: string, options?: SignOptions): Request;
  /** A signed interactivity request with any payload. */
  interaction(payload: unknown, options?: SignOptions): Request;
  close(): Promise<void>;
}

/** How a request is signed: the timestamp (default now), another secret (a forgery). */
export interface SignOptions {
  timestampSec?: number;
  secret?: string;
  /** Where it is sent (default the route's path on localhost). */
  url?: string;
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if ((req.headers["content-type"] ?? "").includes("application/json")) return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  // Form bodies: the client sends nested values (blocks, view) as JSON strings.
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    try {
      out[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
    } catch {
      out[key] = value;
    }
  }
  return out;
}

/** Starts the fake. */
export async function startFakeSlack(): Promise<FakeSlack> {
  const botToken = `xoxb-test-${Math.random().toString(36).slice(2)}`;
  const signingSecret = `signing-${Math.random().toString(36).slice(2)}`;
  const calls: SlackCall[] = [];
  const users = new Map<string, string | null>();
  let ts = 1_700_000_000;

  const server: Server = createServer((req, res) => {
    void (async () => {
      const method = (req.url ?? "").replace(/^\/api\//, "").split("?")[0] ?? "";
      const args = await bodyOf(req);
      const reply = (body: Record<string, unknown>) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (req.headers.authorization !== `Bearer ${botToken}`) return reply({ ok: false, error: "invalid_auth" });
      const call: SlackCall = { method, args };
      calls.push(call);
      switch (method) {
        case "chat.postMessage":
          call.answer = { ok: true, channel: args.channel, ts: `${++ts}.000100`, message: { text: args.text, blocks: args.blocks } };
          return reply(call.answer);
        case "chat.update":
          return reply({ ok: true, channel: args.channel, ts: args.ts });
        case "chat.postEphemeral":
          return reply({ ok: true, message_ts: `${++ts}.000200` });
        case "users.info": {
          const id = String(args.user ?? "");
          return users.has(id) ? reply({ ok: true, user: { id, profile: users.get(id) ? { email: users.get(id) } : {} } }) : reply({ ok: false, error: "user_not_found" });
        }
        case "users.lookupByEmail": {
          const found = [...users].find(([, email]) => email === args.email);
          return found ? reply({ ok: true, user: { id: found[0] } }) : reply({ ok: false, error: "users_not_found" });
        }
        case "views.open":
          return reply({ ok: true, view: { id: `V${++ts}` } });
        default:
          return reply({ ok: false, error: "unknown_method" });
      }
    })().catch((e: unknown) => res.writeHead(500).end(String(e)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;

  function interaction(payload: unknown, options: SignOptions = {}): Request {
    const timestamp = String(options.timestampSec ?? Math.floor(Date.now() / 1000));
    const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const signature = `v0=${createHmac("sha256", options.secret ?? signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
    return new Request(options.url ?? "http://localhost/api/slack/interactivity", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": timestamp, "x-slack-signature": signature, "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)" },
      body,
    });
  }

  return {
    apiUrl,
    botToken,
    signingSecret,
    calls,
    callsOf: (method) => calls.filter((c) => c.method === method),
    addUser: (id, email) => users.set(id, email),
    interaction,
    click(posted, actionId, userId, options) {
      const blocks = posted.args.blocks as { type: string; block_id?: string; elements?: { action_id: string; value: string }[] }[];
      const actions = blocks.find((b) => b.type === "actions");
      const button = actions?.elements?.find((e) => e.action_id === actionId);
      if (!actions || !button) throw new Error(`the posted message has no ${actionId} button`);
      const channel = String(posted.args.channel);
      const messageTs = String(posted.answer?.ts ?? "");
      return interaction(
        {
          type: "block_actions",
          user: { id: userId, username: userId.toLowerCase(), team_id: "T0001" },
          api_app_id: "A0001",
          token: "deprecated-verification-token",
          container: { type: "message", message_ts: messageTs, channel_id: channel, is_ephemeral: false },
          trigger_id: `trigger-${userId}-${Date.now()}`,
          team: { id: "T0001", domain: "sagaboard-test" },
          channel: { id: channel, name: "approvals" },
          message: { type: "message", ts: messageTs, text: posted.args.text, blocks },
          response_url: `${apiUrl}response/${messageTs}`,
          actions: [{ type: "button", action_id: actionId, block_id: actions.block_id, value: button.value, action_ts: `${Date.now() / 1000}` }],
        },
        options,
      );
    },
    submitModal(opened, userId, reason, options) {
      const view = opened.args.view as { callback_id: string; private_metadata: string };
      return interaction(
        {
          type: "view_submission",
          user: { id: userId, team_id: "T0001" },
          api_app_id: "A0001",
          team: { id: "T0001" },
          view: { id: "V0001", type: "modal", callback_id: view.callback_id, private_metadata: view.private_metadata, state: { values: { reason: { reason: { type: "plain_text_input", value: reason } } } } },
        },
        options,
      );
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
