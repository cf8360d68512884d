/**
 * The call commands for agents over HTTP: the server side of lib/saga/calls.ts. The agent names the
 * tool and its arguments; everything else (the step, its key, the argument hash, the class,
 * compensator, audience and version from the tool table, the gate's decision) is the server's.
 */
import type { PrismaClient } from "@/generated/prisma";
import { beginCall, completeRun, appendCall, recordOutcome, recordReconcile, type BeginCallAnswer, type BeginCallInput, type CallOutcomeReport, type ReconcileReport } from "@/lib/saga/calls";
import { systemClock } from "@/lib/saga/clock";
import { noCrashPoints } from "@/lib/saga/crash-points";
import type { EngineDeps } from "@/lib/saga/deps";
import { SagaError } from "@/lib/saga/errors";
import { randomIds } from "@/lib/saga/ids";
import type { RunRecord, StepRecord } from "@/lib/saga/store";
import { ToolRegistry, type CompensationPlan, type CorrectionDraft, type Json } from "@/lib/saga/tools";
import { nextCompensateAction, nextUnwindAction, recordCompensation, type CompensationReport, type StepCompensateAction, type UnwindAction } from "@/lib/saga/unwind-commands";
import { ToolClass } from "@/lib/saga/vocabulary";
import { asGuardedAgent, type GuardedAgent } from "@/lib/tokens/authenticate-agent";
import { ToolStatus } from "@/lib/tools/tool-policy";
import { agentActor, assertToolInScope, getAgentRun, getAgentStep, harnessStore } from "./access";
import { assertArgsMatchDeclared, assertToolEnabled, getToolPolicy, recentToolPolicy, tableCorrection, type ToolPolicyView } from "./policy";
import type { AgentPrincipal } from "./principal";

/** A call as the agent begins it. */
export interface BeginCallRequest {
  /** The tool's name in the tool table. */
  tool: string;
  /** Its arguments. */
  args: Json;
  /** Where the agent stands: 0 after a (re)start, then the cursor of the previous answer. */
  cursor: number;
  /** The compensator's call the agent pre-wrote, if the tool is REVERSIBLE or COMPENSATABLE. */
  compensation?: CompensationPlan | null;
  /** The correction it drafted, if irreversible (default: the table's template). */
  correction?: CorrectionDraft | null;
  /** Who sees the effect (default: the table's audience). */
  audience?: string[];
}

const VIA_API = { via: "api" } as const;

function callInput(principal: AgentPrincipal, runId: string, policy: ToolPolicyView, request: BeginCallRequest): BeginCallInput {
  const audience = request.audience && request.audience.length > 0 ? request.audience : policy.audiences;
  return {
    runId,
    cursor: request.cursor,
    tool: policy,
    args: request.args,
    proposal: { compensation: request.compensation ?? null, correction: request.correction ?? tableCorrection(policy, request.args, audience), audience },
    actor: agentActor(principal),
    auditData: VIA_API,
  };
}

