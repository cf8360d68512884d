import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute, withStatus } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { listEscalationsForAgent } from "@/lib/server/agent-api/list-escalations";
import { raiseEscalationForAgent } from "@/lib/server/agent-api/raise-escalation";

export const GET = agentRoute(api.listEscalations, async ({ prisma, principal, params, query }) => {
  const status = query.status === undefined ? undefined : Array.isArray(query.status) ? query.status : [query.status];
  return { escalations: (await listEscalationsForAgent({ prisma, principal, runId: params.runId, status })).map(toWire) };
});

export const POST = agentRoute(api.raiseEscalation, async ({ prisma, principal, params, body }) => {
  const { created, escalation } = await raiseEscalationForAgent({ prisma, principal, runId: params.runId, escalation: body.escalation, event: body.event });
  return withStatus(created ? 201 : 200, { created, escalation: toWire(escalation) });
});
