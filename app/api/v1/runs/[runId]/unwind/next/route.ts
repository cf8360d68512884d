import * as api from "@/lib/api/contracts/calls";
import { agentRoute } from "@/lib/api/route";
import { unwindActionWire } from "@/lib/api/schemas/calls";
import { nextUnwindActionForAgent } from "@/lib/agent-api/unwind-steps";

export const POST = agentRoute(api.nextUnwindAction, async ({ prisma, principal, params, body }) =>
  unwindActionWire(await nextUnwindActionForAgent({ prisma, principal, runId: params.runId, walk: body })),
);
