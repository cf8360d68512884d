/**
 * next-auth's configuration: who can sign in, and what the session cookie holds.
 *
 * - Sessions are JWTs (encrypted, in an httpOnly cookie) that carry only the user id (`sub`). Role,
 *   name and "disabled" are read from the database on every request (current-user.ts), so a role
 *   change or a disabled account takes effect on the next request, not when the cookie expires.
 * - Email + password: bcrypt against User.passwordHash. Disabled accounts are refused. With single
 *   sign-on on, only the break-glass account signs in with a password (lib/server/sso/ARCHITECTURE.md).
 * - Optional OIDC single sign-on when OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set
 *   (and NEXTAUTH_URL, which the provider's redirect URI is built from), with PKCE and state. The
 *   role comes from the groups claim (OIDC_GROUPS_CLAIM, default `groups`) through the mapping an
 *   admin keeps, read again at every sign-in; a person in no mapped group is refused with a page that
 *   says why (lib/server/sso/admit-sso-person.ts). A callback that fails its checks (a wrong state) is audited.
 * - The secret is NEXTAUTH_SECRET, or else a random one generated once per data directory
 *   (next to the SQLite file: data/.nextauth-secret), so `npm start` works with zero config.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import bcrypt from "bcryptjs";
import type { NextAuthOptions, Session } from "next-auth";
import CredentialsModule from "next-auth/providers/credentials";
import type { OAuthConfig } from "next-auth/providers/oauth";
import * as z from "zod";
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { dataDirectory } from "@/lib/core/db/url";
import { createSecretFileOnce } from "@/lib/core/secret-file";
import { admitSsoPerson } from "@/lib/server/sso/admit-sso-person";
import { groupsOfClaim } from "@/lib/server/sso/group-roles";
import { appendIdentityEvent, SSO_ACTOR, SSO_SCOPE } from "@/lib/server/sso/sso-audit";
import { refusalPath } from "@/lib/server/sso/sso-refusal";
import { endUserSession, SignInMethod, startUserSession } from "./user-sessions";

/**
 * next-auth's provider is a CommonJS module: a bundler (Next) hands its `default` export over, while
 * Node loading this file as an ES module (a test's server process under tsx) hands the whole
 * `module.exports`. Either way, the function.
 */
const CredentialsProvider = ((CredentialsModule as unknown as { default?: typeof CredentialsModule }).default ?? CredentialsModule) as typeof CredentialsModule;

/** The provider id of email + password sign-in. */
export const CREDENTIALS_PROVIDER_ID = "credentials";
/** The provider id of OIDC single sign-on (callback URL: /api/auth/callback/oidc). */
export const OIDC_PROVIDER_ID = "oidc";
/** How long a session lasts without use, in seconds (12 hours: a working day). */
export const SESSION_MAX_AGE_SECONDS = 12 * 60 * 60;

/** Error codes the sign-in page explains (next-auth's own plus ours). */
export const SignInError = {
  /** Wrong email or password (next-auth's code for a refused `authorize`). */
  CREDENTIALS: "CredentialsSignin",
  /** The password was right but the account is disabled. */
  ACCOUNT_DISABLED: "AccountDisabled",
  /** SSO worked but no enabled account has that email (next-auth's code for a refused `signIn`). */
  ACCESS_DENIED: "AccessDenied",
  /** The password was right, but single sign-on is on and this is not the break-glass account. */
  SSO_REQUIRED: "SsoRequired",
  /** The identity provider's answer failed its checks (a wrong or missing state, a PKCE mismatch). */
  OAUTH_CALLBACK: "OAuthCallback",
} as const;
export type SignInError = (typeof SignInError)[keyof typeof SignInError];

// A valid bcrypt hash of a random string: unknown emails are compared against it, so "no such
// account" takes as long as "wrong password" and response times do not reveal which emails exist.
const TIMING_DUMMY_HASH = "$2b$10$mFllg3oKo9FgNqtLYFvKUOJiU3iyXuJVFl7cBhTAmneQwYzxT.pyS";

/** What a credentials check found: expected outcomes are values, not exceptions. */
export type CredentialsCheck = { ok: true; userId: string } | { ok: false; reason: "invalid" | "disabled" | "sso_required" };

/**
 * Checks an email and password against the User table. `disabled` is only reported after the
 * password matched, so it does not reveal which emails exist.
 */
