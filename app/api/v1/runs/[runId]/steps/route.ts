import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { getRunLogForAgent } from "@/lib/server/agent-api/get-run-log";

export const GET = agentRoute(api.listSteps, async ({ prisma, principal, params }) => ({
  steps: (await getRunLogForAgent({ prisma, principal, runId: params.runId })).steps.map(toWire),
}));
