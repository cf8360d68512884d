import * as api from "@/packages/client/src/protocol/contracts/calls";
import { agentRoute } from "@/lib/delivery/route";
import { callAnswerWire, previousOutcome } from "@/packages/client/src/protocol/schemas/calls";
import { beginCallForAgent } from "@/lib/server/agent-api/begin-call";

export const POST = agentRoute(
  api.beginCall,
  async ({ prisma, principal, activeToken, verified, params, body }) => callAnswerWire(await beginCallForAgent({ prisma, principal, activeToken, verified, runId: params.runId, call: { ...body, previous: previousOutcome(body) } })),
  { guardedWrite: true },
);
