/**
 * An agent begins a tool call (POST /runs/{id}/calls): the server side of packages/client/src/saga/calls.ts. The
 * agent names the tool and its arguments; everything else (the step, its key, the argument hash, the
 * class, compensator, audience and version from the tool table, the gate's decision) is the server's.
 */
import { appendCall, beginCall, beginPlanItem, type BeginCallInput } from "@/packages/client/src/saga/calls";
import type { BeginCallAnswer, PlanItemAddress } from "@/packages/client/src/saga/messages";
import { SagaError } from "@/packages/client/src/saga/errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { CompensationPlan, CorrectionDraft, Json } from "@/packages/client/src/saga/tools";
import { audienceRank, ToolClass, ToolStatus } from "@/packages/client/src/saga/vocabulary";
import type { AgentPrincipal } from "@/lib/server/tokens/authenticate-agent";
import { audienceFromRule } from "@/lib/server/tools/audience";
import { agentActor, assertToolInScope, getAgentRun, guardOf, agentApiStore, VIA_API, type AgentCaller } from "./agent-access";
import { assertToolEnabled } from "@/packages/client/src/saga/tool-table";
import { assertArgsMatchDeclared, getToolPolicy, recentToolPolicy, tableCompensation, tableCorrection, type ToolPolicyView } from "./tool-policy-view";
import { reportPreviousOutcome, type PreviousOutcomeRequest } from "./report-outcome";
import type { StepRecord } from "@/packages/client/src/saga/store";

/** A call as the agent begins it. */
export interface BeginCallRequest {
  /** The tool's name in the tool table. */
  tool: string;
  /** Its arguments. */
  args: Json;
  /** Where the agent stands: 0 after a (re)start, then the cursor of the previous answer (absent with `planItem`). */
  cursor?: number;
  /** The approved plan's item this call commits, instead of a cursor. */
  planItem?: PlanItemAddress;
  /** The compensator's call the agent pre-wrote, if the tool is REVERSIBLE or COMPENSATABLE. */
  compensation?: CompensationPlan | null;
  /** The correction it drafted, if irreversible (default: the table's template). */
  correction?: CorrectionDraft | null;
  /** Who sees the effect (default: the table's audience). */
  audience?: string[];
  /** The previous call's outcome, recorded before this call is begun (one request per step). */
  previous?: PreviousOutcomeRequest;
}

/** A call's answer, with the previous call's step as its outcome left it when the request carried one. */
export type BeginCallResult = BeginCallAnswer & { previous?: StepRecord };

/**
 * Who sees the effect: the tool table decides. The agent's statement may widen it (a customer it
 * knows of), never narrow it: beside a table rule it is added; where the table states nothing, only a
 * customer-facing statement is kept, because an audience nobody states already reads as customer-facing.
 */
export function callAudience(policy: Pick<ToolPolicyView, "audienceRule">, args: Json, stated: readonly string[] | undefined): string[] {
  const table = audienceFromRule(policy.audienceRule, args);
  const said = (stated ?? []).map((a) => a.trim()).filter(Boolean);
  if (table.length > 0) return [...new Set([...table, ...said])];
  return audienceRank(said) >= 2 ? [...new Set(said)] : [];
}

function callInput(principal: AgentPrincipal, runId: string, policy: ToolPolicyView, request: BeginCallRequest): BeginCallInput {
  const audience = callAudience(policy, request.args, request.audience);
  // The agent's correction text is a draft support staff edit; who receives it is the table's audience.
  const correction = request.correction ? { ...request.correction, audience } : tableCorrection(policy, request.args, audience);
  return {
    runId,
    cursor: request.cursor ?? 0,
    tool: policy,
    args: request.args,
    proposal: { compensation: request.compensation ?? tableCompensation(policy, request.args), correction, audience },
    actor: agentActor(principal),
    auditData: VIA_API,
  };
}

function checkPolicy(policy: ToolPolicyView, args: Json, principal: AgentPrincipal, request: BeginCallRequest): void {
  // A compensation naming another team's tool is an attempt to reach across namespaces (403), not a typo (400).
  const named = request.compensation?.tool;
  if (named && named !== policy.compensator && named.includes(".") && !named.startsWith(`${principal.name}.`)) assertToolInScope(principal, named, "compensation.tool");
  assertToolEnabled(policy);
  if (policy.class === ToolClass.PURE) {
    throw new SagaError("INVALID_ARGS", `tool: ${policy.name} is PURE in the tool table: pure calls are not logged; call it directly.`, [{ path: "tool", message: "pure tool" }]);
  }
  assertArgsMatchDeclared(policy, args);
}

/**
 * Begins a call. The common call (plain staging on the row this process read last) is one insert
 * and no read: its guard proves the run is the agent's and RUNNING with no pivot, the step next, the
 * tool row unchanged and the token live. Anything else reads the token, the tool row and the run,
 * and decides there.
 */
export async function beginCallForAgent(input: AgentCaller & { runId: string; call: BeginCallRequest }): Promise<BeginCallResult> {
  const { runId, call, ...caller } = input;
  if (!call.previous) return beginCallAt(input);
  // Two commits, in this order, as two requests would make them: the outcome, then the next intent.
  const previous = await reportPreviousOutcome({ ...caller, previous: call.previous });
  return { ...(await beginCallAt({ ...caller, runId, call })), previous };
}

async function beginCallAt({ runId, call: request, ...caller }: AgentCaller & { runId: string; call: BeginCallRequest }): Promise<BeginCallAnswer> {
  const { prisma } = caller;
  const auth = guardOf(caller);
  let principal = auth.principal;
  // A principal remembered from an earlier request may predate a scope change: read the token before refusing.
  if (!principal.tools.includes(request.tool) && auth.activeToken !== undefined) principal = await auth.verified();
  assertToolInScope(principal, request.tool);
  const deps = { store: agentApiStore(prisma), ids: randomIds };

  const known = recentToolPolicy(prisma, request.tool);
  // Workers take the careful path: it checks that they hold a claimed task of this run. A plan item
  // is found by its pivot, never by an unread insert at a cursor.
  if (known && known.status === ToolStatus.REVIEWED && principal.role !== "worker" && !request.planItem) {
    const toolPolicy = { name: known.name, toolClass: known.class, policyVersion: known.policyVersion ?? 1 };
    try {
      checkPolicy(known, request.args, principal, request);
      const appended = await appendCall(deps, { ...callInput(principal, runId, known, request), guard: { runAgent: principal.name, toolPolicy, activeToken: auth.activeToken } });
      if (appended) return appended;
    } catch (e) {
      // The remembered row may be stale: a refusal is only ever given on the row read below.
      if (!(e instanceof SagaError)) throw e;
    }
  }

  if (auth.activeToken !== undefined) {
    principal = await auth.verified();
    assertToolInScope(principal, request.tool);
  }
  await getAgentRun(deps.store, principal, runId);
  const policy = await getToolPolicy(prisma, request.tool);
  checkPolicy(policy, request.args, principal, request);
  const guard = principal.role === "worker" ? {} : { runAgent: principal.name };
  if (request.planItem) return beginPlanItem(deps, { ...callInput(principal, runId, policy, request), guard, planItem: request.planItem });
  return beginCall(deps, { ...callInput(principal, runId, policy, request), guard, tryAppend: false });
}
