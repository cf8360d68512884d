import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { getAgentStep, agentApiStore } from "@/lib/server/agent-api/agent-access";

export const GET = agentRoute(api.getStep, async ({ prisma, principal, params }) => ({
  step: toWire((await getAgentStep(agentApiStore(prisma), principal, params.stepId)).step),
}));
