import * as api from "@/lib/api/contracts/calls";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { completeRunForAgent } from "@/lib/agent-api/complete-run";

export const POST = agentRoute(api.completeRun, async ({ prisma, principal, params }) => ({
  run: toWire(await completeRunForAgent({ prisma, principal, runId: params.runId })),
}));
