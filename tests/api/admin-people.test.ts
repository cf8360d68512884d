/**
 * The admin desk's JSON routes for people and agent tokens (app/api/dashboard/admin/**), driven as
 * Next.js calls them, with the session read through runWithSessionReader and every row read back
 * from a real database: an admin's changes persist with an audit event each and apply on the next
 * request; reviewer, support and viewer are refused (403) by every one of them and change nothing;
 * bad input is answered 4xx naming the field and changes nothing; the last enabled admin stays.
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as tokensRoute from "@/app/api/dashboard/admin/tokens/route";
import * as revokeRoute from "@/app/api/dashboard/admin/tokens/revoke/route";
import * as usersRoute from "@/app/api/dashboard/admin/users/route";
import * as disableRoute from "@/app/api/dashboard/admin/users/disable/route";
import * as enableRoute from "@/app/api/dashboard/admin/users/enable/route";
import * as roleRoute from "@/app/api/dashboard/admin/users/role/route";
import * as agentToolsRoute from "@/app/api/v1/tools/route";
import type { RouteHandler } from "@/lib/delivery/route";
import { runWithSessionReader } from "@/lib/server/auth/current-user";
import { checkCredentials } from "@/lib/server/auth/options";
import type { Role } from "@/lib/server/auth/roles";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { World } from "@/lib/demo/sim";
import { hashTokenSecret, tokenScope } from "@/lib/server/tokens/agent-token";
import { createUser } from "@/lib/server/users/create-user";
import { userScope, type TUserView } from "@/lib/server/users/user";
import { addSupportTools, call, useTestDatabase, type CallResult } from "./api-test-kit";

const getPrisma = useTestDatabase("admin-people");
const seedBy = { type: "system" as const, id: "test" };
const SUPPORT_TOOLS = createSupportToolRegistry(new World())
  .list()
  .map((t) => t.name)
  .sort();

let seq = 0;
const people: Partial<Record<Role, TUserView>> = {};

async function seed(role: Role, email = `${role}-${++seq}@example.com`): Promise<TUserView> {
  return createUser(await getPrisma(), { email, name: `${role} ${seq}`, role, password: "a long enough password", by: seedBy });
}

function admin(): TUserView {
  if (!people.admin) throw new Error("seeded in beforeAll");
  return people.admin;
}

/** Calls `handler` as `user` (null: no session), same-origin, like the dashboard does. */
function as(user: TUserView | null, handler: RouteHandler, path: string, body?: unknown): Promise<CallResult> {
  return runWithSessionReader(
    async () => user?.id ?? null,
    () => call(handler, path, { method: body === undefined ? "GET" : "POST", body, headers: { origin: "http://localhost" } }),
  );
}

/** Everything these routes could change, to compare before and after a refused request. */
async function snapshot(): Promise<unknown> {
  const prisma = await getPrisma();
  return {
    users: await prisma.user.findMany({ orderBy: { id: "asc" }, select: { id: true, email: true, role: true, disabledAt: true, passwordHash: true, updatedAt: true } }),
    tokens: await prisma.agentToken.findMany({ orderBy: { id: "asc" }, select: { id: true, name: true, tools: true, role: true, revokedAt: true } }),
    audit: await prisma.auditEvent.count(),
  };
}

async function auditOf(scope: string) {
  const prisma = await getPrisma();
  return prisma.auditEvent.findMany({ where: { scope }, orderBy: { seq: "asc" } });
}

beforeAll(async () => {
  await addSupportTools();
  for (const role of ["admin", "reviewer", "support", "viewer"] as const) people[role] = await seed(role);
});

