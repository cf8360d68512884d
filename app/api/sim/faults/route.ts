/**
 * POST /api/sim/faults `{ op, fault, times? }`: arms a fault on the hosted simulated world.
 * DELETE /api/sim/faults: disarms every fault. GET /api/sim/faults[?op=]: faults still armed.
 *
 * NO AUTHENTICATION, on purpose: this is the simulated external world for the demo and the tests,
 * not a real system. Off (404) unless SAGABOARD_SIM=1; with SAGABOARD_SIM_SECRET set, only requests carrying it. A `when` predicate cannot cross HTTP, so
 * only faults that apply to the next calls of `op` in order are supported.
 */
import { getHostedWorld, readSimBody, simRefusal } from "@/lib/demo/sim/host";
import { ZInjectFaultRequest } from "@/lib/demo/sim/rpc";

export async function POST(request: Request): Promise<Response> {
  const refused = simRefusal(request);
  if (refused) return refused;
  const body = await readSimBody(request, ZInjectFaultRequest);
  if (!body.ok) return body.response;
  const { op, fault, times } = body.data;
  const world = getHostedWorld();
  world.faults.inject(op, fault, { times: times === "infinite" ? Infinity : times });
  return Response.json(pendingBody(op));
}

export function DELETE(request: Request): Response {
  const refused = simRefusal(request);
  if (refused) return refused;
  getHostedWorld().faults.clear();
  return Response.json({ ok: true, pending: 0 });
}

export function GET(request: Request): Response {
  const refused = simRefusal(request);
  if (refused) return refused;
  const op = new URL(request.url).searchParams.get("op") ?? undefined;
  return Response.json(pendingBody(op));
}

/** `Infinity` is not JSON: an until-cleared fault is reported as "infinite". */
function pendingBody(op: string | undefined): { ok: true; pending: number | "infinite" } {
  const pending = getHostedWorld().faults.pending(op);
  return { ok: true, pending: Number.isFinite(pending) ? pending : "infinite" };
}
