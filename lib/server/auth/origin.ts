/**
 * CSRF protection for cookie-authenticated route handlers. Route handlers have none built in: a
 * form or fetch on another site could make a signed-in person's browser POST here with their cookie.
 * So a mutating request must come from a page of this same site: its `Origin` header (sent by every
 * current browser on POST/PUT/PATCH/DELETE), or its `Referer` when Origin is absent, must name the
 * host the request was sent to.
 *
 * Server actions do not need this: Next.js compares their Origin with the Host (or
 * X-Forwarded-Host) header itself and refuses a mismatch (serverActions.allowedOrigins widens it).
 * Agent routes (Bearer tokens) do not need it either: browsers never attach those by themselves.
 */
import { ApiError } from "@/packages/client/src/protocol/errors";

/** Methods that change something and so need the same-origin check. */
export const MUTATING_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * The host the request was addressed to. Behind a reverse proxy the Host header names the upstream,
 * so X-Forwarded-Host is used, but only when TRUST_PROXY=1 says a proxy that sets it is in front
 * (otherwise any client could send it).
 */
export function requestHost(request: Request): string {
  if (process.env.TRUST_PROXY === "1") {
    const forwarded = request.headers.get("x-forwarded-host")?.split(",")[0]?.trim();
    if (forwarded) return forwarded.toLowerCase();
  }
  return (request.headers.get("host") ?? new URL(request.url).host).toLowerCase();
}

/** The host of an Origin or Referer value, or null when it is absent, "null" or not a URL. */
function hostOf(value: string | null): string | null {
  if (!value || value === "null") return null;
  try {
    return new URL(value).host.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Throws ApiError FORBIDDEN unless the request's Origin (or, when absent, Referer) names the host
 * it was sent to. Call it in every cookie-authenticated mutating route handler (userRoute does).
 */
export function assertSameOrigin(request: Request): void {
  const origin = request.headers.get("origin");
  const source = hostOf(origin ?? request.headers.get("referer"));
  if (source === null || source !== requestHost(request)) {
    throw new ApiError(
      "FORBIDDEN",
      "cross-origin request refused: a change made with a session cookie must come from a Sagaboard page on this same site.",
      { details: [{ path: origin === null ? "headers.referer" : "headers.origin", message: "does not match the host of this request" }] },
    );
  }
}
