import * as api from "@/lib/api/contracts/runs";
import { agentRoute, withStatus } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { recordIntent } from "@/lib/harness/record-intent";
import { getRunLog } from "@/lib/harness/runs";

export const GET = agentRoute(api.listSteps, async ({ prisma, principal, params }) => ({
  steps: (await getRunLog(prisma, principal, params.runId)).steps.map(toWire),
}));

export const POST = agentRoute(
  api.recordIntent,
  async ({ prisma, principal, activeToken, verified, params, body }) => {
    const { created, step } = await recordIntent(prisma, { principal, activeToken, verified }, params.runId, body.intent);
    return withStatus(created ? 201 : 200, { created, step: toWire(step) });
  },
  { guardedWrite: true },
);
