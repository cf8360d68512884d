/**
 * Accounts: created with a bcrypt hash (cost 10) and a lower-cased email, roles changed and accounts
 * disabled with an audit event each, never leaving no enabled admin; the password check behind the
 * sign-in form; the demo accounts; and the `npm run user` CLI.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { checkCredentials } from "@/lib/server/auth/options";
import { createUser } from "@/lib/server/users/create-user";
import { DEMO_PASSWORD, DEMO_USERS, ensureDemoUsers } from "@/lib/server/users/demo-users";
import { disableUser } from "@/lib/server/users/set-user-enabled";
import { findUsers } from "@/lib/server/users/find-users";
import { setUserRole } from "@/lib/server/users/set-user-role";
import { userScope } from "@/lib/server/users/user";
import { useTestDatabase } from "./api-test-kit";

const getPrisma = useTestDatabase("users");
const by = { type: "user" as const, id: "admin@example.com" };
const password = "a long enough password";

describe("createUser", () => {
  it("stores a lower-cased email and a bcrypt hash at cost 10, never the password, with an audit event", async () => {
    const prisma = await getPrisma();
    const user = await createUser(prisma, { email: "  Ana@Example.COM ", name: "Ana", role: "reviewer", password, by });
    expect(user).toMatchObject({ email: "ana@example.com", name: "Ana", role: "reviewer", hasPassword: true, disabledAt: null });
    expect(user.id).toMatch(/^usr_/);
    expect(user).not.toHaveProperty("passwordHash");
    const row = await prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.passwordHash).toMatch(/^\$2[aby]\$10\$/);
    expect(row.passwordHash).not.toContain(password);
    const events = await prisma.auditEvent.findMany({ where: { scope: userScope(user.id) } });
    expect(events.map((e) => [e.type, e.actor])).toEqual([["user.created", "user:admin@example.com"]]);
    expect(JSON.stringify(events[0]?.data)).not.toContain(password);
  });

  it("refuses a taken email (whatever its case), a short password and an unknown role, naming the field", async () => {
    const prisma = await getPrisma();
    await createUser(prisma, { email: "bo@example.com", name: "Bo", role: "viewer", password, by });
    await expect(createUser(prisma, { email: "BO@example.com", name: "Bo 2", role: "viewer", password, by })).rejects.toMatchObject({
      code: "CONFLICT",
      details: [{ path: "email", message: "already taken" }],
    });
    await expect(createUser(prisma, { email: "cy@example.com", name: "Cy", role: "viewer", password: "short", by })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
      details: [{ path: "password" }],
    });
    await expect(
      createUser(prisma, { email: "cy@example.com", name: "Cy", role: "root" as never, password, by }),
    ).rejects.toMatchObject({ code: "VALIDATION_FAILED", details: [{ path: "role" }] });
  });

  it("creates an SSO-only account without a password, which cannot sign in with one", async () => {
    const prisma = await getPrisma();
    const user = await createUser(prisma, { email: "sso@example.com", name: "Sso", role: "viewer", by });
    expect(user.hasPassword).toBe(false);
    expect(await checkCredentials(prisma, "sso@example.com", "")).toEqual({ ok: false, reason: "invalid" });
  });
});

describe("checkCredentials", () => {
  it("accepts the right password for any case of the email, and refuses a wrong one or an unknown email alike", async () => {
    const prisma = await getPrisma();
    const user = await createUser(prisma, { email: "dee@example.com", name: "Dee", role: "support", password, by });
    expect(await checkCredentials(prisma, " DEE@example.com", password)).toEqual({ ok: true, userId: user.id });
    expect(await checkCredentials(prisma, "dee@example.com", `${password}!`)).toEqual({ ok: false, reason: "invalid" });
    expect(await checkCredentials(prisma, "nobody@example.com", password)).toEqual({ ok: false, reason: "invalid" });
  });

  it("says disabled only after the password matched", async () => {
    const prisma = await getPrisma();
    await createUser(prisma, { email: "eve@example.com", name: "Eve", role: "viewer", password, by });
    await disableUser(prisma, { email: "eve@example.com", by });
    expect(await checkCredentials(prisma, "eve@example.com", password)).toEqual({ ok: false, reason: "disabled" });
    expect(await checkCredentials(prisma, "eve@example.com", "wrong password!!")).toEqual({ ok: false, reason: "invalid" });
  });
});

describe("setUserRole and disableUser", () => {
  it("change the row once, audit each change, and report repeats as unchanged", async () => {
    const prisma = await getPrisma();
    const user = await createUser(prisma, { email: "fay@example.com", name: "Fay", role: "viewer", password, by });
    expect((await setUserRole(prisma, { email: "FAY@example.com", role: "support", by })).changed).toBe(true);
    expect((await setUserRole(prisma, { email: "fay@example.com", role: "support", by })).changed).toBe(false);
    const disabled = await disableUser(prisma, { email: "fay@example.com", by });
    expect(disabled.changed).toBe(true);
    expect(disabled.user.disabledAt).toBeInstanceOf(Date);
    const again = await disableUser(prisma, { email: "fay@example.com", by });
    expect(again).toMatchObject({ changed: false, user: { disabledAt: disabled.user.disabledAt } });
    const events = await prisma.auditEvent.findMany({ where: { scope: userScope(user.id) }, orderBy: { seq: "asc" } });
    expect(events.map((e) => e.type)).toEqual(["user.created", "user.role_changed", "user.disabled"]);
  });

  it("answer NOT_FOUND for an unknown email", async () => {
    const prisma = await getPrisma();
    await expect(setUserRole(prisma, { email: "ghost@example.com", role: "viewer", by })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(disableUser(prisma, { email: "ghost@example.com", by })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("never leave no enabled admin, and roll the refused change back", async () => {
    const prisma = await getPrisma();
    await prisma.user.updateMany({ where: { role: "admin" }, data: { role: "viewer" } });
    await createUser(prisma, { email: "root@example.com", name: "Root", role: "admin", password, by });
    await expect(setUserRole(prisma, { email: "root@example.com", role: "reviewer", by })).rejects.toMatchObject({ code: "INVALID_TRANSITION" });
    await expect(disableUser(prisma, { email: "root@example.com", by })).rejects.toMatchObject({ code: "INVALID_TRANSITION" });
    expect(await prisma.user.findUniqueOrThrow({ where: { email: "root@example.com" } })).toMatchObject({ role: "admin", disabledAt: null });
    await createUser(prisma, { email: "root2@example.com", name: "Root 2", role: "admin", password, by });
    expect((await disableUser(prisma, { email: "root@example.com", by })).changed).toBe(true);
  });
});

describe("findUsers", () => {
  it("pages through every account by email without hashes, and can leave disabled ones out", async () => {
    const prisma = await getPrisma();
    const all = [];
    let cursor: string | undefined;
    do {
      const page = await findUsers(prisma, { limit: 2, cursor });
      all.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(all.length).toBe(await prisma.user.count());
    expect(all.map((u) => u.email)).toEqual([...all.map((u) => u.email)].sort());
    expect(all.every((u) => !("passwordHash" in u))).toBe(true);
    const enabled = await findUsers(prisma, { includeDisabled: false, limit: 500 });
    expect(enabled.items.length).toBe(await prisma.user.count({ where: { disabledAt: null } }));
  });
});

describe("ensureDemoUsers", () => {
  it("creates one account per role with the demo password once, and leaves existing ones alone", async () => {
    const prisma = await getPrisma();
    const first = await ensureDemoUsers(prisma);
    expect(first.map((o) => [o.email, o.role, o.created])).toEqual(DEMO_USERS.map((u) => [u.email, u.role, true]));
    for (const demo of DEMO_USERS) {
      const row = await prisma.user.findUniqueOrThrow({ where: { email: demo.email } });
      expect(row.role).toBe(demo.role);
      expect((await checkCredentials(prisma, demo.email, DEMO_PASSWORD)).ok).toBe(true);
    }
    await disableUser(prisma, { email: "viewer@sagaboard.local", by });
    const second = await ensureDemoUsers(prisma);
    expect(second.every((o) => !o.created)).toBe(true);
    expect((await prisma.user.findUniqueOrThrow({ where: { email: "viewer@sagaboard.local" } })).disabledAt).not.toBeNull();
  });
});

describe("npm run user", () => {
  const run = promisify(execFile);
  const cli = (...args: string[]) => run("npx", ["tsx", "scripts/user.ts", ...args], { env: process.env });

  it("creates, lists, changes the role of, disables and enables an account", async () => {
    const created = await cli("create", "--email", "Cli@Example.com", "--name", "Cli Person", "--role", "support", "--password", password);
    expect(created.stdout).toMatch(/Created support cli@example\.com \(usr_/);
    expect((await cli("set-role", "--email", "cli@example.com", "--role", "reviewer")).stdout).toMatch(/now reviewer/);
    expect((await cli("disable", "--email", "cli@example.com")).stdout).toMatch(/Disabled cli@example\.com/);
    const listed = await cli("list");
    expect(listed.stdout).toMatch(/cli@example\.com\treviewer\tdisabled /);
    const row = await (await getPrisma()).user.findUniqueOrThrow({ where: { email: "cli@example.com" } });
    expect(row).toMatchObject({ role: "reviewer", name: "Cli Person" });
    expect(row.disabledAt).not.toBeNull();
    expect((await cli("enable", "--email", "cli@example.com")).stdout).toMatch(/Enabled cli@example\.com: they can sign in again, as reviewer/);
    expect((await (await getPrisma()).user.findUniqueOrThrow({ where: { email: "cli@example.com" } })).disabledAt).toBeNull();
    expect((await cli("enable", "--email", "cli@example.com")).stdout).toMatch(/already enabled/);
    const events = await (await getPrisma()).auditEvent.findMany({ where: { scope: userScope(row.id) }, orderBy: { seq: "asc" } });
    expect(events.map((e) => e.type)).toEqual(["user.created", "user.role_changed", "user.disabled", "user.enabled"]);
  });

  it("explains a bad role with the usage and exit code 2", async () => {
    await expect(cli("create", "--email", "x@example.com", "--name", "X", "--role", "root")).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--role root is not a role\. Use one of: admin, reviewer, support, viewer\.[\s\S]*Usage:/),
    });
  });
});
