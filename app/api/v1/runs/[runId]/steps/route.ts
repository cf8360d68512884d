import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { getRunLogForAgent } from "@/lib/agent-api/get-run-log";

export const GET = agentRoute(api.listSteps, async ({ prisma, principal, params }) => ({
  steps: (await getRunLogForAgent({ prisma, principal, runId: params.runId })).steps.map(toWire),
}));
