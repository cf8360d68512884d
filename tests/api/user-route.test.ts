/**
 * userRoute: the dashboard's endpoints authenticated by the session cookie and authorized by role,
 * with the session read through a fake reader and the User row read from a real database.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { buildOpenApiDocument } from "@/lib/delivery/openapi";
import { getCurrentUser, requireUser, runWithSessionReader } from "@/lib/server/auth/current-user";
import { userRoute } from "@/lib/delivery/user-route";
import { createUser } from "@/lib/server/users/create-user";
import { disableUser } from "@/lib/server/users/set-user-enabled";
import { setUserRole } from "@/lib/server/users/set-user-role";
import type { TUserView } from "@/lib/server/users/user";
import { call, useTestDatabase } from "./api-test-kit";

const getPrisma = useTestDatabase("user-route");
const admin = { type: "system" as const, id: "test" };

const decide = defineEndpoint({
  method: "POST",
  path: "/api/v1/test/pivots/:pivotId/decision",
  summary: "test only",
  auth: "user",
  params: z.object({ pivotId: z.string() }),
  body: z.object({ approve: z.boolean() }),
  response: z.object({ pivotId: z.string(), approve: z.boolean(), by: z.string(), role: z.string() }),
});
const look = defineEndpoint({
  method: "GET",
  path: "/api/v1/test/whoami",
  summary: "test only",
  auth: "user",
  response: z.object({ email: z.string(), role: z.string() }),
});

/** The user id the fake session reader returns (null: no session cookie). */
let sessionUserId: string | null = null;
const readSession = async () => sessionUserId;
let handlerCalls = 0;

const POST = userRoute(
  decide,
  "pivot.decide",
  ({ params, body, user }) => {
    handlerCalls++;
    return { pivotId: params.pivotId, approve: body.approve, by: user.email, role: user.role };
  },
  { readSession },
);
const GET = userRoute(
  look,
  "read",
  ({ user }) => {
    handlerCalls++;
    return { email: user.email, role: user.role };
  },
  { readSession },
);

const path = "/api/v1/test/pivots/piv_1/decision";
const sameOrigin = { origin: "http://localhost" };
let seq = 0;
const users: Partial<Record<"reviewer" | "viewer" | "admin", TUserView>> = {};

async function seed(role: "admin" | "reviewer" | "support" | "viewer"): Promise<TUserView> {
  return createUser(await getPrisma(), {
    email: `${role}-${++seq}@Example.COM`,
    name: `${role} ${seq}`,
    role,
    password: "correct horse battery",
    by: admin,
  });
}

function post(headers: Record<string, string> = sameOrigin, body: unknown = { approve: true }) {
  return call(POST, path, { method: "POST", body, params: { pivotId: "piv_1" }, headers });
}

beforeAll(async () => {
  users.admin = await seed("admin");
  users.reviewer = await seed("reviewer");
  users.viewer = await seed("viewer");
});

beforeEach(() => {
  sessionUserId = null;
  handlerCalls = 0;
});

afterEach(() => {
  delete process.env.TRUST_PROXY;
});

describe("userRoute: authentication", () => {
  it("answers 401 without a session, before the handler runs", async () => {
    const res = await post();
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe("UNAUTHORIZED");
    expect(res.json.error.message).toMatch(/sign in/i);
    expect(res.headers.get("cache-control")).toBe("no-store, no-transform");
    expect((await call(GET, "/api/v1/test/whoami")).status).toBe(401);
    expect(handlerCalls).toBe(0);
  });

  it("answers 401 for a session of an unknown user id", async () => {
    sessionUserId = "usr_does_not_exist";
    expect((await call(GET, "/api/v1/test/whoami")).status).toBe(401);
    expect(handlerCalls).toBe(0);
  });

  it("refuses a disabled account on its very next request", async () => {
    const user = await seed("reviewer");
    sessionUserId = user.id;
    expect((await post()).status).toBe(200);
    await disableUser(await getPrisma(), { email: user.email, by: admin });
    const res = await post();
    expect(res.status).toBe(401);
    expect(res.json.error.message).toMatch(/disabled/);
    expect(handlerCalls).toBe(1);
  });
});

