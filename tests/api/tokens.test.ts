/**
 * Agent tokens: created once with a secret shown once and stored hashed, scoped to tools, refused
 * (401) the very next request after revocation; and the `npm run token` CLI.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { agentRoute } from "@/lib/delivery/route";
import { hashTokenSecret } from "@/lib/server/tokens/agent-token";
import { assertToolInScope } from "@/lib/server/agent-api/agent-access";
import { authenticateAgent, authenticateAgentForGuardedWrite } from "@/lib/server/tokens/authenticate-agent";
import { getDefaultTokenLifetime, setDefaultTokenLifetime } from "@/lib/server/tokens/token-lifetime";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { findAgentTokens } from "@/lib/server/tokens/find-agent-tokens";
import { revokeAgentToken } from "@/lib/server/tokens/revoke-agent-token";
import { addSupportTools, call, makeToken, useTestDatabase } from "./api-test-kit";

const prisma = useTestDatabase("tokens");

// A token's tools must be in the tool table: these tests scope tokens to the support tools.
beforeAll(addSupportTools);

const whoAmI = defineEndpoint({
  method: "GET",
  path: "/api/v1/test/whoami",
  summary: "test only",
  auth: "agent",
  response: z.object({ name: z.string(), tools: z.array(z.string()) }),
});
let handlerCalls = 0;
const GET = agentRoute(whoAmI, ({ principal }) => {
  handlerCalls++;
  return { name: principal.name, tools: principal.tools };
});

const useTool = defineEndpoint({
  method: "POST",
  path: "/api/v1/test/tools/:tool",
  summary: "test only",
  auth: "agent",
  params: z.object({ tool: z.string() }),
  response: z.object({ ok: z.boolean() }),
});
const POST = agentRoute(useTool, ({ principal, params }) => {
  assertToolInScope(principal, params.tool);
  return { ok: true };
});

async function expect401(headers: Record<string, string>): Promise<string> {
  const before = handlerCalls;
  const res = await call(GET, "/api/v1/test/whoami", { headers });
  expect(res.status).toBe(401);
  expect(res.json.error.code).toBe("UNAUTHORIZED");
  expect(res.json.error.details).toEqual([]);
  expect(handlerCalls).toBe(before);
  return res.json.error.message as string;
}

describe("createAgentToken", () => {
  it("returns a sgb_ secret once and stores only its sha256 and first 8 characters", async () => {
    const { token, secret } = await createAgentToken(await prisma(), {
      name: "support-agent",
      tools: ["send_email", "charge_card", "charge_card"],
      createdBy: "admin@example.com",
    });
    expect(secret).toMatch(/^sgb_[A-Za-z0-9_-]{43}$/);
    expect(token).toMatchObject({ name: "support-agent", tools: ["charge_card", "send_email"], prefix: secret.slice(0, 8) });
    expect(token.id).toMatch(/^tok_/);
    expect(token).not.toHaveProperty("tokenHash");

    const row = await (await prisma()).agentToken.findUniqueOrThrow({ where: { id: token.id } });
    expect(row.tokenHash).toBe(hashTokenSecret(secret));
    expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(secret);

    const audit = await (await prisma()).auditEvent.findMany({ where: { scope: `agent-token:${token.id}` } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ type: "agent_token.created", actor: "user:admin@example.com" });
    expect(JSON.stringify(audit[0]?.data)).not.toContain(secret);
  });

  it("makes a different secret every time", async () => {
    const a = await makeToken();
    const b = await makeToken();
    expect(a.secret).not.toBe(b.secret);
  });

  it("refuses a taken name with a CONFLICT that says so", async () => {
    await makeToken(["charge_card"], "dup-agent");
    const error = await createAgentToken(await prisma(), { name: "dup-agent", tools: ["send_email"], createdBy: "a" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "CONFLICT", httpStatus: 409 });
    expect((error as ApiError).message).toContain('"dup-agent" already exists');
  });

  it("refuses tools the tool table does not have, naming each, and stores nothing", async () => {
    const db = await prisma();
    const [tokensBefore, auditBefore] = [await db.agentToken.count(), await db.auditEvent.count()];
    const error = await createAgentToken(db, { name: "typo-agent", tools: ["charge_card", "my_tool", "chrage_card"], createdBy: "a" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "VALIDATION_FAILED", httpStatus: 400, details: [{ path: "tools", message: "not in the tool table: chrage_card, my_tool" }] });
    expect((error as ApiError).message).toContain('"chrage_card", "my_tool"');
    expect((error as ApiError).message).toContain("must add each tool to the tool table first (or declare it)");
    expect([await db.agentToken.count(), await db.auditEvent.count()]).toEqual([tokensBefore, auditBefore]);
  });

  it.each([
    [{ name: "Bad Name", tools: ["charge_card"], createdBy: "a" }, "name"],
    [{ name: "", tools: ["charge_card"], createdBy: "a" }, "name"],
    [{ name: "ok-name", tools: [], role: "worker" as const, createdBy: "a" }, "tools"],
    [{ name: "ok-name", tools: ["Charge Card"], createdBy: "a" }, "tools.0"],
    [{ name: "ok-name", tools: ["charge_card"], createdBy: " " }, "createdBy"],
  ])("validates the input: %j names %s", async (input, path) => {
    const error = await createAgentToken(await prisma(), input).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "VALIDATION_FAILED" });
    expect((error as ApiError).details.map((d) => d.path)).toContain(path);
  });
});

describe("authentication", () => {
  it("accepts a valid token and passes its principal to the handler", async () => {
    const { secret, name, id } = await makeToken(["charge_card", "capture_payment"]);
    const res = await call(GET, "/api/v1/test/whoami", { secret });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ name, tools: ["capture_payment", "charge_card"] });
    const principal = await authenticateAgent(await prisma(), `bearer ${secret}`);
    expect(principal).toEqual({ kind: "agent", tokenId: id, name, tools: ["capture_payment", "charge_card"], role: "agent", expiresAt: null });
    const row = await (await prisma()).agentToken.findUniqueOrThrow({ where: { id } });
    expect(row.lastUsedAt).not.toBeNull();
  });

  it("refuses missing, malformed and unknown tokens with distinct messages saying what is wrong", async () => {
    const { secret } = await makeToken();
    const missing = await expect401({});
    const basic = await expect401({ authorization: "Basic dXNlcjpwYXNz" });
    const bare = await expect401({ authorization: secret });
    const unknown = await expect401({ authorization: `Bearer ${secret}x` });
    const notOurs = await expect401({ authorization: "Bearer abc" });
    expect(missing).toMatch(/missing/i);
    expect(basic).toMatch(/not a Bearer token/);
    expect(bare).toBe(basic);
    expect(unknown).toMatch(/unknown/i);
    expect(notOurs).toBe(unknown);
    expect(new Set([missing, basic, unknown]).size).toBe(3);
    for (const message of [missing, basic, unknown]) expect(message).not.toContain(secret);
  });

  it("refuses a revoked token on the very next request with the one plain 401 an unknown token gets, naming nothing about the agent", async () => {
    const { secret, name } = await makeToken();
    expect((await call(GET, "/api/v1/test/whoami", { secret })).status).toBe(200);
    const unknown = await expect401({ authorization: `Bearer ${secret}x` });

    const { token, changed } = await revokeAgentToken(await prisma(), { name, revokedBy: "admin@example.com" });
    expect(changed).toBe(true);
    expect(token.revokedAt).toBeInstanceOf(Date);

    const message = await expect401({ authorization: `Bearer ${secret}` });
    expect(message).toBe(unknown);
    expect(message).toMatch(/not valid \(unknown, revoked or expired\)/);
    expect(message).not.toContain(name);
    expect(message).not.toContain(token.revokedAt!.toISOString());

    const again = await revokeAgentToken(await prisma(), { name, revokedBy: "admin@example.com" });
    expect(again.changed).toBe(false);
    expect(again.token.revokedAt).toEqual(token.revokedAt);
    const audit = await (await prisma()).auditEvent.findMany({ where: { scope: `agent-token:${token.id}` }, orderBy: { seq: "asc" } });
    expect(audit.map((a) => a.type)).toEqual(["agent_token.created", "agent_token.revoked"]);
    expect(audit[1]?.prevHash).toBe(audit[0]?.hash);
  });

  it("revoking an unknown name is NOT_FOUND", async () => {
    await expect(revokeAgentToken(await prisma(), { name: "nobody", revokedBy: "a" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("refuses a tool outside the token's scope with 403", async () => {
    const { secret } = await makeToken(["charge_card"]);
    const allowed = await call(POST, "/api/v1/test/tools/charge_card", { secret, method: "POST", params: { tool: "charge_card" } });
    expect(allowed.status).toBe(200);
    const refused = await call(POST, "/api/v1/test/tools/send_email", { secret, method: "POST", params: { tool: "send_email" } });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({ code: "FORBIDDEN", details: [{ path: "tool" }] });
    expect(refused.json.error.message).toContain('"send_email"');
  });
});

describe("findAgentTokens", () => {
  it("pages through tokens oldest first, with and without revoked ones", async () => {
    const names = [];
    for (let i = 0; i < 5; i++) names.push((await makeToken(["charge_card"], `page-${i}`)).name);
    await revokeAgentToken(await prisma(), { name: "page-2", revokedBy: "a" });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await findAgentTokens(await prisma(), { limit: 2, cursor });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((t) => t.name));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen.filter((n) => n.startsWith("page-"))).toEqual(names);
    const active = await findAgentTokens(await prisma(), { includeRevoked: false, limit: 500 });
    expect(active.items.map((t) => t.name)).not.toContain("page-2");
    expect(active.items.every((t) => !("tokenHash" in t))).toBe(true);
  });
});

describe("npm run token", () => {
  const exec = promisify(execFile);
  const cli = (...args: string[]) =>
    exec(process.execPath, ["--import", "tsx", "scripts/token.ts", ...args], { env: { ...process.env }, cwd: process.cwd() }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  it("creates (secret printed once), lists, revokes, and exits non-zero on bad input", async () => {
    const created = await cli("create", "--name", "cli-agent", "--tools", "charge_card, send_email", "--by", "ops@example.com");
    expect(created.code).toBe(0);
    const secret = /(sgb_[A-Za-z0-9_-]{43})/.exec(created.stdout)?.[1];
    expect(secret).toBeDefined();
    expect(created.stdout.split(secret ?? "").length - 1).toBe(1);
    expect(created.stdout).toMatch(/will not be shown again/);
    expect((await authenticateAgent(await prisma(), `Bearer ${secret}`)).tools).toEqual(["charge_card", "send_email"]);

    const listed = await cli("list");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/cli-agent\tsgb_.{4}\.\.\.\tactive/);
    expect(listed.stdout).not.toContain(secret);

    const revoked = await cli("revoke", "--name", "cli-agent");
    expect(revoked.code).toBe(0);
    await expect(authenticateAgent(await prisma(), `Bearer ${secret}`)).rejects.toThrow(/not valid/);

    const [bad, duplicate, usage, missing, unknownTool] = await Promise.all([
      cli("create", "--name", "Bad Name", "--tools", "charge_card"),
      cli("create", "--name", "cli-agent", "--tools", "charge_card"),
      cli("frobnicate"),
      cli("create", "--name", "x", "--role", "worker"),
      cli("create", "--name", "typo-cli-agent", "--tools", "charge_card,my_tool"),
    ]);
    expect(unknownTool.code).toBe(1);
    expect(unknownTool.stderr).toMatch(/tools: not in the tool table: my_tool/);
    expect(unknownTool.stderr).toMatch(/add each tool to the tool table first/);
    expect(await (await prisma()).agentToken.count({ where: { name: "typo-cli-agent" } })).toBe(0);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/name: /);
    expect(duplicate.code).not.toBe(0);
    expect(duplicate.stderr).toMatch(/already exists/);
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toMatch(/Unknown command "frobnicate"/);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/A worker token needs the tools/);

    // A team's bootstrap: an agent token for its namespace before its tools exist.
    const team = await cli("create", "--name", "team-x");
    expect(team.code, team.stderr).toBe(0);
    expect(team.stdout).toContain('for the team\'s namespace "team-x."');
    expect((await (await prisma()).agentToken.findUniqueOrThrow({ where: { name: "team-x" } })).tools).toEqual([]);
  }, 120_000); // eight command-line processes, each loading the server's modules

  it("gives tokens a lifetime: --expires-in, the default an admin sets with default-lifetime, and never", async () => {
    const db = await prisma();
    const lifetime = await cli("default-lifetime", "30d", "--by", "ops@example.com");
    expect(lifetime.code, lifetime.stderr).toBe(0);
    expect(lifetime.stdout).toMatch(/New tokens now expire after 2592000 s/);
    try {
      const byDefault = await cli("create", "--name", "cli-lives-30d", "--tools", "charge_card");
      const chosen = await cli("create", "--name", "cli-lives-12h", "--tools", "charge_card", "--expires-in", "12h");
      const forever = await cli("create", "--name", "cli-lives-forever", "--tools", "charge_card", "--expires-in", "never");
      const garbled = await cli("create", "--name", "cli-lives-garbled", "--tools", "charge_card", "--expires-in", "soon");
      for (const r of [byDefault, chosen, forever]) expect(r.code, r.stderr).toBe(0);
      expect(chosen.stdout).toMatch(/It expires at 20/);
      expect(forever.stdout).toMatch(/does not expire/);
      expect(garbled.code).not.toBe(0);
      expect(garbled.stderr).toMatch(/--expires-in must be a duration such as 90d, 12h or 2w, or "never" \(got "soon"\)/);
      const row = (name: string) => db.agentToken.findUniqueOrThrow({ where: { name } });
      const lives = async (name: string) => {
        const r = await row(name);
        return r.expiresAt ? Math.round((r.expiresAt.getTime() - r.createdAt.getTime()) / 1000) : null;
      };
      expect([await lives("cli-lives-30d"), await lives("cli-lives-12h"), await lives("cli-lives-forever")]).toEqual([30 * 86_400, 12 * 3_600, null]);
      expect(await db.agentToken.count({ where: { name: "cli-lives-garbled" } })).toBe(0);
      const listed = await cli("list");
      expect(listed.stdout).toMatch(/cli-lives-12h\tsgb_.{4}\.\.\.\tactive, expires 20/);
      const audit = await db.auditEvent.findMany({ where: { scope: "setting:agentTokens.defaultLifetimeSec" } });
      expect(audit.map((a) => [a.type, a.actor, (a.data as { to: unknown }).to])).toEqual([["setting.changed", "user:ops@example.com", 2_592_000]]);
    } finally {
      expect((await cli("default-lifetime", "never")).code).toBe(0);
    }
  }, 120_000);
});

describe("expiry", () => {
  it("an expired token gets the same plain 401 as an unknown or revoked one, on the very next request, even where this process remembered it", async () => {
    const db = await prisma();
    const { token, secret } = await createAgentToken(db, { name: `expiring-${Date.now()}`, tools: ["charge_card"], createdBy: "admin@example.com", expiresInSec: 3_600 });
    expect(token.expiresAt!.getTime() - token.createdAt.getTime()).toBe(3_600_000);
    expect((await call(GET, "/api/v1/test/whoami", { secret })).status).toBe(200);
    const unknown = await expect401({ authorization: `Bearer ${secret}x` });

    await db.agentToken.update({ where: { id: token.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const message = await expect401({ authorization: `Bearer ${secret}` });
    expect(message).toBe(unknown);
    expect(message).not.toContain(token.name);
    // A write that skips the token read when the token was read recently reads it again once it has expired.
    await expect(authenticateAgentForGuardedWrite(db, `Bearer ${secret}`)).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("a remembered principal past its expiry is read again (the guarded write path)", async () => {
    const db = await prisma();
    const { token, secret } = await createAgentToken(db, { name: `expiring-cached-${Date.now()}`, tools: ["charge_card"], createdBy: "a", expiresInSec: 60 });
    const fresh = await authenticateAgentForGuardedWrite(db, `Bearer ${secret}`);
    expect(fresh.principal.tokenId).toBe(token.id);
    const remembered = await authenticateAgentForGuardedWrite(db, `Bearer ${secret}`);
    expect(remembered.activeToken).toBe(token.id); // skipped the read: the process read it a moment ago
    await db.agentToken.update({ where: { id: token.id }, data: { expiresAt: new Date(Date.now() - 1) } });
    remembered.principal.expiresAt = new Date(Date.now() - 1); // what the remembered copy says once its time has come
    await expect(authenticateAgentForGuardedWrite(db, `Bearer ${secret}`)).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("the default lifetime applies to new tokens unless their creator picks one; an out-of-range lifetime is refused naming the field", async () => {
    const db = await prisma();
    await setDefaultTokenLifetime(db, { seconds: 7 * 86_400, actor: { type: "user", id: "admin@example.com" } });
    try {
      const byDefault = await createAgentToken(db, { name: `default-life-${Date.now()}`, tools: ["charge_card"], createdBy: "a" });
      const never = await createAgentToken(db, { name: `no-expiry-${Date.now()}`, tools: ["charge_card"], createdBy: "a", expiresInSec: null });
      expect(byDefault.token.expiresAt!.getTime() - byDefault.token.createdAt.getTime()).toBe(7 * 86_400_000);
      expect(never.token.expiresAt).toBeNull();
      expect(await getDefaultTokenLifetime(db)).toBe(7 * 86_400);
      const tooShort = await createAgentToken(db, { name: "short-lived", tools: ["charge_card"], createdBy: "a", expiresInSec: 5 }).catch((e: unknown) => e);
      expect(tooShort).toMatchObject({ code: "VALIDATION_FAILED", details: [{ path: "expiresInSec", message: "At least a minute (60 s)." }] });
      await expect(setDefaultTokenLifetime(db, { seconds: -1, actor: { type: "user", id: "a" } })).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
    } finally {
      await setDefaultTokenLifetime(db, { seconds: null, actor: { type: "user", id: "admin@example.com" } });
    }
  });
});
