/** A worker claims tasks (unwinds, compensations, lookups, corrections) for the tools its token holds. */
import { payloadFits } from "@/packages/client/src/protocol/schemas/worker";
import { prismaTaskQueue } from "@/lib/server/worker/queue";
import { assertWorker, type AgentCaller } from "./agent-access";
import { type ClaimedTask } from "@/packages/client/src/protocol/tasks/task";

/**
 * Claims tasks within the token's tool scope (and the worker's own list, if it names one). A task
 * whose payload does not fit its kind (the wire types it per kind) is failed for good here, as the
 * worker would refuse it, instead of being handed out.
 */
export async function claimTasksForWorker({
  prisma,
  principal,
  claim: request,
}: AgentCaller & { claim: { workerId: string; tools?: string[] | undefined; max: number; leaseMs: number } }): Promise<ClaimedTask[]> {
  assertWorker(principal);
  const tools = request.tools ? request.tools.filter((t) => principal.tools.includes(t)) : principal.tools;
  const queue = prismaTaskQueue(prisma);
  const claimed = await queue.claim({ workerId: request.workerId, tools, max: request.max, leaseMs: request.leaseMs });
  const unfit = claimed.filter((task) => !payloadFits(task));
  for (const task of unfit) {
    const message = `a ${task.kind} task's payload does not fit its kind (see the task schema in the OpenAPI document); it was refused for good`;
    const error = { name: "TaskRefused", code: "INVALID_PAYLOAD", message, attempt: task.attempt, workerId: request.workerId, permanent: true };
    await queue.fail({ taskId: task.id, attempt: task.attempt, workerId: request.workerId, error, retry: false });
  }
  return unfit.length === 0 ? claimed : claimed.filter((task) => payloadFits(task));
}
