/** An agent reports what its lookup of an unsettled step's key found (POST /steps/{id}/reconcile). */
import { recordReconcile } from "@/packages/client/src/saga/calls";
import type { ReconcileReport } from "@/packages/client/src/saga/messages";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { StepRecord } from "@/packages/client/src/saga/store";
import { agentActor, assertToolInScope, getAgentStep, agentApiStore, verifiedPrincipal, type AgentCaller } from "./agent-access";
import { getToolPolicy } from "./tool-policy-view";

export async function reportReconcileForAgent({ stepId, report, ...caller }: AgentCaller & { stepId: string; report: ReconcileReport }): Promise<StepRecord> {
  const principal = await verifiedPrincipal(caller);
  const store = agentApiStore(caller.prisma);
  const { step } = await getAgentStep(store, principal, stepId);
  assertToolInScope(principal, step.tool);
  const policy = await getToolPolicy(caller.prisma, step.tool).catch(() => null);
  return recordReconcile({ store, ids: randomIds }, { step, report, actor: agentActor(principal), owner: policy?.owner ?? null });
}
