import * as api from "@/packages/client/src/protocol/contracts/worker";
import { agentRoute, withStatus } from "@/lib/delivery/route";
import { taskToWire } from "@/packages/client/src/protocol/schemas/worker";
import { requestUnwindForAgent } from "@/lib/server/agent-api/request-unwind";

export const POST = agentRoute(api.requestUnwind, async ({ prisma, principal, params, body }) => {
  const { created, task } = await requestUnwindForAgent({ prisma, principal, runId: params.runId, reason: body.reason });
  return withStatus(created ? 202 : 200, { created, task: taskToWire(task) });
});
