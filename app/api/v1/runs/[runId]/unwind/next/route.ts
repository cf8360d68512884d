import * as api from "@/packages/client/src/protocol/contracts/calls";
import { agentRoute } from "@/lib/delivery/route";
import { unwindActionWire } from "@/packages/client/src/protocol/schemas/calls";
import { nextUnwindActionForAgent } from "@/lib/server/agent-api/unwind-steps";

export const POST = agentRoute(api.nextUnwindAction, async ({ prisma, principal, params, body }) =>
  unwindActionWire(await nextUnwindActionForAgent({ prisma, principal, runId: params.runId, walk: body })),
);
