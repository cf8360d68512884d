import * as api from "@/packages/client/src/protocol/contracts/worker";
import { agentRoute } from "@/lib/delivery/route";
import { taskToWire } from "@/packages/client/src/protocol/schemas/worker";
import { extendTaskLeaseForWorker } from "@/lib/server/agent-api/settle-task";

export const POST = agentRoute(api.heartbeatWorkerTask, async ({ prisma, principal, params, body }) => {
  const beat = await extendTaskLeaseForWorker({ prisma, principal, task: { taskId: params.taskId, ...body } });
  return beat.extended
    ? { extended: true, leaseUntil: beat.leaseUntil.toISOString(), task: null }
    : { extended: false, leaseUntil: null, task: beat.task ? taskToWire(beat.task) : null };
});
