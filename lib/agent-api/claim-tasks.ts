/** A worker claims tasks (unwinds, compensations, lookups, corrections) for the tools its token holds. */
import { prismaTaskQueue } from "@/lib/worker/queue";
import { assertWorker, type AgentCaller } from "./agent-access";
import { type ClaimedTask } from "@/lib/worker/task";

/** Claims tasks within the token's tool scope (and the worker's own list, if it names one). */
export async function claimTasksForWorker({
  prisma,
  principal,
  claim: request,
}: AgentCaller & { claim: { workerId: string; tools?: string[] | undefined; max: number; leaseMs: number } }): Promise<ClaimedTask[]> {
  assertWorker(principal);
  const tools = request.tools ? request.tools.filter((t) => principal.tools.includes(t)) : principal.tools;
  return prismaTaskQueue(prisma).claim({ workerId: request.workerId, tools, max: request.max, leaseMs: request.leaseMs });
}