describe("users, as an admin", () => {
  it("lists every account without password hashes, and names the admin as `me`", async () => {
    const res = await as(admin(), usersRoute.GET, "/api/dashboard/admin/users");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store, no-transform");
    expect(res.json.me).toBe(admin().email);
    expect(res.json.items.map((u: { email: string }) => u.email)).toEqual(expect.arrayContaining(Object.values(people).map((u) => u.email)));
    expect(res.json.items[0]).toEqual(expect.objectContaining({ hasPassword: true, disabledAt: null }));
    expect(JSON.stringify(res.json)).not.toMatch(/passwordHash|\$2[aby]\$/);
  });

  it("creates an account with a server-made password, answered once and stored only as a bcrypt hash, with an audit event", async () => {
    const res = await as(admin(), usersRoute.POST, "/api/dashboard/admin/users", { email: "  Nia@Example.COM ", name: "Nia New", role: "support" });
    expect(res.status).toBe(201);
    const { user, initialPassword } = res.json as { user: { id: string; email: string; role: string }; initialPassword: string };
    expect(user).toMatchObject({ email: "nia@example.com", role: "support", hasPassword: true, disabledAt: null });
    expect(initialPassword).toMatch(/^[A-Za-z0-9_-]{24}$/);

    const prisma = await getPrisma();
    const row = await prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.passwordHash).toMatch(/^\$2[aby]\$10\$/);
    expect(JSON.stringify(row)).not.toContain(initialPassword);
    expect(await checkCredentials(prisma, "nia@example.com", initialPassword)).toEqual({ ok: true, userId: user.id });

    const events = await auditOf(userScope(user.id));
    expect(events.map((e) => [e.type, e.actor])).toEqual([["user.created", `user:${admin().email}`]]);
    expect(JSON.stringify(events[0]?.data)).not.toContain(initialPassword);

    // Never again: the list has the account, not the password.
    const list = await as(admin(), usersRoute.GET, "/api/dashboard/admin/users");
    expect(JSON.stringify(list.json)).toContain("nia@example.com");
    expect(JSON.stringify(list.json)).not.toContain(initialPassword);
    // A second account gets a different password.
    const other = await as(admin(), usersRoute.POST, "/api/dashboard/admin/users", { email: "nia2@example.com", name: "Nia Two", role: "viewer" });
    expect(other.json.initialPassword).not.toBe(initialPassword);
  });

  it("changes a role, disables and enables an account, each audited and in force on the person's next request", async () => {
    const target = await seed("viewer");
    const path = "/api/dashboard/admin/users";
    // As a viewer the person cannot open the desk...
    expect((await as(target, usersRoute.GET, path)).status).toBe(403);

    const promoted = await as(admin(), roleRoute.POST, `${path}/role`, { email: target.email.toUpperCase(), role: "admin" });
    expect(promoted.status).toBe(200);
    expect(promoted.json).toMatchObject({ changed: true, user: { email: target.email, role: "admin" } });
    // ...and on the next request as an admin they can.
    expect((await as(target, usersRoute.GET, path)).status).toBe(200);
    const again = await as(admin(), roleRoute.POST, `${path}/role`, { email: target.email, role: "admin" });
    expect(again.json.changed).toBe(false);

    const disabled = await as(admin(), disableRoute.POST, `${path}/disable`, { email: target.email });
    expect(disabled.status).toBe(200);
    expect(disabled.json).toMatchObject({ changed: true, user: { email: target.email } });
    expect(disabled.json.user.disabledAt).toEqual(expect.any(String));
    const prisma = await getPrisma();
    expect((await prisma.user.findUniqueOrThrow({ where: { id: target.id } })).disabledAt).toBeInstanceOf(Date);
    const refused = await as(target, usersRoute.GET, path);
    expect(refused.status).toBe(401);
    expect(refused.json.error.message).toMatch(/disabled/);
    expect(await checkCredentials(prisma, target.email, "a long enough password")).toEqual({ ok: false, reason: "disabled" });

    const enabled = await as(admin(), enableRoute.POST, `${path}/enable`, { email: target.email });
    expect(enabled.status).toBe(200);
    expect(enabled.json).toMatchObject({ changed: true, user: { email: target.email, role: "admin", disabledAt: null } });
    expect((await as(target, usersRoute.GET, path)).status).toBe(200);
    expect((await as(admin(), enableRoute.POST, `${path}/enable`, { email: target.email })).json.changed).toBe(false);

    const events = await auditOf(userScope(target.id));
    expect(events.map((e) => e.type)).toEqual(["user.created", "user.role_changed", "user.disabled", "user.enabled"]);
    expect(events.slice(1).every((e) => e.actor === `user:${admin().email}`)).toBe(true);
    expect(events[3]?.prevHash).toBe(events[2]?.hash);
  });

  it("answers 404 naming the field for an account or token that does not exist", async () => {
    for (const [handler, path, body, field] of [
      [roleRoute.POST, "users/role", { email: "ghost@example.com", role: "viewer" }, "email"],
      [disableRoute.POST, "users/disable", { email: "ghost@example.com" }, "email"],
      [enableRoute.POST, "users/enable", { email: "ghost@example.com" }, "email"],
      [revokeRoute.POST, "tokens/revoke", { name: "ghost-agent" }, "name"],
    ] as const) {
      const res = await as(admin(), handler, `/api/dashboard/admin/${path}`, body);
      expect(res.status, path).toBe(404);
      expect(res.json.error.details).toEqual([{ path: field, message: expect.stringMatching(/no such/) }]);
    }
  });
});

