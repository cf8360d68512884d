import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { getRunAuditForAgent } from "@/lib/server/agent-api/get-run-audit";

export const GET = agentRoute(api.getRunAudit, async ({ prisma, principal, params }) => ({
  events: (await getRunAuditForAgent({ prisma, principal, runId: params.runId })).map(toWire),
}));
