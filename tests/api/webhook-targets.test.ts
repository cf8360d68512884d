/**
 * Webhook targets cannot reach inside, on a real database (SQLite, or PostgreSQL with
 * SAGABOARD_TEST_PG=1): every non-public address class is refused when saved (through the admin
 * route) and again when sent (a name that resolved to a public address at save time and to 127.0.0.1
 * at send time, through an injected resolver stub); URLs with credentials are refused; redirects are
 * not followed; the delivery log keeps a status and a fixed line, never a byte of what the target
 * answered; every unreachable target reads the same; disable and delete work and are audited.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { LookupAddress } from "node:dns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as deleteRoute from "@/app/api/dashboard/admin/webhooks/delete/route";
import * as enabledRoute from "@/app/api/dashboard/admin/webhooks/enabled/route";
import * as webhooksRoute from "@/app/api/dashboard/admin/webhooks/route";
import { runWithSessionReader } from "@/lib/server/auth/current-user";
import { createWebhook } from "@/lib/server/notifications/create-webhook";
import { deliverNotifications } from "@/lib/server/notifications/deliver-notifications";
import { UNREACHABLE_ERROR } from "@/lib/server/notifications/post-webhook";
import ipaddr from "ipaddr.js";
import { embeddedIPv4, isPublicAddress, webhookTargetPolicy, type ResolveHost, type WebhookTargetPolicy } from "@/lib/server/notifications/webhook-target";
import { createUser } from "@/lib/server/users/create-user";
import { call, useTestDatabase, type CallResult } from "./api-test-kit";

const getPrisma = useTestDatabase("webhook-targets");
const SECRET_BODY = "db_password=hunter2-internal";
let adminId = "";

/** A resolver stub: names map to the addresses given (changeable mid-test); others do not resolve. */
function stubResolver(table: Record<string, string[]>): ResolveHost {
  return async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address): LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}
const dns: Record<string, string[]> = {
  "hooks.example.com": ["93.184.216.34"],
  "internal.example.com": ["127.0.0.1"],
  "mixed.example.com": ["93.184.216.34", "10.1.2.3"],
  "sagaboard.example.com": ["93.184.216.35"],
};
const strict = (): WebhookTargetPolicy => ({ ...webhookTargetPolicy({ NEXTAUTH_URL: "https://sagaboard.example.com", PORT: "3000" }, stubResolver(dns)) });
const devSwitch = (): WebhookTargetPolicy => ({ ...webhookTargetPolicy({ SAGABOARD_WEBHOOKS_ALLOW_PRIVATE: "1" }, stubResolver(dns)) });

/** A local receiver that leaks a secret in every answer and counts what it got. */
function receiver(answer: (hits: number) => { status: number; headers?: Record<string, string> } | "hang"): Promise<{ server: Server; url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    req.resume();
    const a = answer(hits);
    if (a === "hang") return;
    res.writeHead(a.status, { "content-type": "text/plain", ...a.headers }).end(SECRET_BODY);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits })));
}
const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r()))))));

let n = 0;
/** A webhook row and one delivery due now, as fan-out writes them. */
async function hookWithDelivery(url: string, policy: WebhookTargetPolicy): Promise<{ webhookId: string; deliveryId: string }> {
  const prisma = await getPrisma();
  const { webhook } = await createWebhook(prisma, { name: `t-${++n}-${Date.now()}`, url, topics: ["pivot_waiting"], createdBy: "admin@example.com", targetPolicy: policy });
  const now = new Date();
  const event = await prisma.notificationEvent.create({
    data: { id: `ntf_t${n}_${Date.now()}`, topic: "pivot_waiting", eventType: "pivot.requested", scope: `test:${n}-${Date.now()}`, seq: 1, runId: null, subjectId: null, data: {}, createdAt: now, status: "FANNED_OUT", fannedOutAt: now },
  });
  const delivery = await prisma.notificationDelivery.create({
    data: { id: `dlv_t${n}_${Date.now()}`, eventId: event.id, channel: "webhook", webhookId: webhook.id, target: webhook.id, status: "PENDING", nextAttemptAt: new Date(now.getTime() - 60_000), createdAt: now },
  });
  return { webhookId: webhook.id, deliveryId: delivery.id };
}

