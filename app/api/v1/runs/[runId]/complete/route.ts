import * as api from "@/packages/client/src/protocol/contracts/calls";
import { agentRoute } from "@/lib/delivery/route";
import { previousOutcome } from "@/packages/client/src/protocol/schemas/calls";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { completeRunForAgent } from "@/lib/server/agent-api/complete-run";

export const POST = agentRoute(api.completeRun, async ({ prisma, principal, activeToken, verified, params, body }) => {
  const { run, previous } = await completeRunForAgent({ prisma, principal, activeToken, verified, runId: params.runId, previous: previousOutcome(body) });
  return previous ? { run: toWire(run), previous: { step: toWire(previous) } } : { run: toWire(run) };
});
