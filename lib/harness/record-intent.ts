/**
 * Records an intent for an agent, after the server's own checks: the token's scope, the tool table's
 * class, the key derived from the run and step, no unresolved step before it, and the pivot gate.
 * Whatever the client computed, the server decides.
 */
import type { PrismaClient } from "@/generated/prisma";
import { SagaError } from "@/lib/saga/errors";
import { checkGate, needsApprovalBeforePivot } from "@/lib/saga/gate";
import { randomIds } from "@/lib/saga/ids";
import { argsHash, compensationKey, stepKey } from "@/lib/saga/keys";
import { IntentGuardFailed, type InsertIntentResult, type IntentGuard, type NewIntent } from "@/lib/saga/store";
import { Phase, RunStatus, ToolClass, UNSETTLED_STATUSES } from "@/lib/saga/vocabulary";
import { asGuardedAgent, type GuardedAgent } from "@/lib/tokens/authenticate-agent";
import { agentActor, assertRunOpen, assertToolInScope, getAgentRun, harnessStore } from "./access";
import { ApiError } from "./errors";
import { ToolStatus } from "@/lib/tools/tool-policy";
import { assertToolEnabled, getToolPolicy, recentToolPolicy, tableCorrection, type ToolPolicyView } from "./policy";
import type { AgentPrincipal } from "./principal";

/** An intent as the client sends it (the run comes from the URL). */
export type IntentInput = Omit<NewIntent, "runId" | "id"> & { id?: string };

function mismatch(path: string, message: string): SagaError {
  return new SagaError("INVALID_ARGS", `${path}: ${message}`, [{ path, message }]);
}

/**
 * The intent's checks against a tool-table row: the first field that is wrong, or null. The class
 * the client claims is not one of them: the row's class is what gets recorded and gated (an admin
 * who made a tool stricter is obeyed by clients that still carry the old definition).
 */
function checkAgainstPolicy(runId: string, input: IntentInput, policy: ToolPolicyView): SagaError | null {
  if (policy.class === ToolClass.PURE) return mismatch("tool", `${input.tool} is PURE in the tool table: pure calls are not logged.`);
  const expectedKey = stepKey(runId, input.stepIdx, input.tool);
  if (input.stepKey !== expectedKey) return mismatch("stepKey", `must be sha256(runId:stepIdx:tool)[:32] = ${expectedKey}; keys come from the run, never the model.`);
  if (input.argsHash !== argsHash(input.args)) return mismatch("argsHash", "does not match the canonical hash of args.");
  if (needsCompensation(policy) && input.compensation && input.compensation.tool !== policy.compensator) {
    return mismatch("compensation.tool", `the tool table answers ${input.tool} with "${policy.compensator ?? "nothing"}", not "${input.compensation.tool}".`);
  }
  const expectedCompKey = compensationKey(runId, input.stepIdx, input.tool);
  if (input.compensationKey !== null && input.compensationKey !== expectedCompKey) {
    return mismatch("compensationKey", `must be sha256(runId:stepIdx:compensate:tool)[:32] = ${expectedCompKey}.`);
  }
  return null;
}

function needsCompensation(policy: ToolPolicyView): boolean {
  return policy.class === ToolClass.REVERSIBLE || policy.class === ToolClass.COMPENSATABLE;
}

/** Plain staging: what the gate answers a releasable call with its compensation while the run has no pivot. */
function isPlainStaging(policy: ToolPolicyView, input: IntentInput): boolean {
  return !needsApprovalBeforePivot(policy, !needsCompensation(policy) || input.compensation !== null) && policy.status === ToolStatus.REVIEWED;
}

/**
 * `auth.activeToken`: the token was not read for this request; the fast path's insert proves it, and
 * the careful path reads it first (`auth.verified()`).
 */
