/**
 * Identity on a real database (SQLite, or PostgreSQL with SAGABOARD_TEST_PG=1): single sign-on's
 * sign-in decision (roles from the groups claim through the mapping an admin keeps, read again at
 * every sign-in; a person in no mapped group refused; the break-glass account), and SCIM 2.0
 * provisioning through the route handlers an identity provider calls: create, group membership,
 * active=false and delete end the person's sessions at once, every change and refusal audited.
 */
import { describe, expect, it } from "vitest";
import * as userRoute from "@/app/scim/v2/Users/[id]/route";
import * as usersRoute from "@/app/scim/v2/Users/route";
import * as groupRoute from "@/app/scim/v2/Groups/[id]/route";
import * as groupsRoute from "@/app/scim/v2/Groups/route";
import { checkCredentials } from "@/lib/server/auth/options";
import { readSessionState } from "@/lib/server/auth/current-user";
import { startUserSession } from "@/lib/server/auth/user-sessions";
import { createUser } from "@/lib/server/users/create-user";
import { admitSsoPerson } from "@/lib/server/sso/admit-sso-person";
import { saveGroupRoles } from "@/lib/server/sso/save-group-roles";
import { setBreakGlass } from "@/lib/server/sso/set-break-glass";
import { createScimToken, revokeScimToken } from "@/lib/server/scim/scim-token";
import { SSO_SCOPE, SCIM_SCOPE } from "@/lib/server/sso/sso-audit";
import { call, useTestDatabase } from "./api-test-kit";

const getPrisma = useTestDatabase("identity");
const admin = { type: "user" as const, id: "admin@example.com" };
let n = 0;
const tag = () => `${Date.now().toString(36)}${++n}`;
const state = (userId: string, sessionId: string) => readSessionState({ readSession: async () => ({ userId, sessionId }) });
const profile = (email: string, groups: string[]) => ({ email, emailVerified: true, name: "Sam Person", subject: `sub-${email}`, groups });

async function scimToken(): Promise<string> {
  return (await createScimToken(await getPrisma(), { name: `idp-${tag()}`, by: admin })).secret;
}

describe("single sign-on: roles from groups", () => {
  it("gives the role of the most powerful mapped group, re-reads the groups at every sign-in, and refuses a person in no mapped group", async () => {
    const prisma = await getPrisma();
    const t = tag();
    await saveGroupRoles(prisma, { mapping: [{ group: `reviewers-${t}`, role: "reviewer" }, { group: `admins-${t}`, role: "admin" }, { group: `support-${t}`, role: "support" }], by: admin });
    const email = `sam-${t}@example.com`;
    const first = await admitSsoPerson(prisma, profile(email, [`support-${t}`, `reviewers-${t}`, "everyone"]));
    expect(first).toMatchObject({ ok: true, role: "reviewer" });
    const row = await prisma.user.findUniqueOrThrow({ where: { email } });
    expect(row).toMatchObject({ role: "reviewer", source: "sso", passwordHash: null });

    // Next sign-in: the provider moved Sam to support only; the role follows, and open sessions end.
    const session = await startUserSession(prisma, row.id, "sso");
    expect(await admitSsoPerson(prisma, profile(email, [`support-${t}`]))).toMatchObject({ ok: true, role: "support" });
    expect((await state(row.id, session)).kind).toBe("signed-out");
    expect(await prisma.userSession.findUniqueOrThrow({ where: { id: session } })).toMatchObject({ endReason: "groups_changed" });

    // No mapped group: refused with the reason and the groups the provider sent, and audited.
    const stranger = `stranger-${t}@example.com`;
    const refused = await admitSsoPerson(prisma, profile(stranger, ["everyone", "contractors"]));
    expect(refused).toMatchObject({ ok: false, refusal: { reason: "no_mapped_group", email: stranger, groups: ["everyone", "contractors"] } });
    expect(await prisma.user.findUnique({ where: { email: stranger } })).toBeNull();
    const events = await prisma.auditEvent.findMany({ where: { scope: SSO_SCOPE, type: "sso.refused" } });
    expect(events.map((e) => e.data)).toContainEqual(expect.objectContaining({ reason: "no_mapped_group", email: stranger }));

    // Sam loses every mapped group: refused, the account disabled "no_mapped_group"; a mapped group brings it back.
    expect(await admitSsoPerson(prisma, profile(email, ["everyone"]))).toMatchObject({ ok: false, refusal: { reason: "no_mapped_group" } });
    expect(await prisma.user.findUniqueOrThrow({ where: { email } })).toMatchObject({ disabledReason: "no_mapped_group" });
    expect(await admitSsoPerson(prisma, profile(email, [`admins-${t}`]))).toMatchObject({ ok: true, role: "admin" });

    // An unverified email is refused before anything is read or written.
    expect(await admitSsoPerson(prisma, { ...profile(`x-${t}@example.com`, [`admins-${t}`]), emailVerified: false })).toMatchObject({ ok: false, refusal: { reason: "no_email" } });
  });

  it("keeps one local break-glass admin on its password while SSO is on; everyone else must use SSO", async () => {
    const prisma = await getPrisma();
    const t = tag();
    const glass = await createUser(prisma, { email: `glass-${t}@example.com`, name: "Glass", role: "admin", password: "a long break glass password", by: admin });
    const local = await createUser(prisma, { email: `local-${t}@example.com`, name: "Local", role: "reviewer", password: "a long local password 1", by: admin });
    await setBreakGlass(prisma, { email: glass.email, breakGlass: true, by: admin });
    const saved = { ...process.env };
    Object.assign(process.env, { OIDC_ISSUER: "https://id.example.com", OIDC_CLIENT_ID: "sagaboard", OIDC_CLIENT_SECRET: "secret" });
    try {
      expect(await checkCredentials(prisma, glass.email, "a long break glass password")).toEqual({ ok: true, userId: glass.id });
      expect(await checkCredentials(prisma, local.email, "a long local password 1")).toEqual({ ok: false, reason: "sso_required" });
      expect(await checkCredentials(prisma, local.email, "wrong password here")).toEqual({ ok: false, reason: "invalid" });
    } finally {
      process.env = saved;
    }
    // One at most, naming the first; SSO with the break-glass email is refused (it signs in with its password).
    const second = await createUser(prisma, { email: `glass2-${t}@example.com`, name: "Glass 2", role: "admin", password: "another long password", by: admin });
    await expect(setBreakGlass(prisma, { email: second.email, breakGlass: true, by: admin })).rejects.toThrow(`${glass.email} already is`);
    await expect(setBreakGlass(prisma, { email: local.email, breakGlass: true, by: admin })).rejects.toThrow("not an admin");
    expect(await admitSsoPerson(prisma, profile(glass.email, []))).toMatchObject({ ok: false, refusal: { reason: "break_glass" } });
    await setBreakGlass(prisma, { email: glass.email, breakGlass: false, by: admin });
  });
});

