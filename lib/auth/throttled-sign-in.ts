/**
 * Puts the sign-in throttle (lib/auth/sign-in-throttle.ts) in front of next-auth's password sign-in,
 * POST /api/auth/callback/credentials: the limiter is asked BEFORE next-auth checks the password, and
 * told afterwards how next-auth answered (a url with `error=CredentialsSignin` is a wrong password).
 * A refused attempt is answered 429 with Retry-After, and a body next-auth's client understands
 * (`url` with `error=RateLimited:<seconds>`) beside our error body (`error.code` RATE_LIMITED).
 * The answer is the same whether or not the email names an account.
 *
 * Trust assumption about the client address: it is the FIRST hop of X-Forwarded-For. `next start`
 * fills that header from the socket when the request has none, so without a proxy it is the peer's
 * address, but a client can send its own header and pick its bucket. Deploy behind a proxy that
 * REPLACES X-Forwarded-For with the address it saw (e.g. nginx `proxy_set_header X-Forwarded-For
 * $remote_addr`), not one that appends to it. The per-account limit does not depend on the address.
 */
import pg from "pg";
import { ApiError, toErrorPayload } from "@/lib/api/errors";
import { getPrisma } from "@/lib/db/prisma";
import { isPostgresUrl } from "@/lib/db/url";
import { rateLimitedSentence, rateLimitedSignInError } from "./rate-limited-code";
import { recordSignInLockout } from "./record-sign-in-lockout";
import { SignInOutcome, SignInThrottle } from "./sign-in-throttle";

/** A fetch-style handler: next-auth's route handler with its route context bound. */
export type FetchHandler = (request: Request) => Promise<Response>;

/** next-auth's code for a refused `authorize` (a wrong password or an unknown email). */
const CREDENTIALS_SIGN_IN_ERROR = "CredentialsSignin";

/** The client address the per-client limit counts (see the trust assumption above). */
export function signInClientAddress(headers: Headers): string {
  const first = headers.get("x-forwarded-for")?.split(",")[0]?.trim() || headers.get("x-real-ip")?.trim() || "";
  // One machine's IPv4 address has two spellings on a dual-stack socket.
  const address = first.startsWith("::ffff:") && first.includes(".") ? first.slice("::ffff:".length) : first;
  return address.toLowerCase().slice(0, 100) || "unknown";
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
function refusal(request: Request, retryAfterSeconds: number): Response {
  const message = `${rateLimitedSentence(retryAfterSeconds)} Sign-in is paused after repeated wrong passwords; wait, then sign in again.`;
  const { status, body } = toErrorPayload(new ApiError("RATE_LIMITED", message, { extra: { retryAfterSeconds } }));
  const url = new URL(`/signin?error=${encodeURIComponent(rateLimitedSignInError(retryAfterSeconds))}`, request.url).toString();
  return Response.json({ url, ...body }, { status, headers: { "retry-after": String(retryAfterSeconds), "cache-control": "no-store" } });
}

/**
 * Answers `request` with `nextAuth`, throttled when it is a password sign-in: refused with 429 while
 * the account or the client is blocked, and counted as a failure or a success after next-auth answers.
 */
export async function throttleCredentialsSignIn(request: Request, nextAuth: FetchHandler, throttle: SignInThrottle): Promise<Response> {
  if (!isCredentialsSignIn(request)) return nextAuth(request);
  const gate = await throttle.begin(await emailOf(request), signInClientAddress(request.headers));
  if (!gate.allowed) return refusal(request, gate.retryAfterSeconds);
  let response: Response;
  try {
    response = await nextAuth(request);
  } catch (e) {
    await gate.attempt.finish(SignInOutcome.neutral);
    throw e;
  }
  await gate.attempt.finish(await outcomeOf(response));
  return response;
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
    ...(isPostgresUrl(url) ? { postgresPool: new pg.Pool({ connectionString: url, max: 3 }) } : {}),
    onLockout: async (email, lockout) => {
      await recordSignInLockout(await getPrisma(), email, lockout);
    },
  });
  return appThrottle;
}
