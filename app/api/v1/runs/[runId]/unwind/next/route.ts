import * as api from "@/lib/api/contracts/calls";
import { agentRoute } from "@/lib/api/route";
import { unwindActionWire } from "@/lib/api/schemas/calls";
import { nextUnwindActionForAgent } from "@/lib/agent-api/call-commands";

export const POST = agentRoute(api.nextUnwindAction, async ({ prisma, principal, params, body }) =>
  unwindActionWire(await nextUnwindActionForAgent(prisma, principal, params.runId, body)),
);