/** Sends what is due with `policy`, and returns the delivery's row. */
async function sendWith(deliveryId: string, policy: WebhookTargetPolicy, timeoutMs = 2_000) {
  const prisma = await getPrisma();
  await deliverNotifications(prisma, { notifierId: "t", baseUrl: "http://sagaboard.test", mailer: null, from: "x@example.com", targetPolicy: policy, timeoutMs, batch: 100 });
  return prisma.notificationDelivery.findUniqueOrThrow({ where: { id: deliveryId } });
}

const asAdmin = (handler: Parameters<typeof call>[0], path: string, body: unknown): Promise<CallResult> =>
  runWithSessionReader(async () => adminId, () => call(handler, path, { body, headers: { origin: "http://localhost" } }));

beforeAll(async () => {
  const prisma = await getPrisma();
  adminId = (await createUser(prisma, { email: `ada-hooks-${Date.now()}@example.com`, name: "Ada", role: "admin", password: "correct horse battery", by: { type: "system", id: "test" } })).id;
});

describe("when saved", () => {
  const REFUSED_LITERALS = [
    "http://127.0.0.1:5432/",
    "http://127.0.0.1:6379/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::1]/hook",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://0.0.0.0/",
    "http://10.0.0.5/",
    "http://172.16.3.4/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://[fe80::1]/",
    "http://[fd12:3456::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    // Every IPv6 form that embeds an IPv4 address, judged by the address it embeds.
    "http://[::127.0.0.1]:9/", // IPv4-compatible
    "http://[::169.254.169.254]:9/",
    "http://[::ffff:0:127.0.0.1]/", // SIIT (RFC 6145)
    "http://[64:ff9b::127.0.0.1]/", // NAT64 (RFC 6052)
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[64:ff9b:1::7f00:1]/", // NAT64 local-use: leads nowhere a check can see
    "http://[2002:7f00:1::1]/", // 6to4 (RFC 3056) of 127.0.0.1
    "http://[2002:a9fe:a9fe::1]/",
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", // Teredo whose client is 127.0.0.1 (bits inverted)
    "http://[2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7]/", // Teredo whose server is 169.254.169.254
    "http://localhost:3000/api/health",
  ];

  it("judges an IPv6 address that embeds an IPv4 one by the address it embeds (ipaddr.js ranges, not a list)", () => {
    const forms = ["::ffff:8.8.8.8", "::8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "2001:0:808:808:8000:63bf:f7f7:f7f7"];
    for (const address of forms) expect(isPublicAddress(address), address).toBe(true);
    for (const address of ["::7f00:1", "::a9fe:a9fe", "::ffff:0:a00:1", "64:ff9b::a00:1", "2002:c0a8:101::1", "2001:0:808:808:8000:63bf:3fff:fffe", "::", "::1"]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    expect(embeddedIPv4(ipaddr.parse("2001:0:4136:e378:8000:63bf:80ff:fffe") as ipaddr.IPv6).map(String)).toEqual(["65.54.227.120", "127.0.0.1"]);
  });

  it("the admin route refuses every non-public address class and the app itself, with one fixed reason, and stores nothing", async () => {
    // The route reads the environment: the development switch off, as in production.
    const before = process.env.SAGABOARD_WEBHOOKS_ALLOW_PRIVATE;
    process.env.SAGABOARD_WEBHOOKS_ALLOW_PRIVATE = "0";
    try {
      const prisma = await getPrisma();
      const messages = new Set<string>();
      for (const url of REFUSED_LITERALS) {
        const answer = await asAdmin(webhooksRoute.POST, "/api/dashboard/admin/webhooks", { name: `bad-${++n}`, url, topics: ["pivot_waiting"] });
        expect(answer.status, url).toBe(400);
        expect(answer.json.error.details, url).toEqual([{ path: "url", message: expect.any(String) }]);
        messages.add(answer.json.error.message as string);
      }
      // The same words for 127.0.0.1:5432 and :6379, and for the metadata address: no port scanner.
      expect([...messages].filter((m) => m.includes("not a public one"))).toHaveLength(1);
      const credentials = await asAdmin(webhooksRoute.POST, "/api/dashboard/admin/webhooks", { name: `bad-${++n}`, url: "https://user:pass@hooks.example.com/x", topics: ["pivot_waiting"] });
      expect(credentials.status).toBe(400);
      expect(credentials.json.error.message).toContain("remove the user name and password");
      expect(await prisma.webhook.count({ where: { name: { startsWith: "bad-" } } })).toBe(0);
    } finally {
      process.env.SAGABOARD_WEBHOOKS_ALLOW_PRIVATE = before;
    }
  });

  it("a name is judged by every address it resolves to (a local resolver stub): 127.0.0.1 behind a name, one private address among public ones, the app's own host", async () => {
    const prisma = await getPrisma();
    const save = (url: string) => createWebhook(prisma, { name: `dns-${++n}`, url, topics: ["pivot_waiting"], createdBy: "a@example.com", targetPolicy: strict() });
    await expect(save("http://internal.example.com:8080/hook")).rejects.toMatchObject({ code: "VALIDATION_FAILED", message: expect.stringContaining("not a public one") });
    await expect(save("https://mixed.example.com/hook")).rejects.toMatchObject({ code: "VALIDATION_FAILED", message: expect.stringContaining("not a public one") });
    await expect(save("https://sagaboard.example.com/api/v1/runs")).rejects.toMatchObject({ code: "VALIDATION_FAILED", message: expect.stringContaining("Sagaboard itself") });
    await expect(save("https://nowhere.invalid/hook")).rejects.toMatchObject({ code: "VALIDATION_FAILED", message: expect.stringContaining("does not resolve") });
    const ok = await save("https://hooks.example.com/sagaboard");
    expect(ok.webhook.url).toBe("https://hooks.example.com/sagaboard");
    // The development switch lets a local receiver through, never credentials.
    const dev = devSwitch();
    await expect(createWebhook(prisma, { name: `dev-${++n}`, url: "http://127.0.0.1:9/hook", topics: ["pivot_waiting"], createdBy: "a@example.com", targetPolicy: dev })).resolves.toBeTruthy();
    await expect(createWebhook(prisma, { name: `dev-${++n}`, url: "http://u:p@127.0.0.1:9/hook", topics: ["pivot_waiting"], createdBy: "a@example.com", targetPolicy: dev })).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
  });
});

describe("when sent", () => {
  it("a name that resolved to a public address when saved and to 127.0.0.1 when sent is refused: the internal service never sees a request, and the log holds 0 of its bytes", async () => {
    const inside = await receiver(() => ({ status: 200 }));
    servers.push(inside.server);
    const port = new URL(inside.url).port;
    dns["rebind.example.com"] = ["93.184.216.36"];
    const { deliveryId } = await hookWithDelivery(`http://rebind.example.com:${port}/hook`, strict());
    dns["rebind.example.com"] = ["127.0.0.1"];
    const row = await sendWith(deliveryId, strict());
    expect(inside.hits()).toBe(0);
    expect(row).toMatchObject({ status: "PENDING", attempts: 1, lastStatusCode: null });
    expect(row.lastError).toContain("not a public one");
    expect(row.lastError).not.toContain("127.0.0.1");
  });

  it("a literal address saved under the development switch is refused at send without it", async () => {
    const inside = await receiver(() => ({ status: 200 }));
    servers.push(inside.server);
    const { deliveryId } = await hookWithDelivery(`${inside.url}/hook`, devSwitch());
    const row = await sendWith(deliveryId, strict());
    expect(inside.hits()).toBe(0);
    expect(row.lastError).toContain("not a public one");
  });

  it("keeps the status and a fixed line, never the target's body; redirects are not followed", async () => {
    const elsewhere = await receiver(() => ({ status: 200 }));
    const failing = await receiver(() => ({ status: 500 }));
    const redirecting = await receiver(() => ({ status: 302, headers: { location: `${elsewhere.url}/metadata` } }));
    servers.push(elsewhere.server, failing.server, redirecting.server);
    const a = await hookWithDelivery(`${failing.url}/hook`, devSwitch());
    const b = await hookWithDelivery(`${redirecting.url}/hook`, devSwitch());
    const [rowA, rowB] = [await sendWith(a.deliveryId, devSwitch()), await sendWith(b.deliveryId, devSwitch())];
    expect(rowA).toMatchObject({ lastStatusCode: 500, lastError: "the receiver answered HTTP 500" });
    expect(rowB).toMatchObject({ lastStatusCode: 302, lastError: "the receiver answered HTTP 302 (redirects are not followed)" });
    expect(elsewhere.hits()).toBe(0);
    const prisma = await getPrisma();
    const log = JSON.stringify(await prisma.notificationDelivery.findMany({ select: { lastError: true } }));
    expect(log).not.toContain("hunter2");
    expect(log).not.toContain("db_password");
  });

  it("every unreachable target reads the same: a closed port, a target that never answers, a name that stopped resolving", async () => {
    const closed = await receiver(() => ({ status: 200 }));
    const closedUrl = closed.url;
    await new Promise<void>((r) => closed.server.close(() => r()));
    const hanging = await receiver(() => "hang");
    servers.push(hanging.server);
    dns["gone.example.com"] = ["127.0.0.1"];
    const targets = [await hookWithDelivery(`${closedUrl}/hook`, devSwitch()), await hookWithDelivery(`${hanging.url}/hook`, devSwitch()), await hookWithDelivery("http://gone.example.com:9/hook", devSwitch())];
    delete dns["gone.example.com"];
    const rows = [];
    for (const t of targets) rows.push(await sendWith(t.deliveryId, devSwitch(), 300));
    expect(rows.map((r) => [r.lastStatusCode, r.lastError])).toEqual([
      [null, UNREACHABLE_ERROR],
      [null, UNREACHABLE_ERROR],
      [null, UNREACHABLE_ERROR],
    ]);
  });
});

describe("disable and delete", () => {
  it("an admin disables a hook (its delivery is not sent), enables it, then deletes it (waiting deliveries given up); each change is on the hook's audit chain", async () => {
    const prisma = await getPrisma();
    const target = await receiver(() => ({ status: 200 }));
    servers.push(target.server);
    const { webhookId, deliveryId } = await hookWithDelivery(`${target.url}/hook`, devSwitch());

    const off = await asAdmin(enabledRoute.POST, "/api/dashboard/admin/webhooks/enabled", { webhookId, enabled: false });
    expect(off.status).toBe(200);
    expect(off.json.enabled).toBe(false);
    const again = await asAdmin(enabledRoute.POST, "/api/dashboard/admin/webhooks/enabled", { webhookId, enabled: false });
    expect(again.status).toBe(200);
    const row = await sendWith(deliveryId, devSwitch());
    expect(target.hits()).toBe(0);
    expect(row.lastError).toContain("disabled");

    expect((await asAdmin(enabledRoute.POST, "/api/dashboard/admin/webhooks/enabled", { webhookId, enabled: true })).json.enabled).toBe(true);
    const deleted = await asAdmin(deleteRoute.POST, "/api/dashboard/admin/webhooks/delete", { webhookId });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toMatchObject({ webhookId, cancelledDeliveries: 1 });
    expect(await prisma.webhook.findUnique({ where: { id: webhookId } })).toBeNull();
    expect(await prisma.notificationDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).toMatchObject({ status: "FAILED", lastError: "the webhook was deleted", webhookId: null });
    expect((await asAdmin(deleteRoute.POST, "/api/dashboard/admin/webhooks/delete", { webhookId })).status).toBe(404);

    const events = await prisma.auditEvent.findMany({ where: { scope: `webhook:${webhookId}` }, orderBy: { seq: "asc" } });
    expect(events.map((e) => e.type)).toEqual(["webhook.created", "webhook.disabled", "webhook.enabled", "webhook.deleted"]);
    expect(events.slice(1).every((e) => e.actor.startsWith("user:"))).toBe(true);
  });
});
