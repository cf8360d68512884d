import * as api from "@/lib/api/contracts/worker";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { claimForWorker } from "@/lib/agent-api/worker-tasks";

export const POST = agentRoute(api.claimWorkerTasks, async ({ prisma, principal, body }) => ({
  tasks: (await claimForWorker(prisma, principal, body)).map(toWire),
}));
