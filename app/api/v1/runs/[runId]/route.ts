import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { getRunLogForAgent } from "@/lib/server/agent-api/get-run-log";

export const GET = agentRoute(api.getRun, async ({ prisma, principal, params }) => {
  const log = await getRunLogForAgent({ prisma, principal, runId: params.runId });
  return {
    run: toWire(log.run),
    steps: log.steps.map(toWire),
    pivots: log.pivots.map(toWire),
    escalations: log.escalations.map(toWire),
    corrections: log.corrections.map(toWire),
  };
});
