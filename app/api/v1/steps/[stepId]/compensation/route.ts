import * as api from "@/packages/client/src/protocol/contracts/calls";
import { agentRoute } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { reportCompensationForAgent } from "@/lib/server/agent-api/unwind-steps";

export const POST = agentRoute(api.reportCompensation, async ({ prisma, principal, params, body }) => ({
  step: toWire(await reportCompensationForAgent({ prisma, principal, stepId: params.stepId, report: body })),
}));
