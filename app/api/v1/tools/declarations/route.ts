import * as api from "@/packages/client/src/protocol/contracts/declarations";
import { agentRoute } from "@/lib/delivery/route";
import { agentActor } from "@/lib/server/agent-api/agent-access";
import { declareTools } from "@/lib/server/tools/declare-tools";

export const POST = agentRoute(api.declareTools, async ({ prisma, principal, body }) =>
  declareTools(prisma, body, { namespace: principal.name, actor: agentActor(principal), tokenId: principal.tokenId, tokenRole: principal.role }),
);
