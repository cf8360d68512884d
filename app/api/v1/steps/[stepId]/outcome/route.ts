import * as api from "@/lib/protocol/contracts/calls";
import { agentRoute } from "@/lib/delivery/route";
import { nextCursorAfter, outcomeReport } from "@/lib/protocol/schemas/calls";
import { toWire } from "@/lib/protocol/schemas/saga";
import { reportOutcomeForAgent } from "@/lib/server/agent-api/report-outcome";

export const POST = agentRoute(
  api.reportOutcome,
  async ({ prisma, principal, activeToken, verified, params, body }) => {
    const step = await reportOutcomeForAgent({ prisma, principal, activeToken, verified, stepId: params.stepId, outcome: outcomeReport(body) });
    return { step: toWire(step), nextCursor: nextCursorAfter(step) };
  },
  { guardedWrite: true },
);
