import * as api from "@/lib/protocol/contracts/calls";
import { agentRoute } from "@/lib/delivery/route";
import { reconcileReport } from "@/lib/protocol/schemas/calls";
import { toWire } from "@/lib/protocol/schemas/saga";
import { reportReconcileForAgent } from "@/lib/server/agent-api/report-reconcile";

export const POST = agentRoute(api.reportReconcile, async ({ prisma, principal, params, body }) => ({
  step: toWire(await reportReconcileForAgent({ prisma, principal, stepId: params.stepId, report: reconcileReport(body) })),
}));
