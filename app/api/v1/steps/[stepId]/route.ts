import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { getAgentStep, agentApiStore } from "@/lib/agent-api/agent-access";

export const GET = agentRoute(api.getStep, async ({ prisma, principal, params }) => ({
  step: toWire((await getAgentStep(agentApiStore(prisma), principal, params.stepId)).step),
}));
