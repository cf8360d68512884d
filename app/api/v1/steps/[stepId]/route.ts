import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { getAgentStep, harnessStore } from "@/lib/agent-api/access";
import { updateStepForAgent } from "@/lib/agent-api/update-step";

export const GET = agentRoute(api.getStep, async ({ prisma, principal, params }) => ({
  step: toWire((await getAgentStep(harnessStore(prisma), principal, params.stepId)).step),
}));

export const PATCH = agentRoute(
  api.updateStep,
  async ({ prisma, principal, activeToken, verified, params, body }) => {
    const toDate = (v: string | null | undefined) => (v === undefined ? undefined : v === null ? null : new Date(v));
    const patch = {
      ...body.patch,
      compensationRequestedAt: toDate(body.patch.compensationRequestedAt),
      compensationConfirmedAt: toDate(body.patch.compensationConfirmedAt),
    };
    const { step } = await updateStepForAgent(prisma, { principal, activeToken, verified }, params.stepId, body.fence, patch, body.event);
    return { step: step ? toWire(step) : null };
  },
  { guardedWrite: true },
);
