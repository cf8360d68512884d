import * as api from "@/lib/protocol/contracts/runs";
import { agentRoute } from "@/lib/delivery/route";
import { toWire } from "@/lib/protocol/schemas/saga";
import { getEscalationForAgent } from "@/lib/server/agent-api/get-escalation";

export const GET = agentRoute(api.getEscalation, async ({ prisma, principal, params }) => ({
  escalation: toWire(await getEscalationForAgent({ prisma, principal, escalationId: params.escalationId })),
}));
