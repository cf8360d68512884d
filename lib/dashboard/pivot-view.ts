/** Shared by the pivot use cases: a pivot's plan and summary as the screen shows them. */
import type { PrismaClient } from "@/lib/db/prisma";
import type { PivotRecord, PlanItem } from "@/lib/saga/store";
import type { ToolRegistry } from "@/lib/saga/tools";
import { audienceRank, ToolClass } from "@/lib/saga/vocabulary";
import { readToolPolicies, type ToolPolicyFacts } from "./tool-policies";
import { systemOfTool } from "./tool-systems";
import type { TPivotSummary, TPlanItemView } from "./views";

/** The pivot's decision state, for the wire. */
export function pivotSummary(pivot: PivotRecord): TPivotSummary {
  return {
    id: pivot.id,
    runId: pivot.runId,
    status: pivot.status,
    summary: pivot.summary,
    planHash: pivot.planHash,
    deadline: pivot.deadline?.toISOString() ?? null,
    createdAt: pivot.createdAt.toISOString(),
    decidedBy: pivot.decidedBy,
    decidedAt: pivot.decidedAt?.toISOString() ?? null,
    reason: pivot.reason,
  };
}

/** Who would see a plan item's effect, from the tool's own audience rule (null: tool unknown here). */
function planAudience(registry: ToolRegistry, item: PlanItem): string[] | null {
  if (!registry.has(item.tool)) return null;
  const def = registry.tool(item.tool);
  const parsed = def.args.safeParse(item.args);
  if (!parsed.success) return null;
  if (def.audience) return def.audience(parsed.data);
  return def.class === ToolClass.REVERSIBLE ? ["agent"] : [];
}

/** The plan's items with the CURRENT policy version of each tool next to the plan's. */
export function planItemViews(plan: readonly PlanItem[], policies: Map<string, ToolPolicyFacts>, registry: ToolRegistry): TPlanItemView[] {
  return plan.map((item, idx) => {
    const policy = policies.get(item.tool);
    const currentPolicyVersion = policy?.policyVersion ?? item.policyVersion;
    const audience = planAudience(registry, item);
    return {
      idx,
      tool: item.tool,
      toolClass: item.toolClass,
      system: systemOfTool(item.tool, policy?.system),
      args: item.args,
      argsHash: item.argsHash,
      planPolicyVersion: item.policyVersion,
      currentPolicyVersion,
      policyChanged: currentPolicyVersion !== item.policyVersion,
      audience,
      audienceRank: audience ? audienceRank(audience) : null,
      answeredBy: item.toolClass === ToolClass.IRREVERSIBLE ? null : (policy?.compensator ?? null),
    };
  });
}

/** The plan's items as the screen shows them, reading the tool table. */
export async function readPlanItemViews(prisma: PrismaClient, registry: ToolRegistry, plan: readonly PlanItem[]): Promise<TPlanItemView[]> {
  const policies = await readToolPolicies(prisma, registry, plan.map((i) => i.tool));
  return planItemViews(plan, policies, registry);
}
