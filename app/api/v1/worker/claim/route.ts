import * as api from "@/lib/api/contracts/worker";
import { agentRoute } from "@/lib/api/route";
import { taskToWire } from "@/lib/api/schemas/worker";
import { claimTasksForWorker } from "@/lib/agent-api/claim-tasks";

export const POST = agentRoute(api.claimWorkerTasks, async ({ prisma, principal, body }) => ({
  tasks: (await claimTasksForWorker({ prisma, principal, claim: body })).map(taskToWire),
}));
