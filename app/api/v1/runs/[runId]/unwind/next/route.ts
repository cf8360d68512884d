import * as api from "@/lib/protocol/contracts/calls";
import { agentRoute } from "@/lib/delivery/route";
import { unwindActionWire } from "@/lib/protocol/schemas/calls";
import { nextUnwindActionForAgent } from "@/lib/server/agent-api/unwind-steps";

export const POST = agentRoute(api.nextUnwindAction, async ({ prisma, principal, params, body }) =>
  unwindActionWire(await nextUnwindActionForAgent({ prisma, principal, runId: params.runId, walk: body })),
);
