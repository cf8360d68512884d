import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { getRunAuditForAgent } from "@/lib/agent-api/get-run-audit";

export const GET = agentRoute(api.getRunAudit, async ({ prisma, principal, params }) => ({
  events: (await getRunAuditForAgent({ prisma, principal, runId: params.runId })).map(toWire),
}));
