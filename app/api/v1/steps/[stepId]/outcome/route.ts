import * as api from "@/packages/client/src/protocol/contracts/calls";
import { agentRoute } from "@/lib/delivery/route";
import { nextCursorAfter, outcomeReport } from "@/packages/client/src/protocol/schemas/calls";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { reportOutcomeForAgent } from "@/lib/server/agent-api/report-outcome";

export const POST = agentRoute(
  api.reportOutcome,
  async ({ prisma, principal, activeToken, verified, params, body }) => {
    const step = await reportOutcomeForAgent({ prisma, principal, activeToken, verified, stepId: params.stepId, outcome: outcomeReport(body) });
    return { step: toWire(step), nextCursor: nextCursorAfter(step) };
  },
  { guardedWrite: true },
);
