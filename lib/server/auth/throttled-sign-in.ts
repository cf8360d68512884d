/**
 * Puts the sign-in throttle (lib/server/auth/sign-in-throttle.ts) in front of next-auth's password sign-in,
 * POST /api/auth/callback/credentials: the limiter is asked BEFORE next-auth checks the password, and
 * told afterwards how next-auth answered (a url with `error=CredentialsSignin` is a wrong password).
 * A refused attempt is answered 429 with Retry-After, and a body next-auth's client understands
 * (`url` with `error=RateLimited:<seconds>`) beside our error body (`error.code` RATE_LIMITED).
 * The answer is the same whether or not the email names an account.
 *
 * The client address is the socket's peer, or, behind proxies listed in SAGABOARD_TRUSTED_PROXIES,
 * the address the nearest untrusted hop of X-Forwarded-For names (lib/server/auth/client-address.ts): a
 * client's own X-Forwarded-For is never believed. A successful sign-in sets proof of it for that
 * browser (lib/server/auth/sign-in-device.ts), which keeps the owner's way in during an attack.
 * The 429's url is built on NEXTAUTH_URL's origin, never on the request's Host or X-Forwarded-*.
 */
import { ApiError } from "@/packages/client/src/protocol/errors";
import { toErrorPayload } from "@/lib/core/error-response";
import { getPrisma } from "@/lib/core/db/prisma";
import { isPostgresUrl } from "@/lib/core/db/url";
import { openPostgresPool } from "@/lib/core/db/postgres-pool";
import { clientAddress, trustedProxiesFromEnv, type TrustedProxies } from "./client-address";
import { resolveAuthSecret } from "./options";
import { rateLimitedSentence, rateLimitedSignInError } from "./rate-limited-code";
import { recordSignInLockout } from "./record-sign-in-lockout";
import { signInDeviceCookie, verifiedSignInDevice } from "./sign-in-device";
import { SignInOutcome, SignInThrottle } from "./sign-in-throttle";
import { socketAddressOf } from "./socket-address";

/** A fetch-style handler: next-auth's route handler with its route context bound. */
export type FetchHandler = (request: Request) => Promise<Response>;

/** next-auth's code for a refused `authorize` (a wrong password or an unknown email). */
const CREDENTIALS_SIGN_IN_ERROR = "CredentialsSignin";

let envProxies: TrustedProxies | undefined;

/** The client address the per-client limit counts: the socket's peer, through trusted proxies only. */
export function signInClientAddress(request: Request, trustedProxies: TrustedProxies = (envProxies ??= trustedProxiesFromEnv())): string {
  return clientAddress({ socketAddress: socketAddressOf(request.headers), forwardedFor: request.headers.get("x-forwarded-for"), trustedProxies });
}

/** The origin next-auth is configured to answer on (NEXTAUTH_URL), else this machine's default port. */
function publicOrigin(): string {
  const configured = process.env.NEXTAUTH_URL?.trim();
  try {
    if (configured) return new URL(configured).origin;
  } catch {
    // An unusable NEXTAUTH_URL: next-auth itself refuses to start with it; answer on the default.
  }
  return `http://localhost:${process.env.PORT ?? "3000"}`;
}

/** Whether `request` is a password sign-in (next-auth's credentials callback). */
function isCredentialsSignIn(request: Request): boolean {
  return request.method === "POST" && /\/api\/auth\/callback\/credentials\/?$/.test(new URL(request.url).pathname);
}

/** The email in a sign-in body (next-auth's client posts a form), read from a copy so next-auth still gets the body. */
async function emailOf(request: Request): Promise<string> {
  const text = await request.clone().text();
  if ((request.headers.get("content-type") ?? "").includes("application/json")) {
    try {
      const body: unknown = JSON.parse(text);
      return body && typeof body === "object" && "email" in body && typeof body.email === "string" ? body.email : "";
    } catch {
      return "";
    }
  }
  return new URLSearchParams(text).get("email") ?? "";
}

