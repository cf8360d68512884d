import * as api from "@/lib/api/contracts/declarations";
import { agentRoute } from "@/lib/api/route";
import { agentActor } from "@/lib/agent-api/agent-access";
import { declareTools } from "@/lib/tools/declare-tools";

export const POST = agentRoute(api.declareTools, async ({ prisma, principal, body }) =>
  declareTools(prisma, body, { namespace: principal.name, actor: agentActor(principal), tokenId: principal.tokenId, tokenRole: principal.role }),
);
