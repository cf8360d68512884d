/**
 * Per-request page headers: a Content-Security-Policy with a fresh nonce (no inline script runs
 * without it), and HSTS when served over https. Only headers: authorization never happens here
 * (every page and handler checks its own user; CVE-2025-29927 bypassed middleware entirely). The
 * agent API, the health check and static files skip it, so the hot path pays nothing for it (API
 * paths come here only when they hold a %, to answer a malformed escape with a 400).
 */
import { NextResponse, type NextRequest } from "next/server";
import { PAGE_PATH_HEADER } from "@/lib/server/auth/page-actions";
import { contentSecurityPolicy, HSTS_HEADER } from "@/lib/core/security/headers";

/** Whether a path's percent-escapes decode (Next's own router answers 500 when they do not). */
function decodable(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}

export function proxy(request: NextRequest): NextResponse {
  // A malformed escape (`/runs/%`) is the caller's error: 400 with the API's error shape, or a 404 page.
  if (!decodable(request.nextUrl.pathname)) {
    if (request.nextUrl.pathname.startsWith("/api/")) {
      return NextResponse.json(
        { error: { code: "VALIDATION_FAILED", message: "The request path is invalid (a path segment is not valid percent-encoding: send a lone % as %25).", details: [{ path: "params", message: "not valid percent-encoding" }] } },
        { status: 400 },
      );
    }
    return new NextResponse("Not found: the address is not valid (a lone % must be written %25).", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
  }
  if (request.nextUrl.pathname.startsWith("/api/")) return NextResponse.next();
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const https = request.nextUrl.protocol === "https:" || request.headers.get("x-forwarded-proto") === "https";
  const policy = contentSecurityPolicy(nonce, { development: process.env.NODE_ENV === "development", https });
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("x-nonce", nonce);
  // For the 403 page, which Next renders apart from the page (lib/server/auth/page-actions.ts).
  requestHeaders.set(PAGE_PATH_HEADER, request.nextUrl.pathname);
  requestHeaders.set("Content-Security-Policy", policy);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("Content-Security-Policy", policy);
  if (https) response.headers.set(HSTS_HEADER.key, HSTS_HEADER.value);
  return response;
}

export const config = {
  matcher: [
    // API paths only when they hold a %: the agent hot path never passes through here otherwise.
    "/api/:rest(.*%.*)",
    {
      source: "/((?!api/|_next/static|_next/image|favicon.ico).*)",
      missing: [
        { type: "header", key: "next-router-prefetch" },
        { type: "header", key: "purpose", value: "prefetch" },
      ],
    },
  ],
};
