import * as api from "@/packages/client/src/protocol/contracts/worker";
import { agentRoute } from "@/lib/delivery/route";
import { taskToWire } from "@/packages/client/src/protocol/schemas/worker";
import { failTaskForWorker } from "@/lib/server/agent-api/settle-task";

export const POST = agentRoute(api.failWorkerTask, async ({ prisma, principal, params, body }) => {
  const settled = await failTaskForWorker({ prisma, principal, task: { taskId: params.taskId, ...body } });
  return { settled: settled.settled, task: settled.task ? taskToWire(settled.task) : null };
});