describe("userRoute: authorization by role", () => {
  it("gives the handler the user as the database has them", async () => {
    sessionUserId = users.reviewer!.id;
    const res = await post();
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ pivotId: "piv_1", approve: true, by: users.reviewer!.email, role: "reviewer" });
    expect(users.reviewer!.email).toBe(users.reviewer!.email.toLowerCase());
  });

  it("answers 403 to a viewer on a reviewer's action, naming the role and what it would need", async () => {
    sessionUserId = users.viewer!.id;
    const res = await post();
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe("FORBIDDEN");
    expect(res.json.error.message).toContain("(viewer)");
    expect(res.json.error.message).toContain("decide pivots");
    expect(res.json.error.message).toContain("admin or reviewer");
    expect(handlerCalls).toBe(0);
    // Reading is allowed.
    expect((await call(GET, "/api/v1/test/whoami")).json).toEqual({ email: users.viewer!.email, role: "viewer" });
  });

  it("applies a role change on the next request", async () => {
    const user = await seed("reviewer");
    sessionUserId = user.id;
    expect((await post()).status).toBe(200);
    await setUserRole(await getPrisma(), { email: user.email, role: "viewer", by: admin });
    expect((await post()).status).toBe(403);
    await setUserRole(await getPrisma(), { email: user.email, role: "admin", by: admin });
    expect((await post()).json.role).toBe("admin");
  });

  it("still validates the input after authorizing", async () => {
    sessionUserId = users.reviewer!.id;
    const res = await post(sameOrigin, { approve: "yes" });
    expect(res.status).toBe(400);
    expect(res.json.error.details[0].path).toBe("body.approve");
  });
});

describe("userRoute: same-origin check on mutations", () => {
  it("answers 403 to a cross-origin POST with a valid session, before the handler runs", async () => {
    sessionUserId = users.reviewer!.id;
    const res = await post({ origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe("FORBIDDEN");
    expect(res.json.error.message).toMatch(/^cross-origin request refused/);
    expect(handlerCalls).toBe(0);
  });

  it("refuses a POST with neither Origin nor Referer, and a different port or the literal null origin", async () => {
    sessionUserId = users.reviewer!.id;
    expect((await post({})).status).toBe(403);
    expect((await post({ origin: "http://localhost:4000" })).status).toBe(403);
    expect((await post({ origin: "null" })).status).toBe(403);
    expect(handlerCalls).toBe(0);
  });

  it("accepts a same-site Referer when Origin is absent, and never checks GETs", async () => {
    sessionUserId = users.reviewer!.id;
    expect((await post({ referer: "http://localhost/pivots/piv_1" })).status).toBe(200);
    expect((await call(GET, "/api/v1/test/whoami", { headers: { origin: "https://evil.example" } })).status).toBe(200);
  });

  it("compares with the Host header, and with X-Forwarded-Host only when TRUST_PROXY=1", async () => {
    sessionUserId = users.reviewer!.id;
    const proxied = { host: "10.0.0.5:3000", "x-forwarded-host": "sagaboard.example.com", origin: "https://sagaboard.example.com" };
    expect((await post(proxied)).status).toBe(403);
    process.env.TRUST_PROXY = "1";
    expect((await post(proxied)).status).toBe(200);
    expect((await post({ ...proxied, origin: "https://evil.example" })).status).toBe(403);
  });
});

describe("userRoute contract", () => {
  it("refuses an endpoint of another kind at module load", () => {
    const agentOnly = defineEndpoint({ method: "GET", path: "/api/v1/test/agent", summary: "t", auth: "agent", response: z.object({}) });
    // @ts-expect-error -- userRoute takes only auth: "user" endpoints
    expect(() => userRoute(agentOnly, "read", () => ({}))).toThrow(/needs an endpoint with auth "user"/);
  });

  it("is documented with the session cookie scheme and 401/403 responses", () => {
    const doc = buildOpenApiDocument([decide, look]);
    const op = doc.paths["/api/v1/test/pivots/{pivotId}/decision"]?.post as Record<string, unknown>;
    expect(op.security).toEqual([{ session: [] }]);
    expect(Object.keys(op.responses as object)).toEqual(expect.arrayContaining(["401", "403"]));
    expect((op.parameters as { in: string }[]).some((p) => p.in === "header")).toBe(false);
    expect(doc.components.securitySchemes.session).toMatchObject({ type: "apiKey", in: "cookie", name: "next-auth.session-token" });
  });
});

describe("requireUser and getCurrentUser", () => {
  it("read the session from runWithSessionReader's scope when no reader is passed", async () => {
    const reviewer = users.reviewer!;
    const user = await runWithSessionReader(async () => reviewer.id, () => requireUser("escalation.claim"));
    expect(user).toEqual({ id: reviewer.id, email: reviewer.email, name: reviewer.name, role: "reviewer" });
    await expect(runWithSessionReader(async () => users.viewer!.id, () => requireUser("users.manage"))).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    expect(await runWithSessionReader(async () => null, () => getCurrentUser())).toBeNull();
  });
});
