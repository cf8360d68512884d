/**
 * A fetch that dispatches to the app's route handlers in-process, by path, so the HTTP client and
 * the API run end to end in a unit-test process without a server.
 */
/// <reference types="vite/client" />
import type { RouteHandler } from "@/lib/delivery/route";

type AnyHandler = RouteHandler | ((request: Request) => Response | Promise<Response>) | (() => Response);
type RouteModule = Partial<Record<"GET" | "POST" | "PATCH" | "PUT" | "DELETE", AnyHandler>>;

// Every route module under app/api, found the way Next.js finds them (folder = path, [x] = param),
// so a new route is served here without editing this file. Auth's route needs a Next request
// context and is not served.
const modules = import.meta.glob<RouteModule>(["/app/api/**/route.ts", "!/app/api/auth/**"], { eager: true });
const ROUTES: [string, RouteModule][] = Object.entries(modules)
  .map(([file, module]): [string, RouteModule] => [
    file.replace(/^\/app/, "").replace(/\/route\.ts$/, "").replace(/\[(\w+)\]/g, ":$1"),
    module,
  ])
  // Fewer parameters first, so a literal segment wins over a parameter at the same depth (as in Next).
  .sort((a, b) => a[0].split(":").length - b[0].split(":").length);

function match(pattern: string, pathname: string): Record<string, string> | null {
  const a = pattern.split("/");
  const b = pathname.split("/");
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    const p = a[i]!;
    const v = b[i]!;
    if (p.startsWith(":")) params[p.slice(1)] = v;
    else if (p !== v) return null;
  }
  return params;
}

/** Counts requests per "METHOD /pattern", for tests that measure round trips. */
export const requestCounts = new Map<string, number>();

/** A fetch over the route handlers. */
export const routeFetch: typeof fetch = async (input, init) => {
  const request = input instanceof Request ? input : new Request(input, init);
  const url = new URL(request.url);
  for (const [pattern, module] of ROUTES) {
    const params = match(pattern, url.pathname);
    if (!params) continue;
    const handler = module[request.method as keyof RouteModule];
    if (!handler) return new Response(null, { status: 405 });
    const key = `${request.method} ${pattern}`;
    requestCounts.set(key, (requestCounts.get(key) ?? 0) + 1);
    // Decoded when the handler reads them, as Next does: a malformed %-escape rejects (URIError) then.
    const decoded = (async () => Object.fromEntries(Object.entries(params).map(([k, v]) => [k, decodeURIComponent(v)])))();
    decoded.catch(() => undefined);
    return (handler as RouteHandler)(request, { params: decoded });
  }
  return new Response(JSON.stringify({ error: { code: "NOT_FOUND", message: `no route for ${url.pathname}`, details: [] } }), { status: 404 });
};

/** Every served route file as [pattern, methods it exports] (`/api/v1/runs/:runId`), for tests that cover them all. */
export const routeTable: readonly { pattern: string; methods: string[] }[] = ROUTES.map(([pattern, module]) => ({
  pattern,
  methods: (["GET", "POST", "PATCH", "PUT", "DELETE"] as const).filter((m) => typeof module[m] === "function"),
}));