describe("tokens, as an admin", () => {
  it("lists tokens newest first with the tool table's names as the choices", async () => {
    const prisma = await getPrisma();
    const first = await as(admin(), tokensRoute.POST, "/api/dashboard/admin/tokens", { name: "older-agent", tools: ["search_orders"] });
    const second = await as(admin(), tokensRoute.POST, "/api/dashboard/admin/tokens", { name: "newer-agent", tools: ["search_orders"] });
    expect([first.status, second.status]).toEqual([201, 201]);
    const res = await as(admin(), tokensRoute.GET, "/api/dashboard/admin/tokens");
    expect(res.status).toBe(200);
    expect(res.json.tools).toEqual(SUPPORT_TOOLS);
    expect(res.json.tools).toEqual((await prisma.toolPolicy.findMany({ orderBy: { name: "asc" } })).map((t) => t.name));
    const names = res.json.items.map((t: { name: string }) => t.name);
    expect(names.indexOf("newer-agent")).toBeLessThan(names.indexOf("older-agent"));
    expect(JSON.stringify(res.json)).not.toMatch(/tokenHash|sgb_[A-Za-z0-9_-]{20,}/);
  });

  it("creates a token whose secret is answered once, stored as its sha256, audited, and usable by the agent until revoked", async () => {
    const res = await as(admin(), tokensRoute.POST, "/api/dashboard/admin/tokens", {
      name: "desk-agent",
      role: "agent",
      tools: ["send_email", "create_ticket", "send_email"],
    });
    expect(res.status).toBe(201);
    const { token, secret } = res.json as { token: { id: string; name: string; prefix: string }; secret: string };
    expect(token).toMatchObject({ name: "desk-agent", role: "agent", tools: ["create_ticket", "send_email"], createdBy: admin().email, revokedAt: null });
    expect(secret).toMatch(/^sgb_[A-Za-z0-9_-]{43}$/);
    expect(token.prefix).toBe(secret.slice(0, 8));

    const prisma = await getPrisma();
    const row = await prisma.agentToken.findUniqueOrThrow({ where: { id: token.id } });
    expect(row.tokenHash).toBe(hashTokenSecret(secret));
    expect(JSON.stringify(row)).not.toContain(secret);
    const created = await auditOf(tokenScope(token.id));
    expect(created.map((e) => [e.type, e.actor])).toEqual([["agent_token.created", `user:${admin().email}`]]);
    expect(JSON.stringify(created[0]?.data)).not.toContain(secret);

    // The agent uses it...
    const before = await call(agentToolsRoute.GET, "/api/v1/tools", { secret });
    expect(before.status).toBe(200);
    expect(before.json.tools.map((t: { name: string }) => t.name)).toEqual(["create_ticket", "send_email"]);
    expect(JSON.stringify((await as(admin(), tokensRoute.GET, "/api/dashboard/admin/tokens")).json)).not.toContain(secret);

    // ...until an admin revokes it: its next request gets 401.
    const revoked = await as(admin(), revokeRoute.POST, "/api/dashboard/admin/tokens/revoke", { name: "desk-agent" });
    expect(revoked.status).toBe(200);
    expect(revoked.json).toMatchObject({ changed: true, token: { name: "desk-agent", revokedAt: expect.any(String) } });
    expect((await prisma.agentToken.findUniqueOrThrow({ where: { id: token.id } })).revokedAt).toBeInstanceOf(Date);
    const after = await call(agentToolsRoute.GET, "/api/v1/tools", { secret });
    expect(after.status).toBe(401);
    expect(after.json.error.message).toMatch(/not valid \(unknown, revoked or expired\)/);
    const again = await as(admin(), revokeRoute.POST, "/api/dashboard/admin/tokens/revoke", { name: "desk-agent" });
    expect(again.json).toMatchObject({ changed: false, token: { revokedAt: revoked.json.token.revokedAt } });
    expect((await auditOf(tokenScope(token.id))).map((e) => [e.type, e.actor])).toEqual([
      ["agent_token.created", `user:${admin().email}`],
      ["agent_token.revoked", `user:${admin().email}`],
    ]);
  });

  it("creates a worker token when asked", async () => {
    const res = await as(admin(), tokensRoute.POST, "/api/dashboard/admin/tokens", { name: "desk-worker", role: "worker", tools: ["charge_card"] });
    expect(res.status).toBe(201);
    expect(res.json.token).toMatchObject({ role: "worker", tools: ["charge_card"] });
    expect((await (await getPrisma()).agentToken.findUniqueOrThrow({ where: { name: "desk-worker" } })).role).toBe("worker");
  });
});

