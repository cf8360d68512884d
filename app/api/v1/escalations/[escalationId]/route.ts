import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { getEscalationForAgent } from "@/lib/server/agent-api/get-escalation";

export const GET = agentRoute(api.getEscalation, async ({ prisma, principal, params }) => ({
  escalation: toWire(await getEscalationForAgent({ prisma, principal, escalationId: params.escalationId })),
}));
