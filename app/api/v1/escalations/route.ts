import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { findEscalationForAgent } from "@/lib/agent-api/find-escalation";

export const GET = agentRoute(api.findEscalation, async ({ prisma, principal, query }) => {
  const escalation = await findEscalationForAgent({ prisma, principal, dedupeKey: query.dedupeKey });
  return { escalation: escalation ? toWire(escalation) : null };
});
