import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { getRunAudit } from "@/lib/agent-api/runs";

export const GET = agentRoute(api.getRunAudit, async ({ prisma, principal, params }) => ({
  events: (await getRunAudit(prisma, principal, params.runId)).map(toWire),
}));
