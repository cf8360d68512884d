import * as api from "@/lib/api/contracts/worker";
import { agentRoute } from "@/lib/api/route";
import { taskToWire } from "@/lib/api/schemas/worker";
import { failTaskForWorker } from "@/lib/agent-api/settle-task";

export const POST = agentRoute(api.failWorkerTask, async ({ prisma, principal, params, body }) => {
  const settled = await failTaskForWorker({ prisma, principal, task: { taskId: params.taskId, ...body } });
  return { settled: settled.settled, task: settled.task ? taskToWire(settled.task) : null };
});
