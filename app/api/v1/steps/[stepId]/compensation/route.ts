import * as api from "@/lib/api/contracts/calls";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { reportCompensationForAgent } from "@/lib/agent-api/unwind-steps";

export const POST = agentRoute(api.reportCompensation, async ({ prisma, principal, params, body }) => ({
  step: toWire(await reportCompensationForAgent({ prisma, principal, stepId: params.stepId, report: body })),
}));
