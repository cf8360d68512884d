import { jsonResponse } from "@/lib/delivery/route";

/**
 * Liveness probe: answers as soon as the server can handle requests (it does not touch the database).
 * Never cached, and answered like every API route (not gzipped), so the benchmark's "static route"
 * floor costs what the framework costs and nothing our routes skip.
 */
export function GET(): Response {
  return jsonResponse({ status: 200, body: { ok: true } });
}