describe("reviewer, support and viewer", () => {
  const cases = (target: () => TUserView) =>
    [
      ["GET users", usersRoute.GET, "/api/dashboard/admin/users", undefined],
      ["create a user", usersRoute.POST, "/api/dashboard/admin/users", { email: "sneaky@example.com", name: "Sneaky", role: "admin" }],
      ["change a role", roleRoute.POST, "/api/dashboard/admin/users/role", { email: target().email, role: "admin" }],
      ["disable", disableRoute.POST, "/api/dashboard/admin/users/disable", { email: admin().email }],
      ["enable", enableRoute.POST, "/api/dashboard/admin/users/enable", { email: admin().email }],
      ["GET tokens", tokensRoute.GET, "/api/dashboard/admin/tokens", undefined],
      ["create a token", tokensRoute.POST, "/api/dashboard/admin/tokens", { name: "sneaky-agent", tools: ["charge_card"] }],
      ["revoke", revokeRoute.POST, "/api/dashboard/admin/tokens/revoke", { name: "live-agent" }],
    ] as const;

  it.each(["reviewer", "support", "viewer"] as const)("%s gets 403 from every endpoint, and nothing changes", async (role) => {
    const prisma = await getPrisma();
    if (!(await prisma.agentToken.findUnique({ where: { name: "live-agent" } }))) {
      expect((await as(admin(), tokensRoute.POST, "/api/dashboard/admin/tokens", { name: "live-agent", tools: ["charge_card"] })).status).toBe(201);
    }
    const person = people[role];
    if (!person) throw new Error("seeded in beforeAll");
    const before = await snapshot();
    for (const [what, handler, path, body] of cases(() => person)) {
      const res = await as(person, handler, path, body);
      expect(res.status, `${role}: ${what}`).toBe(403);
      expect(res.json.error.code).toBe("FORBIDDEN");
      expect(res.json.error.message).toContain(`Your role (${role}) cannot manage`);
      expect(JSON.stringify(res.json)).not.toContain("@example.com");
    }
    expect(await snapshot()).toEqual(before);
  });

  it("without a session every endpoint answers 401, and a cross-site POST from an admin's browser 403", async () => {
    const before = await snapshot();
    for (const [what, handler, path, body] of cases(() => people.viewer!)) {
      expect((await as(null, handler, path, body)).status, what).toBe(401);
    }
    const forged = await runWithSessionReader(
      async () => admin().id,
      () => call(usersRoute.POST, "/api/dashboard/admin/users", { body: { email: "csrf@example.com", name: "Csrf", role: "admin" }, headers: { origin: "https://evil.example" } }),
    );
    expect(forged.status).toBe(403);
    expect(await snapshot()).toEqual(before);
  });
});

