/** An agent asks for its pivot: the plan's versions and classes from the tool table, the hash recomputed here; asking again with the same plan returns the same pivot, a new plan revises a pending one. */
import { SagaError } from "@/lib/saga/errors";
import { randomIds } from "@/lib/saga/ids";
import { argsHash, planHash } from "@/lib/saga/keys";
import type { PivotRecord, PlanItem } from "@/lib/saga/store";
import type { Json } from "@/lib/saga/tools";
import { PivotStatus, StepStatus, ToolClass, Phase } from "@/lib/saga/vocabulary";
import { agentActor, assertNotWorker, assertRunOpen, assertToolInScope, getAgentRun, agentApiStore, type AgentCaller } from "./agent-access";
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
  const run = await getAgentRun(store, principal, runId);
  const plan: PlanItem[] = [];
  for (const [i, item] of input.plan.entries()) {
    assertToolInScope(principal, item.tool);
    const policy = await getToolPolicy(prisma, item.tool);
    if (policy.class === ToolClass.PURE) {
      throw new SagaError("INVALID_ARGS", `plan.${i}: ${item.tool} is PURE and needs no approval; leave it out.`, [{ path: `plan.${i}.tool`, message: "pure tool" }]);
    }
    // Versions and classes come from the tool table, never from the client.
    plan.push({ tool: item.tool, args: item.args, argsHash: argsHash(item.args), policyVersion: policy.policyVersion ?? 1, toolClass: policy.class });
  }
  const hash = planHash(plan);
  const pivots = await store.listPivots(runId);
  const latest = pivots.at(-1);
  if (latest && latest.planHash === hash && latest.status !== PivotStatus.REJECTED) return latest;
  assertRunOpen(run);
  const staged = (await store.listSteps(runId)).filter((s) => s.phase === Phase.STAGING && s.status !== StepStatus.NOT_EXECUTED && s.status !== StepStatus.FAILED);
  if (latest?.status === PivotStatus.PENDING) {
    const revised = await store.revisePivot(
      latest.id,
      { summary: input.summary, plan, planHash: hash, stagedStepIds: staged.map((s) => s.id), deadline: input.deadline },
      { type: "pivot.revised", actor: agentActor(principal), data: { previousPlanHash: latest.planHash, planHash: hash, items: plan.length, via: "api" } },
    );
    if (revised) return revised;
    throw new SagaError("PIVOT_CONFLICT", `Pivot ${latest.id} was decided while it was being revised; read its decision first.`);
  }
  return store.createPivot(
    { id: randomIds.next("piv"), runId, summary: input.summary, plan, planHash: hash, stagedStepIds: staged.map((s) => s.id), deadline: input.deadline },
    { type: "pivot.requested", actor: agentActor(principal), data: { planHash: hash, items: plan.length, staged: staged.length, via: "api" } },
  );
}
