import * as api from "@/packages/client/src/protocol/contracts/calls";
import { agentRoute } from "@/lib/delivery/route";
import { reconcileReport } from "@/packages/client/src/protocol/schemas/calls";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { reportReconcileForAgent } from "@/lib/server/agent-api/report-reconcile";

export const POST = agentRoute(api.reportReconcile, async ({ prisma, principal, params, body }) => ({
  step: toWire(await reportReconcileForAgent({ prisma, principal, stepId: params.stepId, report: reconcileReport(body) })),
}));
