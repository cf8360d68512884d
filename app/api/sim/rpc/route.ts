/**
 * POST /api/sim/rpc: calls one allow-listed method of the hosted simulated world.
 *
 * NO AUTHENTICATION, on purpose: this is the simulated external world (fake payments, tickets,
 * email, warehouse, CRM) for the demo and the tests, standing in for other companies' APIs. It holds
 * no real data and moves no real money. Off (404) unless SAGABOARD_SIM=1; with SAGABOARD_SIM_SECRET set, only requests carrying it.
 *
 * Answers 200 with `{ ok: true, value }` or `{ ok: false, error }` (a provider error or a simulated
 * crash: the call reached the sim); 400 for a malformed request or a method outside the allow-list;
 * 500 when the sim itself failed unexpectedly (outcome unknown). See lib/demo/sim/rpc.ts.
 */
import { getHostedWorld, readSimBody, simRefusal, simError } from "@/lib/demo/sim/host";
import { dispatchRpc, RpcRequestError, ZRpcRequest } from "@/lib/demo/sim/rpc";

export async function POST(request: Request): Promise<Response> {
  const refused = simRefusal(request);
  if (refused) return refused;
  const body = await readSimBody(request, ZRpcRequest);
  if (!body.ok) return body.response;
  try {
    return Response.json(await dispatchRpc(getHostedWorld(), body.data));
  } catch (err) {
    if (err instanceof RpcRequestError) return simError(400, "invalid_request", err.message);
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return simError(500, "sim_internal_error", `The simulated ${body.data.system}.${body.data.method} failed: ${message}`);
  }
}
