import * as api from "@/lib/api/contracts/calls";
import { agentRoute } from "@/lib/api/route";
import { stepCompensateActionWire } from "@/lib/api/schemas/calls";
import { nextCompensateActionForAgent } from "@/lib/agent-api/unwind-steps";

export const POST = agentRoute(api.nextCompensateAction, async ({ prisma, principal, params, body }) =>
  stepCompensateActionWire(await nextCompensateActionForAgent({ prisma, principal, stepId: params.stepId, draftedBy: body.draftedBy ?? null })),
);
