/**
 * POST /api/sim/reset [`{ searchLagMs? }`]: replaces the hosted simulated world with a fresh one
 * (empty ledger, no faults, seeded CRM records). For tests and the demo.
 *
 * NO AUTHENTICATION, on purpose: this is the simulated external world for the demo and the tests,
 * not a real system. Off (404) unless SAGABOARD_SIM=1; with SAGABOARD_SIM_SECRET set, only requests carrying it.
 */
import { readSimBody, resetHostedWorld, simRefusal } from "@/lib/demo/sim/host";
import { ZResetRequest } from "@/lib/demo/sim/rpc";

export async function POST(request: Request): Promise<Response> {
  const refused = simRefusal(request);
  if (refused) return refused;
  const body = await readSimBody(request, ZResetRequest, { optional: true });
  if (!body.ok) return body.response;
  const world = resetHostedWorld(body.data);
  return Response.json({ ok: true, searchLagMs: world.payments.searchLagMs });
}
