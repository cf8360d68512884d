import * as api from "@/lib/api/contracts/calls";
import { agentRoute } from "@/lib/api/route";
import { stepCompensateActionWire } from "@/lib/api/schemas/calls";
import { nextCompensateActionForAgent } from "@/lib/agent-api/call-commands";

export const POST = agentRoute(api.nextCompensateAction, async ({ prisma, principal, params, body }) =>
  stepCompensateActionWire(await nextCompensateActionForAgent(prisma, principal, params.stepId, body.draftedBy ?? null)),
);
