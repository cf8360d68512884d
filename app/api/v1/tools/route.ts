import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute } from "@/lib/delivery/route";
import { listToolsForAgent } from "@/lib/server/agent-api/list-tools";

export const GET = agentRoute(api.listTools, async ({ prisma, principal }) => ({ tools: await listToolsForAgent({ prisma, principal }) }));
