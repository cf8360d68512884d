import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { getPivotForAgent } from "@/lib/agent-api/pivots";

// Long-polling: the request waits (up to 30 s) while the pivot is PENDING; the decision lives in the
// database, so it reaches the agent whichever app instance took it, and a restart loses nothing.
export const GET = agentRoute(api.getPivot, async ({ prisma, principal, params, query, request }) => ({
  pivot: toWire(await getPivotForAgent(prisma, principal, params.pivotId, query.waitMs, request.signal)),
}));