describe("SCIM 2.0 provisioning", () => {
  const scim = (secret: string | null, body?: unknown) => ({ headers: { ...(secret ? { authorization: `Bearer ${secret}` } : {}), "content-type": "application/scim+json" }, ...(body !== undefined ? { body } : {}) });

  it("creates a person, gives the role through a mapped group, and deprovisions with active=false: sessions end at once, audited", async () => {
    const prisma = await getPrisma();
    const secret = await scimToken();
    const t = tag();
    await saveGroupRoles(prisma, { mapping: [{ group: `sagaboard-reviewers-${t}`, role: "reviewer" }], by: admin });
    const email = `ivy-${t}@example.com`;

    const created = await call(usersRoute.POST, "/scim/v2/Users", { method: "POST", ...scim(secret, { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: email, name: { givenName: "Ivy", familyName: "Okafor" }, externalId: "okta-1", active: true }) });
    expect(created.status).toBe(201);
    expect(created.headers.get("content-type")).toContain("application/scim+json");
    const id = created.json.id as string;
    expect(created.json).toMatchObject({ userName: email, displayName: "Ivy Okafor", externalId: "okta-1", active: true });
    // No mapped group yet: the account exists but cannot sign in.
    expect(await prisma.user.findUniqueOrThrow({ where: { id } })).toMatchObject({ disabledReason: "no_mapped_group", source: "scim" });

    const group = await call(groupsRoute.POST, "/scim/v2/Groups", { method: "POST", ...scim(secret, { displayName: `sagaboard-reviewers-${t}`, members: [{ value: id }] }) });
    expect(group.status).toBe(201);
    expect(group.json.members).toEqual([expect.objectContaining({ value: id, display: email })]);
    expect(await prisma.user.findUniqueOrThrow({ where: { id } })).toMatchObject({ role: "reviewer", disabledAt: null });
    const found = await call(usersRoute.GET, `/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`, scim(secret));
    expect(found.json).toMatchObject({ totalResults: 1, Resources: [expect.objectContaining({ id, groups: [expect.objectContaining({ display: `sagaboard-reviewers-${t}` })] })] });

    // Signed in, then deactivated by the provider (Entra sends the boolean as a string).
    const session = await startUserSession(prisma, id, "sso");
    expect((await state(id, session)).kind).toBe("signed-in");
    const off = await call(userRoute.PATCH, `/scim/v2/Users/${id}`, { method: "PATCH", params: { id }, ...scim(secret, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "Replace", path: "active", value: "False" }] }) });
    expect(off.status).toBe(200);
    expect(off.json.active).toBe(false);
    expect((await state(id, session)).kind).toBe("disabled");
    expect(await prisma.userSession.findUniqueOrThrow({ where: { id: session } })).toMatchObject({ endReason: "deprovisioned" });
    const chain = await prisma.auditEvent.findMany({ where: { scope: `user:${id}` }, orderBy: { seq: "asc" } });
    expect(chain.map((e) => e.type)).toEqual(expect.arrayContaining(["user.created", "user.groups_changed", "user.deprovisioned", "user.sessions_ended"]));
    expect(chain.find((e) => e.type === "user.deprovisioned")?.actor).toMatch(/^system:scim:idp-/);

    // Active again (Okta: a value object without a path).
    await call(userRoute.PATCH, `/scim/v2/Users/${id}`, { method: "PATCH", params: { id }, ...scim(secret, { Operations: [{ op: "replace", value: { active: true } }] }) });
    expect(await prisma.user.findUniqueOrThrow({ where: { id } })).toMatchObject({ disabledAt: null, role: "reviewer" });
  });

  it("losing the group through SCIM ends the person's sessions; deleting the person disables the account", async () => {
    const prisma = await getPrisma();
    const secret = await scimToken();
    const t = tag();
    await saveGroupRoles(prisma, { mapping: [{ group: `ops-${t}`, role: "admin" }, { group: `readers-${t}`, role: "viewer" }], by: admin });
    const user = (await call(usersRoute.POST, "/scim/v2/Users", { method: "POST", ...scim(secret, { userName: `kai-${t}@example.com`, displayName: "Kai" }) })).json;
    const ops = (await call(groupsRoute.POST, "/scim/v2/Groups", { method: "POST", ...scim(secret, { displayName: `ops-${t}` }) })).json;
    const readers = (await call(groupsRoute.POST, "/scim/v2/Groups", { method: "POST", ...scim(secret, { displayName: `readers-${t}` }) })).json;
    for (const g of [ops, readers]) {
      const added = await call(groupRoute.PATCH, `/scim/v2/Groups/${g.id}`, { method: "PATCH", params: { id: g.id }, ...scim(secret, { Operations: [{ op: "add", path: "members", value: [{ value: user.id }] }] }) });
      expect(added.status).toBe(200);
    }
    expect(await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).toMatchObject({ role: "admin" });
    const session = await startUserSession(prisma, user.id, "sso");

    // Removed from ops: down to viewer, and the admin session ends.
    const removed = await call(groupRoute.PATCH, `/scim/v2/Groups/${ops.id}`, { method: "PATCH", params: { id: ops.id }, ...scim(secret, { Operations: [{ op: "remove", path: `members[value eq "${user.id}"]` }] }) });
    expect(removed.json.members).toEqual([]);
    expect(await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).toMatchObject({ role: "viewer", disabledAt: null });
    expect((await state(user.id, session)).kind).toBe("signed-out");

    const deleted = await call(userRoute.DELETE, `/scim/v2/Users/${user.id}`, { method: "DELETE", params: { id: user.id }, ...scim(secret) });
    expect(deleted.status).toBe(204);
    expect(await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).toMatchObject({ disabledReason: "provider" });
  });

  it("refuses a request without its token, with a revoked one, and for an unknown person, in SCIM's error shape, each audited", async () => {
    const prisma = await getPrisma();
    const before = await prisma.auditEvent.count({ where: { scope: SCIM_SCOPE, type: "scim.refused" } });
    const none = await call(usersRoute.GET, "/scim/v2/Users", scim(null));
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect(none.json).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "401", detail: expect.stringContaining("Authorization: Bearer") });

    const name = `idp-${tag()}`;
    const { secret } = await createScimToken(prisma, { name, by: admin });
    await revokeScimToken(prisma, { name, by: admin });
    const revoked = await call(usersRoute.POST, "/scim/v2/Users", { method: "POST", ...scim(secret, { userName: "nobody@example.com" }) });
    expect(revoked.status).toBe(401);
    expect(await prisma.user.findUnique({ where: { email: "nobody@example.com" } })).toBeNull();

    const live = await scimToken();
    const unknown = await call(userRoute.PATCH, "/scim/v2/Users/usr_nobody", { method: "PATCH", params: { id: "usr_nobody" }, ...scim(live, { Operations: [{ op: "replace", path: "active", value: false }] }) });
    expect(unknown.status).toBe(404);
    expect(unknown.json.detail).toContain("filter=userName eq");
    const badFilter = await call(usersRoute.GET, `/scim/v2/Users?filter=${encodeURIComponent('name.familyName co "x"')}`, scim(live));
    expect(badFilter).toMatchObject({ status: 400, json: { scimType: "invalidFilter" } });
    expect(await prisma.auditEvent.count({ where: { scope: SCIM_SCOPE, type: "scim.refused" } })).toBe(before + 3);
  });
});
