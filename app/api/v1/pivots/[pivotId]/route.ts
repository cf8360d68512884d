import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { getPivotForAgent } from "@/lib/server/agent-api/get-pivot";

// Long-polling: the request waits (up to 30 s) while the pivot is PENDING; the decision lives in the
// database, so it reaches the agent whichever app instance took it, and a restart loses nothing.
export const GET = agentRoute(api.getPivot, async ({ prisma, principal, params, query, request }) => ({
  pivot: toWire(await getPivotForAgent({ prisma, principal, pivotId: params.pivotId, waitMs: query.waitMs, signal: request.signal })),
}));
