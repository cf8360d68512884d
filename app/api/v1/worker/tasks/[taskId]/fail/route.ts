import * as api from "@/lib/api/contracts/worker";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { failTaskForWorker } from "@/lib/agent-api/settle-task";

export const POST = agentRoute(api.failWorkerTask, async ({ prisma, principal, params, body }) => {
  const settled = await failTaskForWorker({ prisma, principal, task: { taskId: params.taskId, ...body } });
  return { settled: settled.settled, task: settled.task ? toWire(settled.task) : null };
});
