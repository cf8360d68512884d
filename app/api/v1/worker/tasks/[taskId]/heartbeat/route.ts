import * as api from "@/lib/api/contracts/worker";
import { agentRoute } from "@/lib/api/route";
import { taskToWire } from "@/lib/api/schemas/worker";
import { extendTaskLeaseForWorker } from "@/lib/agent-api/settle-task";

export const POST = agentRoute(api.heartbeatWorkerTask, async ({ prisma, principal, params, body }) => {
  const beat = await extendTaskLeaseForWorker({ prisma, principal, task: { taskId: params.taskId, ...body } });
  return beat.extended
    ? { extended: true, leaseUntil: beat.leaseUntil.toISOString(), task: null }
    : { extended: false, leaseUntil: null, task: beat.task ? taskToWire(beat.task) : null };
});
