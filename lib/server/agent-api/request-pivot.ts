/** An agent asks for its pivot: `requestPivot` (packages/client/src/saga/request-pivot.ts), the plan's classes and versions read from the tool table. */
import { randomIds } from "@/packages/client/src/saga/ids";
import { requestPivot } from "@/packages/client/src/saga/request-pivot";
import type { PivotRecord } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { agentActor, assertNotWorker, assertToolInScope, getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";
import { getToolPolicy } from "./tool-policy-view";

/** A pivot request as the client sends it. */
export interface PivotInput {
  /** For the reviewer. */
  summary: string;
  /** Commit calls (tool + exact args). */
  plan: { tool: string; args: Json }[];
  /** When staged effects stop being releasable. */
  deadline: Date | null;
}

export async function requestPivotForAgent({ prisma, principal, runId, pivot: input }: AgentCaller & { runId: string; pivot: PivotInput }): Promise<PivotRecord> {
  assertNotWorker(principal, "request a pivot");
  const store = agentApiStore(prisma);
  await getAgentRun(store, principal, runId);
  for (const [i, item] of input.plan.entries()) assertToolInScope(principal, item.tool, `plan.${i}.tool`);
  return requestPivot(
    { store, ids: randomIds },
    {
      runId,
      ...input,
      actor: agentActor(principal),
      // Versions and classes come from the tool table, never from the client.
      toolFacts: (tool) => getToolPolicy(prisma, tool),
      auditData: { via: "api" },
    },
  );
}
