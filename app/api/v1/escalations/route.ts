import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { findEscalationForAgent } from "@/lib/server/agent-api/find-escalation";

export const GET = agentRoute(api.findEscalation, async ({ prisma, principal, query }) => {
  const escalation = await findEscalationForAgent({ prisma, principal, dedupeKey: query.dedupeKey });
  return { escalation: escalation ? toWire(escalation) : null };
});
