import * as api from "@/lib/api/contracts/calls";
import { agentRoute } from "@/lib/api/route";
import { nextCursorAfter, outcomeReport } from "@/lib/api/schemas/calls";
import { toWire } from "@/lib/api/schemas/saga";
import { reportOutcomeForAgent } from "@/lib/agent-api/report-outcome";

export const POST = agentRoute(
  api.reportOutcome,
  async ({ prisma, principal, activeToken, verified, params, body }) => {
    const step = await reportOutcomeForAgent({ prisma, principal, activeToken, verified, stepId: params.stepId, outcome: outcomeReport(body) });
    return { step: toWire(step), nextCursor: nextCursorAfter(step) };
  },
  { guardedWrite: true },
);
