import * as api from "@/packages/client/src/protocol/contracts/worker";
import { agentRoute } from "@/lib/delivery/route";
import { taskToWire } from "@/packages/client/src/protocol/schemas/worker";
import { claimTasksForWorker } from "@/lib/server/agent-api/claim-tasks";

export const POST = agentRoute(api.claimWorkerTasks, async ({ prisma, principal, body }) => ({
  tasks: (await claimTasksForWorker({ prisma, principal, claim: body })).map(taskToWire),
}));
