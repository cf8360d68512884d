import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute, withStatus } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { listPivotsForAgent } from "@/lib/server/agent-api/list-pivots";
import { requestPivotForAgent } from "@/lib/server/agent-api/request-pivot";

export const GET = agentRoute(api.listPivots, async ({ prisma, principal, params }) => ({
  pivots: (await listPivotsForAgent({ prisma, principal, runId: params.runId })).map(toWire),
}));

export const POST = agentRoute(api.requestPivot, async ({ prisma, principal, params, body }) => {
  const pivot = await requestPivotForAgent({
    prisma,
    principal,
    runId: params.runId,
    pivot: { summary: body.summary, plan: body.plan, deadline: body.deadline ? new Date(body.deadline) : null },
  });
  return withStatus(201, { pivot: toWire(pivot) });
});
