import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { listToolsForAgent } from "@/lib/agent-api/list-tools";

export const GET = agentRoute(api.listTools, async ({ prisma, principal }) => ({ tools: await listToolsForAgent({ prisma, principal }) }));
