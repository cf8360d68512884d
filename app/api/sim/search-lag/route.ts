/**
 * POST /api/sim/search-lag `{ ms }`: sets how far every search of the hosted simulated world trails
 * its writes, so a test can make an effect visible (or invisible) to reconcile mid-scenario.
 *
 * NO AUTHENTICATION, on purpose: this is the simulated external world for the demo and the tests,
 * not a real system. Off (404) unless SAGABOARD_SIM=1; with SAGABOARD_SIM_SECRET set, only requests carrying it.
 */
import { getHostedWorld, readSimBody, simRefusal } from "@/lib/demo/sim/host";
import { ZSearchLagRequest } from "@/lib/demo/sim/rpc";

export async function POST(request: Request): Promise<Response> {
  const refused = simRefusal(request);
  if (refused) return refused;
  const body = await readSimBody(request, ZSearchLagRequest);
  if (!body.ok) return body.response;
  getHostedWorld().setSearchLag(body.data.ms);
  return Response.json({ ok: true, ms: body.data.ms });
}
