/**
 * Agent tokens: created once with a secret shown once and stored hashed, scoped to tools, refused
 * (401) the very next request after revocation; and the `npm run token` CLI.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { defineEndpoint } from "@/lib/protocol/endpoint";
import { ApiError } from "@/lib/protocol/errors";
import { agentRoute } from "@/lib/delivery/route";
import { hashTokenSecret } from "@/lib/server/tokens/agent-token";
import { assertToolInScope } from "@/lib/server/agent-api/agent-access";
import { authenticateAgent } from "@/lib/server/tokens/authenticate-agent";
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
    expect(principal).toEqual({ kind: "agent", tokenId: id, name, tools: ["capture_payment", "charge_card"], role: "agent" });
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

  it("refuses a revoked token on the very next request, and says it was revoked", async () => {
    const { secret, name } = await makeToken();
    expect((await call(GET, "/api/v1/test/whoami", { secret })).status).toBe(200);

    const { token, changed } = await revokeAgentToken(await prisma(), { name, revokedBy: "admin@example.com" });
    expect(changed).toBe(true);
    expect(token.revokedAt).toBeInstanceOf(Date);

    const message = await expect401({ authorization: `Bearer ${secret}` });
    expect(message).toMatch(/revoked/);
    expect(message).toContain(name);

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
    await expect(authenticateAgent(await prisma(), `Bearer ${secret}`)).rejects.toThrow(/revoked/);

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
  });
});
