import * as api from "@/packages/client/src/protocol/contracts/calls";
import { agentRoute } from "@/lib/delivery/route";
import { stepCompensateActionWire } from "@/packages/client/src/protocol/schemas/calls";
import { nextCompensateActionForAgent } from "@/lib/server/agent-api/unwind-steps";

export const POST = agentRoute(api.nextCompensateAction, async ({ prisma, principal, params, body }) =>
  stepCompensateActionWire(await nextCompensateActionForAgent({ prisma, principal, stepId: params.stepId, draftedBy: body.draftedBy ?? null })),
);
