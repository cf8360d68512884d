import { answerScrape } from "@/lib/core/observability/metrics-endpoint";

/** Prometheus scrape: off unless SAGABOARD_METRICS_TOKEN is set, then only with that bearer token. */
export function GET(request: Request): Promise<Response> {
  return answerScrape(request);
}
