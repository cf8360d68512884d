import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { getEscalationForAgent } from "@/lib/agent-api/get-escalation";

export const GET = agentRoute(api.getEscalation, async ({ prisma, principal, params }) => ({
  escalation: toWire(await getEscalationForAgent({ prisma, principal, escalationId: params.escalationId })),
}));