export async function checkCredentials(prisma: PrismaClient, email: string, password: string): Promise<CredentialsCheck> {
  const normalized = email.trim().toLowerCase();
  const row = normalized ? await prisma.user.findUnique({ where: { email: normalized } }) : null;
  const matches = await bcrypt.compare(password, row?.passwordHash ?? TIMING_DUMMY_HASH);
  if (!row || row.passwordHash === null || !matches) return { ok: false, reason: "invalid" };
  if (row.disabledAt !== null) return { ok: false, reason: "disabled" };
  // With single sign-on on, the provider decides who is in; one local admin stays the way in when it is down.
  if (isOidcConfigured() && !row.breakGlass) return { ok: false, reason: "sso_required" };
  return { ok: true, userId: row.id };
}

/** Whether OIDC single sign-on is configured (the sign-in page shows its button only then). */
export function isOidcConfigured(): boolean {
  return Boolean(process.env.OIDC_ISSUER && process.env.OIDC_CLIENT_ID && process.env.OIDC_CLIENT_SECRET);
}

/** The claim that lists a person's groups (OIDC_GROUPS_CLAIM, default `groups`). */
export function oidcGroupsClaim(): string {
  return process.env.OIDC_GROUPS_CLAIM?.trim() || "groups";
}

/**
 * The scopes asked for (OIDC_SCOPES): by default `openid email profile groups`, since most providers
 * send the groups claim only when asked; a provider that refuses an unknown scope gets its own list.
 */
export function oidcScopes(): string {
  return process.env.OIDC_SCOPES?.trim() || "openid email profile groups";
}

/** The claims we read from the identity provider's ID token / userinfo. */
interface OidcProfile extends Record<string, unknown> {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  preferred_username?: string;
}

/** next-auth's generic OAuth provider in OIDC mode (discovery through the issuer's well-known document). */
function oidcProvider(): OAuthConfig<OidcProfile> | null {
  const { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: clientSecret } = process.env;
  if (!issuer || !clientId || !clientSecret) return null;
  const base = issuer.replace(/\/+$/, "");
  return {
    id: OIDC_PROVIDER_ID,
    name: process.env.OIDC_NAME ?? "SSO",
    type: "oauth",
    wellKnown: `${base}/.well-known/openid-configuration`,
    issuer: base,
    clientId,
    clientSecret,
    authorization: { params: { scope: oidcScopes() } },
    idToken: true,
    checks: ["pkce", "state"],
    profile(profile) {
      return {
        id: profile.sub,
        email: profile.email?.trim().toLowerCase() ?? null,
        name: profile.name ?? profile.preferred_username ?? profile.email ?? profile.sub,
      };
    },
  };
}

/** The enabled account an SSO profile names by its email (admitted by `admitSsoPerson` in signIn), or null. */
async function oidcAccount(prisma: PrismaClient, email: unknown): Promise<{ id: string } | null> {
  if (typeof email !== "string" || email.trim() === "") return null;
  const row = await prisma.user.findUnique({ where: { email: email.trim().toLowerCase() }, select: { id: true, disabledAt: true, breakGlass: true } });
  return row && row.disabledAt === null && !row.breakGlass ? { id: row.id } : null;
}

/**
 * next-auth's failures that a person or an attacker caused at the callback (a wrong or missing
 * state, a PKCE verifier that does not match, a provider error) go on the single sign-on audit
 * chain; next-auth then sends the browser to /signin?error=OAuthCallback. Never awaited by next-auth.
 */
function auditCallbackFailure(code: string, metadata: unknown): void {
  if (!code.startsWith("OAUTH_CALLBACK")) return;
  const error = (metadata as { error?: unknown } | null)?.error ?? metadata;
  const message = (error instanceof Error ? error.message : String((error as { message?: unknown } | null)?.message ?? "")).slice(0, 300);
  void getPrisma()
    .then((prisma) => appendIdentityEvent(prisma, SSO_SCOPE, "sso.callback_refused", SSO_ACTOR, { code, message }))
    .catch(() => undefined);
}

let cachedSecret: string | undefined;

/**
 * NEXTAUTH_SECRET, or the data directory's generated secret. The file is created atomically (write
 * a temporary file, then hard-link it into place, which fails if another process won the race), with
 * mode 0600. It is never committed: data/ is git-ignored.
 */
