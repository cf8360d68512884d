import * as api from "@/lib/api/contracts/calls";
import { agentRoute } from "@/lib/api/route";
import { previousOutcome } from "@/lib/api/schemas/calls";
import { toWire } from "@/lib/api/schemas/saga";
import { completeRunForAgent } from "@/lib/agent-api/complete-run";

export const POST = agentRoute(api.completeRun, async ({ prisma, principal, activeToken, verified, params, body }) => {
  const { run, previous } = await completeRunForAgent({ prisma, principal, activeToken, verified, runId: params.runId, previous: previousOutcome(body) });
  return previous ? { run: toWire(run), previous: { step: toWire(previous) } } : { run: toWire(run) };
});
