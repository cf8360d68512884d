/**
 * A fetch that dispatches to the app's route handlers in-process, by path, so the HTTP client and
 * the API run end to end in a unit-test process without a server.
 */
import type { RouteHandler } from "@/lib/api/route";
import * as runs from "@/app/api/v1/runs/route";
import * as run from "@/app/api/v1/runs/[runId]/route";
import * as runStatus from "@/app/api/v1/runs/[runId]/status/route";
import * as runAudit from "@/app/api/v1/runs/[runId]/audit/route";
import * as runSteps from "@/app/api/v1/runs/[runId]/steps/route";
import * as runPivots from "@/app/api/v1/runs/[runId]/pivots/route";
import * as runEscalations from "@/app/api/v1/runs/[runId]/escalations/route";
import * as runCorrections from "@/app/api/v1/runs/[runId]/corrections/route";
import * as step from "@/app/api/v1/steps/[stepId]/route";
import * as pivot from "@/app/api/v1/pivots/[pivotId]/route";
import * as escalations from "@/app/api/v1/escalations/route";
import * as escalation from "@/app/api/v1/escalations/[escalationId]/route";
import * as tools from "@/app/api/v1/tools/route";
import * as openapi from "@/app/api/v1/openapi.json/route";
import * as simRpc from "@/app/api/sim/rpc/route";
import * as simFaults from "@/app/api/sim/faults/route";
import * as simLedger from "@/app/api/sim/ledger/route";
import * as simReset from "@/app/api/sim/reset/route";
import * as simLag from "@/app/api/sim/search-lag/route";

type AnyHandler = RouteHandler | ((request: Request) => Response | Promise<Response>) | (() => Response);
type RouteModule = Partial<Record<"GET" | "POST" | "PATCH" | "PUT" | "DELETE", AnyHandler>>;

const ROUTES: [string, RouteModule][] = [
  ["/api/v1/runs", runs],
  ["/api/v1/runs/:runId", run],
  ["/api/v1/runs/:runId/status", runStatus],
  ["/api/v1/runs/:runId/audit", runAudit],
  ["/api/v1/runs/:runId/steps", runSteps],
  ["/api/v1/runs/:runId/pivots", runPivots],
  ["/api/v1/runs/:runId/escalations", runEscalations],
  ["/api/v1/runs/:runId/corrections", runCorrections],
  ["/api/v1/steps/:stepId", step],
  ["/api/v1/pivots/:pivotId", pivot],
  ["/api/v1/escalations", escalations],
  ["/api/v1/escalations/:escalationId", escalation],
  ["/api/v1/tools", tools],
  ["/api/v1/openapi.json", openapi],
  ["/api/sim/rpc", simRpc],
  ["/api/sim/faults", simFaults],
  ["/api/sim/ledger", simLedger],
  ["/api/sim/reset", simReset],
  ["/api/sim/search-lag", simLag],
];

function match(pattern: string, pathname: string): Record<string, string> | null {
  const a = pattern.split("/");
  const b = pathname.split("/");
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    const p = a[i]!;
    const v = b[i]!;
    if (p.startsWith(":")) params[p.slice(1)] = decodeURIComponent(v);
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
    return (handler as RouteHandler)(request, { params: Promise.resolve(params) });
  }
  return new Response(JSON.stringify({ error: { code: "NOT_FOUND", message: `no route for ${url.pathname}`, details: [] } }), { status: 404 });
};