describe("bad input", () => {
  it.each([
    ["an unknown role", usersRoute.POST, "users", { email: "cy@example.com", name: "Cy", role: "root" }, "body.role"],
    ["a bad email", usersRoute.POST, "users", { email: "not-an-email", name: "Cy", role: "viewer" }, "body.email"],
    ["a blank name", usersRoute.POST, "users", { email: "cy@example.com", name: "  ", role: "viewer" }, "body.name"],
    ["an unknown role change", roleRoute.POST, "users/role", { email: "viewer-4@example.com", role: "superuser" }, "body.role"],
    ["a bad email to disable", disableRoute.POST, "users/disable", { email: "nobody" }, "body.email"],
    ["a bad token name", tokensRoute.POST, "tokens", { name: "Bad Name", tools: ["charge_card"] }, "body.name"],
    ["a worker token with no tools", tokensRoute.POST, "tokens", { name: "empty-worker", role: "worker", tools: [] }, "body.tools"],
    ["an unknown token role", tokensRoute.POST, "tokens", { name: "odd-agent", role: "root", tools: ["charge_card"] }, "body.role"],
  ] as const)("%s is answered 400 naming the field, and nothing changes", async (_what, handler, path, body, field) => {
    const before = await snapshot();
    const res = await as(admin(), handler, `/api/dashboard/admin/${path}`, body);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("VALIDATION_FAILED");
    expect(res.json.error.details.map((d: { path: string }) => d.path)).toContain(field);
    expect(await snapshot()).toEqual(before);
  });

  it("a token for tools the tool table does not have is answered 400 naming `tools` and each unknown name, and nothing is stored", async () => {
    const before = await snapshot();
    const res = await as(admin(), tokensRoute.POST, "/api/dashboard/admin/tokens", { name: "typo-agent", tools: ["charge_card", "my_tool", "refund_everything"] });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: "VALIDATION_FAILED", details: [{ path: "tools", message: "not in the tool table: my_tool, refund_everything" }] });
    expect(res.json.error.message).toContain('"my_tool", "refund_everything"');
    expect(res.json.error.message).toContain("An admin must add each tool to the tool table first (or declare it)");
    expect(await snapshot()).toEqual(before);
  });

  it("a taken email or token name is answered 409 naming it, and nothing changes", async () => {
    const before = await snapshot();
    const user = await as(admin(), usersRoute.POST, "/api/dashboard/admin/users", { email: admin().email.toUpperCase(), name: "Again", role: "viewer" });
    expect(user.status).toBe(409);
    expect(user.json.error.details).toEqual([{ path: "email", message: "already taken" }]);
    const token = await as(admin(), tokensRoute.POST, "/api/dashboard/admin/tokens", { name: "desk-agent", tools: ["charge_card"] });
    expect(token.status).toBe(409);
    expect(token.json.error.details).toEqual([{ path: "name", message: "already taken" }]);
    expect(await snapshot()).toEqual(before);
  });
});

describe("the last enabled admin", () => {
  it("cannot be demoted or disabled, says what to do instead, and nothing changes; with a second admin both work", async () => {
    const prisma = await getPrisma();
    // Leave exactly one enabled admin (tests above promoted others).
    await prisma.user.updateMany({ where: { role: "admin", id: { not: admin().id } }, data: { role: "viewer" } });
    const before = await snapshot();

    const demote = await as(admin(), roleRoute.POST, "/api/dashboard/admin/users/role", { email: admin().email, role: "reviewer" });
    expect(demote.status).toBe(422);
    expect(demote.json.error.code).toBe("INVALID_TRANSITION");
    expect(demote.json.error.message).toBe(`${admin().email} is the last enabled admin; make someone else an admin first, then change this role.`);
    const disable = await as(admin(), disableRoute.POST, "/api/dashboard/admin/users/disable", { email: admin().email });
    expect(disable.status).toBe(422);
    expect(disable.json.error.message).toMatch(/last enabled admin; make someone else an admin first, then disable this account/);
    expect(await snapshot()).toEqual(before);

    // Another admin first; then the first may step down.
    const second = await as(admin(), usersRoute.POST, "/api/dashboard/admin/users", { email: "second-admin@example.com", name: "Second", role: "admin" });
    expect(second.status).toBe(201);
    const stepDown = await as(admin(), roleRoute.POST, "/api/dashboard/admin/users/role", { email: admin().email, role: "reviewer" });
    expect(stepDown.json).toMatchObject({ changed: true, user: { role: "reviewer" } });
    // The next request of the former admin is refused by role.
    expect((await as(admin(), usersRoute.GET, "/api/dashboard/admin/users")).status).toBe(403);
    const lastOne = await prisma.user.findUniqueOrThrow({ where: { email: "second-admin@example.com" } });
    const refused = await runWithSessionReader(
      async () => lastOne.id,
      () => call(disableRoute.POST, "/api/dashboard/admin/users/disable", { body: { email: lastOne.email }, headers: { origin: "http://localhost" } }),
    );
    expect(refused.status).toBe(422);
  });
});
