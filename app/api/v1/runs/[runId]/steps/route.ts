import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { getRunLog } from "@/lib/agent-api/runs";

export const GET = agentRoute(api.listSteps, async ({ prisma, principal, params }) => ({
  steps: (await getRunLog(prisma, principal, params.runId)).steps.map(toWire),
}));
