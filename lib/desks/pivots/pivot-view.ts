/** Shared by the pivot use cases: a pivot's plan and summary as the screen shows them. */
import type { PrismaClient } from "@/lib/core/db/prisma";
import type { PivotRecord, PlanItem } from "@/packages/client/src/saga/store";
import type { ToolRegistry } from "@/packages/client/src/saga/tools";
import { audienceRank, ToolClass } from "@/packages/client/src/saga/vocabulary";
import { audienceFromRule } from "@/lib/server/tools/audience";
import { mayEditArg } from "@/lib/server/tools/reviewer-edits";
import { readToolPolicies, type ToolPolicyFacts } from "@/lib/server/tools/tool-policies";
import { systemOfTool } from "@/lib/server/tools/tool-systems";
import type { TPivotSummary, TPlanItemView } from "@/lib/desks/pivots/views";

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
    reasonCode: pivot.reasonCode ?? null,
    edits: pivot.edits ?? [],
  };
}

/**
 * Who would see a plan item's effect: the tool's own audience rule for these arguments, else the
 * tool table's audience rule (a declared tool the server has no code for), else unknown. Unknown is
 * treated as customer-facing: a reviewer must not read "nobody" into "nobody told us".
 */
export function planAudience(registry: ToolRegistry, item: Pick<PlanItem, "tool" | "args">, policy: Pick<ToolPolicyFacts, "audienceRule"> | undefined): { audience: string[] | null; source: "tool" | "tool_table" | "unknown" } {
  if (registry.has(item.tool)) {
    const def = registry.tool(item.tool);
    const parsed = def.args.safeParse(item.args);
    if (parsed.success && def.audience) return { audience: def.audience(parsed.data), source: "tool" };
    if (parsed.success && def.class === ToolClass.REVERSIBLE) return { audience: ["agent"], source: "tool" };
  }
  const rule = audienceFromRule(policy?.audienceRule, item.args);
  if (rule.length > 0) return { audience: rule, source: "tool_table" };
  return { audience: null, source: "unknown" };
}

/** The plan's items with the CURRENT policy version of each tool next to the plan's. */
export function planItemViews(plan: readonly PlanItem[], policies: Map<string, ToolPolicyFacts>, registry: ToolRegistry): TPlanItemView[] {
  return plan.map((item, idx) => {
    const policy = policies.get(item.tool);
    const currentPolicyVersion = policy?.policyVersion ?? item.policyVersion;
    const { audience, source } = planAudience(registry, item, policy);
    return {
      idx,
      tool: item.tool,
      toolClass: item.toolClass,
      system: systemOfTool(policy?.system),
      args: item.args,
      argsHash: item.argsHash,
      planPolicyVersion: item.policyVersion,
      currentPolicyVersion,
      policyChanged: currentPolicyVersion !== item.policyVersion,
      audience,
      audienceRank: audience ? audienceRank(audience) : 2,
      audienceSource: source,
      editable: registry.has(item.tool),
      lockedArgs: Object.keys(item.args !== null && typeof item.args === "object" && !Array.isArray(item.args) ? item.args : {}).filter((k) => !mayEditArg(k, policy?.reviewerEditableArgs ?? null)),
      answeredBy: item.toolClass === ToolClass.IRREVERSIBLE ? null : (policy?.compensator ?? null),
    };
  });
}

/** The plan's items as the screen shows them, reading the tool table. */
export async function readPlanItemViews(prisma: PrismaClient, registry: ToolRegistry, plan: readonly PlanItem[]): Promise<TPlanItemView[]> {
  const policies = await readToolPolicies(prisma, registry, plan.map((i) => i.tool));
  return planItemViews(plan, policies, registry);
}
