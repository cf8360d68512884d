import * as api from "@/packages/client/src/protocol/contracts/worker";
import { agentRoute } from "@/lib/delivery/route";
import { taskToWire } from "@/packages/client/src/protocol/schemas/worker";
import { completeTaskForWorker } from "@/lib/server/agent-api/settle-task";

export const POST = agentRoute(api.completeWorkerTask, async ({ prisma, principal, params, body }) => {
  const settled = await completeTaskForWorker({ prisma, principal, task: { taskId: params.taskId, ...body } });
  return { settled: settled.settled, task: settled.task ? taskToWire(settled.task) : null };
});
