/**
 * A second app instance as its own OS process (tests/faults/multi-instance.test.ts): serves the app's
 * route handlers (app/api, found on disk the way Next.js finds them; tests/support/api-router.ts
 * does the same with Vite's import.meta.glob, which a tsx process does not have) with node:http on a
 * free port, over DATABASE_URL with its own connection pool. Prints {"url": ...} when listening.
 *
 * Serves the agent API (/api/v1, without the OpenAPI document), the hosted simulated systems (/api/sim) and /api/health. Not the
 * dashboard routes: they reach next-auth, whose CommonJS default exports only a bundler (Next, Vite)
 * unwraps; a tsx process cannot load them.
 */
import { readdirSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { register } from "node:module";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";

type Handler = (request: Request, ctx: { params: Promise<Record<string, string>> }) => Response | Promise<Response>;
type RouteModule = Partial<Record<string, Handler>>;

function routeFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...routeFiles(full));
    else if (name === "route.ts") out.push(full);
  }
  return out;
}

// Some route modules reach components that import CSS modules (Next bundles those); here they are empty.
const cssHook = `export async function load(url, context, next) {
  if (url.endsWith(".css")) return { format: "module", source: "export default {};", shortCircuit: true };
  return next(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(cssHook)}`);

const apiDir = path.join(process.cwd(), "app", "api");
const routes: [string, RouteModule][] = [];
for (const file of routeFiles(apiDir)) {
  const rel = path.relative(path.join(process.cwd(), "app"), file).split(path.sep).join("/");
  if (rel.startsWith("api/auth/") || rel.startsWith("api/dashboard/") || rel.startsWith("api/v1/openapi")) continue;
  const pattern = `/${rel}`.replace(/\/route\.ts$/, "").replace(/\[(\w+)\]/g, ":$1");
  routes.push([pattern, (await import(pathToFileURL(file).href)) as RouteModule]);
}
routes.sort((a, b) => a[0].split(":").length - b[0].split(":").length);

function match(pattern: string, pathname: string): Record<string, string> | null {
  const a = pattern.split("/");
  const b = pathname.split("/");
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    if (a[i]!.startsWith(":")) params[a[i]!.slice(1)] = decodeURIComponent(b[i]!);
    else if (a[i] !== b[i]) return null;
  }
  return params;
}

async function handle(req: IncomingMessage, res: ServerResponse, base: string): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
  const hasBody = req.method !== "GET" && req.method !== "HEAD" && chunks.length > 0;
  const request = new Request(new URL(req.url ?? "/", base), { method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined });
  const url = new URL(request.url);
  let response: Response = Response.json({ error: { code: "NOT_FOUND", message: `no route for ${url.pathname}`, details: [] } }, { status: 404 });
  for (const [pattern, module] of routes) {
    const params = match(pattern, url.pathname);
    if (!params) continue;
    const handler = module[request.method];
    response = handler ? await handler(request, { params: Promise.resolve(params) }) : new Response(null, { status: 405 });
    break;
  }
  res.statusCode = response.status;
  response.headers.forEach((value, key) => res.setHeader(key, value));
  res.end(Buffer.from(await response.arrayBuffer()));
}

const server = createServer((req, res) => {
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  handle(req, res, base).catch((e: unknown) => {
    res.statusCode = 500;
    res.end(String(e));
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
});