export async function recordIntent(
  prisma: PrismaClient,
  principalOrAuth: AgentPrincipal | GuardedAgent,
  runId: string,
  input: IntentInput,
): Promise<InsertIntentResult> {
  const auth = asGuardedAgent(principalOrAuth);
  let principal = auth.principal;
  // A principal remembered from an earlier request may predate a scope change (a declaration adds
  // the team's tools): read the token before refusing.
  if (!principal.tools.includes(input.tool) && auth.activeToken !== undefined) principal = await auth.verified();
  assertToolInScope(principal, input.tool);
  const store = harnessStore(prisma);
  const actor = agentActor(principal);
  // The client's audience, else the one the tool table names.
  const audienceFor = (policy: ToolPolicyView) => (input.audience.length > 0 ? input.audience : policy.audiences);
  const record = (policy: ToolPolicyView, decision: { phase: Phase; approvalId: string | null; planItemIdx: number | null }, guard?: IntentGuard) => {
    const audience = audienceFor(policy);
    return store.insertIntent(
      {
        ...input,
        id: input.id ?? randomIds.next("stp"),
        runId,
        phase: decision.phase,
        approvalId: decision.approvalId,
        planItemIdx: decision.planItemIdx,
        toolClass: policy.class,
        policyVersion: policy.policyVersion ?? 1,
        compensation: needsCompensation(policy) ? input.compensation : null,
        compensationKey: needsCompensation(policy) ? compensationKey(runId, input.stepIdx, input.tool) : null,
        audience,
        correction: input.correction ?? tableCorrection(policy, input.args, audience),
      },
      { type: "step.intended", actor, data: { stepIdx: input.stepIdx, tool: input.tool, stepKey: input.stepKey, phase: decision.phase, via: "api" } },
      guard,
    );
  };
  const stage = { phase: Phase.STAGING, approvalId: null, planItemIdx: null };
  /** The guard of a plain staging insert: the next step, nothing unsettled, no pivot, the run RUNNING (and the caller's). */
  const plainGuard = (extra: Partial<IntentGuard>): IntentGuard => ({ runStatus: [RunStatus.RUNNING], appendOnly: true, noPivot: true, ...extra });

  // The common call first, with no read at all: plain staging on the tool-table row this process read
  // last, as one insert whose guard proves everything the careful path below would read (the run is
  // the caller's and RUNNING, the step is next, nothing unsettled, no pivot, the row unchanged). When
  // anything does not hold, or the intent was already recorded, the careful path decides and explains.
  const known = recentToolPolicy(prisma, input.tool);
  // Workers take the careful path: it checks that they hold a claimed task of this run.
  if (known && principal.role !== "worker" && isPlainStaging(known, input) && checkAgainstPolicy(runId, input, known) === null) {
    const toolPolicy = { name: known.name, toolClass: known.class, policyVersion: known.policyVersion ?? 1 };
    try {
      const result = await record(known, stage, plainGuard({ runAgent: principal.name, toolPolicy, activeToken: auth.activeToken }));
      if (result.created) return result;
    } catch (e) {
      if (!(e instanceof IntentGuardFailed) && !(e instanceof SagaError && e.code === "RUN_NOT_FOUND")) throw e;
    }
  }

  if (auth.activeToken !== undefined) {
    principal = await auth.verified();
    assertToolInScope(principal, input.tool);
  }
  const run = await getAgentRun(store, principal, runId);
  const policy = await getToolPolicy(prisma, input.tool);
  assertToolEnabled(policy);
  const invalid = checkAgainstPolicy(runId, input, policy);
  if (invalid) throw invalid;
  const compensationBuildable = !needsCompensation(policy) || input.compensation !== null;

  // Plain staging in one guarded insert: when the guard does not hold, nothing was written and the
  // reads below find which check failed, and say so.
  if (run.status === RunStatus.RUNNING && isPlainStaging(policy, input)) {
    try {
      return await record(policy, stage, plainGuard({}));
    } catch (e) {
      if (!(e instanceof IntentGuardFailed)) throw e;
    }
  }

  // Targeted reads, not the whole log.
  const existingStep = async () => {
    const row = await prisma.step.findUnique({ where: { runId_stepIdx: { runId, stepIdx: input.stepIdx } }, select: { id: true } });
    return row ? store.getStep(row.id) : null;
  };
  const existing = await existingStep();
  if (existing) return { created: false, step: existing }; // the idempotent answer for a repeated intent
  assertRunOpen(run);
  const last = await prisma.step.aggregate({ where: { runId }, _max: { stepIdx: true } });
  const next = (last._max.stepIdx ?? -1) + 1;
  // The reads are not one snapshot (PostgreSQL runs them concurrently): an identical intent may have
  // committed this very step since the first read. It gets the idempotent answer, not a refusal.
  if (input.stepIdx !== next) {
    const raced = await existingStep();
    if (raced) return { created: false, step: raced };
    throw new SagaError("CONFLICT", `Step ${input.stepIdx} cannot be recorded: the next step of run ${runId} is ${next}. Resume reads the log: GET the run first.`);
  }
  const unresolved = await prisma.step.findFirst({ where: { runId, status: { in: [...UNSETTLED_STATUSES] } }, select: { stepIdx: true, tool: true, status: true } });
  if (unresolved) {
    const raced = await existingStep();
    if (raced) return { created: false, step: raced };
    throw new SagaError(
      "STEP_UNRESOLVED",
      `Step ${unresolved.stepIdx} (${unresolved.tool}) is ${unresolved.status}; reconcile it before recording step ${input.stepIdx} (${input.tool}).`,
    );
  }

  const pivots = await store.listPivots(runId);
  // The gate reads the log only to match plan items and held calls; plain staging does not need it.
  const plainStaging = pivots.length === 0 && !needsApprovalBeforePivot(policy, compensationBuildable);
  const steps = plainStaging ? [] : await store.listSteps(runId);
  const decision = await checkGate(
    { store, ids: randomIds },
    {
      runId,
      def: policy,
      args: input.args,
      argsHash: input.argsHash,
      compensationBuildable,
      pivots,
      steps,
      actor,
    },
  );
  if (!decision.allowed) {
    throw new ApiError("APPROVAL_REQUIRED", decision.message, { extra: {
      reason: decision.reason,
      escalationId: decision.escalationId,
      pivotId: decision.pivotId,
    } });
  }

  return record(policy, decision);
}
