import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { getRunLog } from "@/lib/agent-api/runs";

export const GET = agentRoute(api.getRun, async ({ prisma, principal, params }) => {
  const log = await getRunLog(prisma, principal, params.runId);
  return {
    run: toWire(log.run),
    steps: log.steps.map(toWire),
    pivots: log.pivots.map(toWire),
    escalations: log.escalations.map(toWire),
    corrections: log.corrections.map(toWire),
  };
});