export function resolveAuthSecret(): string {
  const fromEnv = process.env.NEXTAUTH_SECRET?.trim();
  if (fromEnv) return fromEnv;
  if (cachedSecret) return cachedSecret;
  const dir = dataDirectory();
  const file = path.join(dir, ".nextauth-secret");
  const read = (): string | undefined => {
    try {
      return readFileSync(file, "utf8").trim();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
  };
  let secret = read();
  if (secret === undefined) {
    createSecretFileOnce(file, `${randomBytes(32).toString("base64url")}\n`);
    secret = read();
  }
  if (!secret || secret.length < 32) {
    throw new Error(`${file} does not hold a usable secret (32+ characters). Delete it to have a new one generated, or set NEXTAUTH_SECRET.`);
  }
  cachedSecret = secret;
  return secret;
}

/** What the session callback exposes: the user id and the session's id (read them with `sessionIdentity`). */
const SessionBodySchema = z.object({ user: z.object({ id: z.string().min(1), sid: z.string().min(1).optional() }) });

/** Who a session cookie names: the user, and the UserSession row that must still be open. */
export interface SessionIdentity {
  /** `usr_...` */
  userId: string;
  /** `ses_...`; absent in a cookie made before sessions could end (refused). */
  sessionId: string | null;
}

/** The user and session in a session returned by getServerSession, or null. */
export function sessionIdentity(session: unknown): SessionIdentity | null {
  const parsed = SessionBodySchema.safeParse(session);
  return parsed.success ? { userId: parsed.data.user.id, sessionId: parsed.data.user.sid ?? null } : null;
}

/** The user id in a session returned by getServerSession, or null. */
export function sessionUserId(session: unknown): string | null {
  return sessionIdentity(session)?.userId ?? null;
}

/** The next-auth configuration, shared by the route handler and getServerSession. */
export const authOptions: NextAuthOptions = {
  // A getter so the secret file is read (or created) on first use, not when the module is imported.
  get secret() {
    return resolveAuthSecret();
  },
  session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
  pages: { signIn: "/signin", error: "/signin" },
  providers: [
    CredentialsProvider({
      id: CREDENTIALS_PROVIDER_ID,
      name: "Email and password",
      credentials: {
        email: { label: "Email", type: "email" },
        password: { label: "Password", type: "password" },
      },
      async authorize(credentials) {
        const result = await checkCredentials(await getPrisma(), credentials?.email ?? "", credentials?.password ?? "");
        if (result.ok) return { id: result.userId };
        // next-auth turns a thrown message into `?error=<message>`; null becomes CredentialsSignin.
        if (result.reason === "disabled") throw new Error(SignInError.ACCOUNT_DISABLED);
        if (result.reason === "sso_required") throw new Error(SignInError.SSO_REQUIRED);
        return null;
      },
    }),
    ...[oidcProvider()].filter((provider) => provider !== null),
  ],
  callbacks: {
    async signIn({ account, profile, user }) {
      if (account?.provider !== OIDC_PROVIDER_ID) return true; // authorize() already decided
      const claims = (profile ?? {}) as OidcProfile;
      const admitted = await admitSsoPerson(await getPrisma(), {
        email: claims.email ?? user.email,
        emailVerified: claims.email_verified,
        name: typeof claims.name === "string" ? claims.name : (claims.preferred_username ?? null),
        subject: String(claims.sub ?? user.id),
        groups: groupsOfClaim(claims[oidcGroupsClaim()]),
      });
      // A string is where next-auth sends the browser instead: the page that says why.
      return admitted.ok ? true : refusalPath(admitted.refusal, resolveAuthSecret());
    },
    async jwt({ token, user, account }) {
      // Only the user id and the session's id go into the cookie; everything else is read from the
      // database per request, and the session must still be open (lib/server/auth/user-sessions.ts).
      if (!user) return token.sub ? { sub: token.sub, ...(typeof token.sid === "string" ? { sid: token.sid } : {}) } : {};
      let userId = user.id;
      if (account?.provider === OIDC_PROVIDER_ID) {
        // The provider's subject is not our id: map the verified email (admitted in signIn) to the User row.
        const found = await oidcAccount(await getPrisma(), user.email);
        if (!found) throw new Error(SignInError.ACCESS_DENIED);
        userId = found.id;
      }
      const method = account?.provider === OIDC_PROVIDER_ID ? SignInMethod.sso : SignInMethod.password;
      return { sub: userId, sid: await startUserSession(await getPrisma(), userId, method) };
    },
    session({ session, token }) {
      const body = { expires: session.expires, user: { id: token.sub ?? "", ...(typeof token.sid === "string" ? { sid: token.sid } : {}) } };
      return body as Session;
    },
  },
  logger: {
    error(code, metadata) {
      auditCallbackFailure(code, metadata);
      console.error(`[next-auth][error][${code}]`, metadata instanceof Error ? metadata.message : metadata);
    },
  },
  events: {
    // Signing out ends this browser's session for good: a copy of the cookie no longer works.
    async signOut({ token }) {
      if (typeof token?.sid === "string") await endUserSession(await getPrisma(), token.sid);
    },
  },
};
