/**
 * POST /api/sim/reset [`{ searchLagMs? }`]: replaces the hosted simulated world with a fresh one
 * (empty ledger, no faults, seeded CRM records). For tests and the demo.
 *
 * NO AUTHENTICATION, on purpose: this is the simulated external world for the demo and the tests,
 * not a real system. Disabled (404) when SAGABOARD_SIM=0.
 */
import { readSimBody, resetHostedWorld, simDisabled, simEnabled } from "@/lib/sim/host";
import { ResetRequestSchema } from "@/lib/sim/rpc";

export async function POST(request: Request): Promise<Response> {
  if (!simEnabled()) return simDisabled();
  const body = await readSimBody(request, ResetRequestSchema, { optional: true });
  if (!body.ok) return body.response;
  const world = resetHostedWorld(body.data);
  return Response.json({ ok: true, searchLagMs: world.payments.searchLagMs });
}