/** How next-auth's answer ended the attempt: the url it redirects to (Location, or `{ url }` for json=true) says. */
async function outcomeOf(response: Response): Promise<SignInOutcome> {
  let target = response.headers.get("location");
  if (target === null && (response.headers.get("content-type") ?? "").includes("application/json")) {
    const body: unknown = await response.clone().json().catch(() => null);
    target = body && typeof body === "object" && "url" in body && typeof body.url === "string" ? body.url : null;
  }
  if (target === null) return SignInOutcome.neutral;
  const params = new URL(target, "http://localhost").searchParams;
  const error = params.get("error");
  // next-auth answers a wrong password 401 (json=true) or 302, with this code in the url.
  if (error === CREDENTIALS_SIGN_IN_ERROR) return SignInOutcome.failed;
  if (response.status >= 400) return SignInOutcome.neutral;
  // Another error (a disabled account: the password was right) or a missing CSRF token: no guess was made.
  if (error !== null || params.has("csrf")) return SignInOutcome.neutral;
  return SignInOutcome.succeeded;
}

/** The 429 answer: Retry-After, our error body, and the `url` next-auth's client reads its error from. */
function refusal(retryAfterSeconds: number): Response {
  const message = `${rateLimitedSentence(retryAfterSeconds)} Sign-in is paused after repeated wrong passwords; wait, then sign in again.`;
  const { status, body } = toErrorPayload(new ApiError("RATE_LIMITED", message, { extra: { retryAfterSeconds } }));
  const url = new URL(`/signin?error=${encodeURIComponent(rateLimitedSignInError(retryAfterSeconds))}`, publicOrigin()).toString();
  return Response.json({ url, ...body }, { status, headers: { "retry-after": String(retryAfterSeconds), "cache-control": "no-store" } });
}

/**
 * Answers `request` with `nextAuth`, throttled when it is a password sign-in: refused with 429 while
 * the pair is blocked, the account slowed or the client refused, and counted as a failure or a
 * success after next-auth answers; a success also gets proof of it for this browser.
 */
export async function throttleCredentialsSignIn(request: Request, nextAuth: FetchHandler, throttle: SignInThrottle, options: ThrottleOptions = {}): Promise<Response> {
  if (!isCredentialsSignIn(request)) return nextAuth(request);
  const email = await emailOf(request);
  const secret = options.secret ?? resolveAuthSecret();
  const device = email ? verifiedSignInDevice({ cookieHeader: request.headers.get("cookie"), email, secret }) : null;
  const address = (options.clientOf ?? signInClientAddress)(request);
  const gate = await throttle.begin(email, { address, device });
  if (!gate.allowed) return refusal(gate.retryAfterSeconds);
  let response: Response;
  try {
    response = await nextAuth(request);
  } catch (e) {
    await gate.attempt.finish(SignInOutcome.neutral);
    throw e;
  }
  const outcome = await outcomeOf(response);
  await gate.attempt.finish(outcome);
  if (outcome !== SignInOutcome.succeeded) return response;
  const proved = new Response(response.body, response);
  proved.headers.append("set-cookie", signInDeviceCookie({ email, secret, secure: publicOrigin().startsWith("https:") }));
  return proved;
}

/** How the wrapper learns who is signing in (tests and other servers inject them). */
export interface ThrottleOptions {
  /** The client address of a request (default: signInClientAddress). */
  clientOf?: (request: Request) => string;
  /** The secret proof of a previous sign-in is signed with (default: the auth secret). */
  secret?: string;
}

let appThrottle: SignInThrottle | undefined;

/**
 * This process's throttle: limits from the environment (SAGABOARD_SIGN_IN_*), counts in PostgreSQL
 * when DATABASE_URL names it (shared by every app instance), else in memory (SQLite: one server
 * process), and lockouts of existing accounts audited on the account's chain.
 */
export function appSignInThrottle(): SignInThrottle {
  if (appThrottle) return appThrottle;
  const url = process.env.DATABASE_URL;
  appThrottle = new SignInThrottle({
    ...(url && isPostgresUrl(url) ? { postgresPool: openPostgresPool(url, { max: 3 }) } : {}),
    onLockout: async (email, lockout) => {
      await recordSignInLockout(await getPrisma(), email, lockout);
    },
  });
  return appThrottle;
}
