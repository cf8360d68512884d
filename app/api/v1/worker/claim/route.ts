import * as api from "@/lib/protocol/contracts/worker";
import { agentRoute } from "@/lib/delivery/route";
import { taskToWire } from "@/lib/protocol/schemas/worker";
import { claimTasksForWorker } from "@/lib/server/agent-api/claim-tasks";

export const POST = agentRoute(api.claimWorkerTasks, async ({ prisma, principal, body }) => ({
  tasks: (await claimTasksForWorker({ prisma, principal, claim: body })).map(taskToWire),
}));
