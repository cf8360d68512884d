import * as api from "@/lib/api/contracts/calls";
import { agentRoute } from "@/lib/api/route";
import { reconcileReport } from "@/lib/api/schemas/calls";
import { toWire } from "@/lib/api/schemas/saga";
import { reportReconcileForAgent } from "@/lib/agent-api/report-reconcile";

export const POST = agentRoute(api.reportReconcile, async ({ prisma, principal, params, body }) => ({
  step: toWire(await reportReconcileForAgent({ prisma, principal, stepId: params.stepId, report: reconcileReport(body) })),
}));
