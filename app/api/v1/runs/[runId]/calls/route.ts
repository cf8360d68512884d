import * as api from "@/lib/api/contracts/calls";
import { agentRoute } from "@/lib/api/route";
import { callAnswerWire, previousOutcome } from "@/lib/api/schemas/calls";
import { beginCallForAgent } from "@/lib/agent-api/begin-call";

export const POST = agentRoute(
  api.beginCall,
  async ({ prisma, principal, activeToken, verified, params, body }) => callAnswerWire(await beginCallForAgent({ prisma, principal, activeToken, verified, runId: params.runId, call: { ...body, previous: previousOutcome(body) } })),
  { guardedWrite: true },
);
