/**
 * GET /api/metrics: the Prometheus endpoint. Off unless SAGABOARD_METRICS_TOKEN is set (404, saying
 * how to turn it on); when on, only a caller sending `Authorization: Bearer <that token>` is answered
 * (401 otherwise), since the figures name tools and say where the saga is stuck. The token is compared
 * in constant time.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { getPrisma } from "@/lib/core/db/prisma";
import { serverLog } from "@/lib/core/observability/log";
import { exposition, EXPOSITION_CONTENT_TYPE } from "./exposition";
import { requestLatencyFamily } from "./request-latency";
import { sagaMetricFamilies } from "./saga-metrics";

/** The environment variable holding the scrape token. */
export const METRICS_TOKEN_VARIABLE = "SAGABOARD_METRICS_TOKEN";

const digest = (s: string) => createHash("sha256").update(s).digest();

function errorResponse(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: { code, message, details: [] } }), { status, headers: { "content-type": "application/json", "cache-control": "no-store", ...headers } });
}

/** Whether `authorization` carries the scrape token. */
export function scrapeAuthorized(authorization: string | null, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

/** Answers a scrape: the saga's families from the rows and this process's request latency. */
export async function answerScrape(request: Request, env: Record<string, string | undefined> = process.env): Promise<Response> {
  const token = env[METRICS_TOKEN_VARIABLE]?.trim();
  if (!token) return errorResponse(404, "NOT_FOUND", `Metrics are off. Set ${METRICS_TOKEN_VARIABLE} on the server and scrape with "Authorization: Bearer <token>".`);
  if (!scrapeAuthorized(request.headers.get("authorization"), token)) {
    return errorResponse(401, "UNAUTHORIZED", `Send the scrape token as "Authorization: Bearer <token>" (the server's ${METRICS_TOKEN_VARIABLE}).`, { "www-authenticate": 'Bearer realm="sagaboard-metrics"' });
  }
  try {
    const families = [...(await sagaMetricFamilies(await getPrisma())), requestLatencyFamily()];
    return new Response(exposition(families), { status: 200, headers: { "content-type": EXPOSITION_CONTENT_TYPE, "cache-control": "no-store" } });
  } catch (e) {
    serverLog().error({ err: e }, "reading the metrics failed");
    return errorResponse(500, "INTERNAL", "Reading the saga's figures failed; the server log has the cause. Retry the scrape.");
  }
}