function checkPolicy(policy: ToolPolicyView, args: Json): void {
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
export async function beginCallForAgent(prisma: PrismaClient, principalOrAuth: AgentPrincipal | GuardedAgent, runId: string, request: BeginCallRequest): Promise<BeginCallAnswer> {
  const auth = asGuardedAgent(principalOrAuth);
  let principal = auth.principal;
  // A principal remembered from an earlier request may predate a scope change: read the token before refusing.
  if (!principal.tools.includes(request.tool) && auth.activeToken !== undefined) principal = await auth.verified();
  assertToolInScope(principal, request.tool);
  const deps = { store: harnessStore(prisma), ids: randomIds };

  const known = recentToolPolicy(prisma, request.tool);
  // Workers take the careful path: it checks that they hold a claimed task of this run.
  if (known && known.status === ToolStatus.REVIEWED && principal.role !== "worker") {
    const toolPolicy = { name: known.name, toolClass: known.class, policyVersion: known.policyVersion ?? 1 };
    try {
      checkPolicy(known, request.args);
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
  checkPolicy(policy, request.args);
  const guard = principal.role === "worker" ? {} : { runAgent: principal.name };
  return beginCall(deps, { ...callInput(principal, runId, policy, request), guard, tryAppend: false });
}

/** What the agent reports for a step in flight (`attempts`: tries under the key this time). */
export type OutcomeRequest = CallOutcomeReport & { attempts: number };

/**
 * Records an outcome. The common report is one fenced update whose WHERE holds what a read would
 * check (the step INTENDED, its tool in the token's scope, its run the agent's, the token live);
 * when it misses, the reads say why.
 */
export async function reportOutcomeForAgent(prisma: PrismaClient, principalOrAuth: AgentPrincipal | GuardedAgent, stepId: string, request: OutcomeRequest): Promise<StepRecord> {
  const auth = asGuardedAgent(principalOrAuth);
  const deps = { store: harnessStore(prisma), ids: randomIds };
  const { attempts, ...outcome } = request;
  const owner = (tool: string) => recentToolPolicy(prisma, tool)?.owner ?? null;
  const report = (principal: AgentPrincipal, activeToken: string | undefined) =>
    recordOutcome(deps, {
      stepId,
      outcome,
      attempts,
      actor: agentActor(principal),
      fence: { tools: principal.tools, ...(principal.role === "worker" ? {} : { runAgent: principal.name }), activeToken },
      owner,
      auditData: VIA_API,
    });
  if (auth.principal.role !== "worker") {
    try {
      return await report(auth.principal, auth.activeToken);
    } catch (e) {
      // Not found or not in flight: the reads below check the step is the agent's before saying which.
      if (!(e instanceof SagaError && (e.code === "STEP_NOT_FOUND" || e.code === "STEP_NOT_IN_FLIGHT"))) throw e;
    }
  }
  const principal = auth.activeToken !== undefined ? await auth.verified() : auth.principal;
  const { step } = await getAgentStep(deps.store, principal, stepId);
  assertToolInScope(principal, step.tool);
  await getToolPolicy(prisma, step.tool); // for the owner of a STUCK_AFTER_PIVOT escalation
  return report(principal, undefined);
}

/** Records what the agent's lookup of an unsettled step's key found. */
export async function reportReconcileForAgent(prisma: PrismaClient, principalOrAuth: AgentPrincipal | GuardedAgent, stepId: string, report: ReconcileReport): Promise<StepRecord> {
  const auth = asGuardedAgent(principalOrAuth);
  const principal = auth.activeToken !== undefined ? await auth.verified() : auth.principal;
  const store = harnessStore(prisma);
  const { step } = await getAgentStep(store, principal, stepId);
  assertToolInScope(principal, step.tool);
  const policy = await getToolPolicy(prisma, step.tool).catch(() => null);
  return recordReconcile({ store, ids: randomIds }, { step, report, actor: agentActor(principal), owner: policy?.owner ?? null });
}

/** Finishes the agent's run: refused while a step is unsettled or a pivot waits. */
export async function completeRunForAgent(prisma: PrismaClient, principalOrAuth: AgentPrincipal | GuardedAgent, runId: string): Promise<RunRecord> {
  const auth = asGuardedAgent(principalOrAuth);
  const principal = auth.activeToken !== undefined ? await auth.verified() : auth.principal;
  const store = harnessStore(prisma);
  await getAgentRun(store, principal, runId);
  return completeRun({ store, ids: randomIds }, runId, agentActor(principal));
}

/** The server's side of an unwind: its decisions need no connector, so no tool is registered here. */
function unwindDeps(prisma: PrismaClient): EngineDeps {
  return {
    store: harnessStore(prisma),
    registry: new ToolRegistry([], []),
    clock: systemClock,
    ids: randomIds,
    crashPoints: noCrashPoints,
    recheckAfterMs: 0,
    maxAttempts: 1,
    backoffMs: 0,
    systemActor: { type: "system", id: "api" },
  };
}

/** The next thing the calling worker (or the run's agent) does for the run's unwind. */
export async function nextUnwindActionForAgent(
  prisma: PrismaClient,
  principal: AgentPrincipal,
  runId: string,
  input: { reason: string; skipStepIds?: readonly string[] | undefined; draftedBy?: string | null | undefined },
): Promise<UnwindAction> {
  const deps = unwindDeps(prisma);
  await getAgentRun(harnessStore(prisma), principal, runId);
  return nextUnwindAction(deps, runId, agentActor(principal), input.reason, { skipStepIds: input.skipStepIds, draftedBy: input.draftedBy ?? null });
}

/** The next thing the calling worker does to pull back one step (a revoke's COMPENSATE task). */
export async function nextCompensateActionForAgent(prisma: PrismaClient, principal: AgentPrincipal, stepId: string, draftedBy: string | null): Promise<StepCompensateAction> {
  const { step } = await getAgentStep(harnessStore(prisma), principal, stepId);
  assertToolInScope(principal, step.tool);
  return nextCompensateAction(unwindDeps(prisma), stepId, agentActor(principal), draftedBy);
}

/** Records what the worker read back after sending a compensation. */
export async function reportCompensationForAgent(prisma: PrismaClient, principal: AgentPrincipal, stepId: string, report: CompensationReport): Promise<StepRecord> {
  const deps = unwindDeps(prisma);
  const { step } = await getAgentStep(harnessStore(prisma), principal, stepId);
  assertToolInScope(principal, step.tool);
  return recordCompensation(deps, step, report, agentActor(principal));
}
