/**
 * GET /api/sim/ledger[?op=&system=&key=&ref=&outcome=]: the hosted world's effect ledger (every
 * attempt, in order, filtered) and the summary of the whole ledger. Dates are `{ "$date": iso }`.
 *
 * NO AUTHENTICATION, on purpose: this is the simulated external world for the demo and the tests
 * (its ledger is the tests' oracle), not a real system. Off (404) unless SAGABOARD_SIM=1; with SAGABOARD_SIM_SECRET set, only requests carrying it.
 */
import type { LedgerFilter, Outcome } from "@/lib/demo/sim/ledger";
import { getHostedWorld, simRefusal, simError } from "@/lib/demo/sim/host";
import { encodeJson } from "@/lib/demo/sim/rpc";

const OUTCOMES: readonly Outcome[] = ["effect", "rejected", "replayed", "not_found"];

export function GET(request: Request): Response {
  const refused = simRefusal(request);
  if (refused) return refused;
  const params = new URL(request.url).searchParams;
  const filter: LedgerFilter = {};
  for (const field of ["system", "op", "key", "ref"] as const) {
    const value = params.get(field);
    if (value !== null) filter[field] = value;
  }
  const outcome = params.get("outcome");
  if (outcome !== null) {
    if (!(OUTCOMES as readonly string[]).includes(outcome)) {
      return simError(400, "invalid_request", `outcome must be one of ${OUTCOMES.join(", ")}`, [
        { path: "query.outcome", message: "unknown outcome" },
      ]);
    }
    filter.outcome = outcome as Outcome;
  }
  const world = getHostedWorld();
  return Response.json(encodeJson({ entries: world.ledger.operations(filter), summary: world.summary() }));
}
