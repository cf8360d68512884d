import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const saved = { ...process.env };
let dir = "";

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "sagaboard-auth-"));
  process.env.DATABASE_URL = `file:${path.join(dir, "data", "sagaboard.db")}`;
  delete process.env.NEXTAUTH_SECRET;
  delete process.env.OIDC_ISSUER;
  delete process.env.OIDC_CLIENT_ID;
  delete process.env.OIDC_CLIENT_SECRET;
  vi.resetModules();
});

afterEach(() => {
  process.env = { ...saved };
  rmSync(dir, { recursive: true, force: true });
});

describe("the auth secret", () => {
  it("is generated once per data directory, next to the database, readable only by its owner", async () => {
    const { resolveAuthSecret } = await import("./options");
    const secret = resolveAuthSecret();
    const file = path.join(dir, "data", ".nextauth-secret");
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(file, "utf8").trim()).toBe(secret);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    vi.resetModules();
    // A new process (fresh module) reads the same file instead of making another secret.
    expect((await import("./options")).resolveAuthSecret()).toBe(secret);
  });

  it("is NEXTAUTH_SECRET when set, and then no file is written", async () => {
    process.env.NEXTAUTH_SECRET = "from-the-environment-and-long-enough";
    const { authOptions } = await import("./options");
    expect(authOptions.secret).toBe("from-the-environment-and-long-enough");
    expect(() => statSync(path.join(dir, "data", ".nextauth-secret"))).toThrow();
  });
});

describe("providers", () => {
  it("offer email + password only, unless all three OIDC variables are set", async () => {
    process.env.OIDC_ISSUER = "https://id.example.com/";
    let options = await import("./options");
    expect(options.isOidcConfigured()).toBe(false);
    expect(options.authOptions.providers.map((p) => p.id)).toEqual(["credentials"]);

    process.env.OIDC_CLIENT_ID = "sagaboard";
    process.env.OIDC_CLIENT_SECRET = "s3cret";
    vi.resetModules();
    options = await import("./options");
    expect(options.isOidcConfigured()).toBe(true);
    expect(options.authOptions.providers.map((p) => p.id)).toEqual(["credentials", "oidc"]);
    const oidc = options.authOptions.providers[1] as unknown as Record<string, unknown>;
    expect(oidc).toMatchObject({ type: "oauth", wellKnown: "https://id.example.com/.well-known/openid-configuration", idToken: true, checks: ["pkce", "state"] });
    // The groups claim is asked for by default (OIDC_SCOPES names another list for a provider that refuses it).
    expect(oidc.authorization).toEqual({ params: { scope: "openid email profile groups" } });
  });

  it("put only the user id and the session's id into the JWT and the session", async () => {
    process.env.NEXTAUTH_SECRET = "x".repeat(32);
    // Signing in opens a UserSession row (lib/server/auth/user-sessions.ts, tested on a database elsewhere).
    vi.doMock("./user-sessions", async (importOriginal) => ({ ...(await importOriginal<typeof import("./user-sessions")>()), startUserSession: async () => "ses_1", endUserSession: async () => undefined }));
    mkdirSync(path.join(dir, "data"), { recursive: true }); // the client opens; the mock never queries it
    const { authOptions } = await import("./options");
    const jwt = authOptions.callbacks?.jwt;
    const session = authOptions.callbacks?.session;
    const signedIn = await jwt?.({ token: { name: "Ana", email: "ana@example.com", picture: null, sub: "usr_1" }, user: { id: "usr_1", email: "ana@example.com" }, account: { provider: "credentials", type: "credentials", providerAccountId: "usr_1" } } as never);
    expect(signedIn).toEqual({ sub: "usr_1", sid: "ses_1" });
    expect(await jwt?.({ token: { sub: "usr_1", sid: "ses_1", role: "admin", iat: 1 } } as never)).toEqual({ sub: "usr_1", sid: "ses_1" });
    expect(await session?.({ session: { expires: "2030-01-01T00:00:00.000Z", user: { name: "Ana" } }, token: { sub: "usr_1", sid: "ses_1" } } as never)).toEqual({
      expires: "2030-01-01T00:00:00.000Z",
      user: { id: "usr_1", sid: "ses_1" },
    });
    vi.doUnmock("./user-sessions");
  });
});
