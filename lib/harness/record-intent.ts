/**
 * Records an intent for an agent, after the server's own checks: the token's scope, the tool table's
 * class, the key derived from the run and step, no unresolved step before it, and the pivot gate.
 * Whatever the client computed, the server decides.
 */
import type { PrismaClient } from "@/generated/prisma";
import { SagaError } from "@/lib/saga/errors";
import { checkGate } from "@/lib/saga/gate";
import { randomIds } from "@/lib/saga/ids";
import { argsHash, compensationKey, stepKey } from "@/lib/saga/keys";
import { IntentGuardFailed, type InsertIntentResult, type IntentGuard, type NewIntent } from "@/lib/saga/store";
import { Phase, RunStatus, ToolClass, UNSETTLED_STATUSES } from "@/lib/saga/vocabulary";
import { agentActor, assertRunOpen, assertToolInScope, getAgentRun, harnessStore } from "./access";
import { ApiError } from "./errors";
import { getToolPolicy } from "./policy";
import type { AgentPrincipal } from "./principal";

/** An intent as the client sends it (the run comes from the URL). */
export type IntentInput = Omit<NewIntent, "runId" | "id"> & { id?: string };

function mismatch(path: string, message: string): SagaError {
  return new SagaError("INVALID_ARGS", `${path}: ${message}`, [{ path, message }]);
}

export async function recordIntent(prisma: PrismaClient, principal: AgentPrincipal, runId: string, input: IntentInput): Promise<InsertIntentResult> {
  assertToolInScope(principal, input.tool);
  const store = harnessStore(prisma);
  const run = await getAgentRun(store, principal, runId);
  const policy = await getToolPolicy(prisma, input.tool);

  if (policy.class === ToolClass.PURE) throw mismatch("tool", `${input.tool} is PURE in the tool table: pure calls are not logged.`);
  if (input.toolClass !== policy.class) throw mismatch("toolClass", `the tool table says ${input.tool} is ${policy.class}, not ${input.toolClass}.`);
  const expectedKey = stepKey(runId, input.stepIdx, input.tool);
  if (input.stepKey !== expectedKey) throw mismatch("stepKey", `must be sha256(runId:stepIdx:tool)[:32] = ${expectedKey}; keys come from the run, never the model.`);
  if (input.argsHash !== argsHash(input.args)) throw mismatch("argsHash", "does not match the canonical hash of args.");

  const compensationNeeded = policy.class === ToolClass.REVERSIBLE || policy.class === ToolClass.COMPENSATABLE;
  if (compensationNeeded && input.compensation && input.compensation.tool !== policy.compensator) {
    throw mismatch("compensation.tool", `the tool table answers ${input.tool} with "${policy.compensator ?? "nothing"}", not "${input.compensation.tool}".`);
  }
  const expectedCompKey = compensationKey(runId, input.stepIdx, input.tool);
  if (input.compensationKey !== null && input.compensationKey !== expectedCompKey) {
    throw mismatch("compensationKey", `must be sha256(runId:stepIdx:compensate:tool)[:32] = ${expectedCompKey}.`);
  }
  const compensationBuildable = !compensationNeeded || input.compensation !== null;
  const actor = agentActor(principal);
  const record = (decision: { phase: Phase; approvalId: string | null; planItemIdx: number | null }, guard?: IntentGuard) =>
    store.insertIntent(
      {
        ...input,
        id: input.id ?? randomIds.next("stp"),
        runId,
        phase: decision.phase,
        approvalId: decision.approvalId,
        planItemIdx: decision.planItemIdx,
        policyVersion: policy.policyVersion ?? 1,
        compensationKey: compensationNeeded ? expectedCompKey : null,
      },
      { type: "step.intended", actor, data: { stepIdx: input.stepIdx, tool: input.tool, stepKey: input.stepKey, phase: decision.phase, via: "api" } },
      guard,
    );

  // The common call, plain staging, in one guarded insert: the checks below (the next step, nothing
  // unsettled before it, no pivot, the run open) are its guard, in the insert's own transaction. When
  // one does not hold, nothing was written and the careful path below finds which, and says so.
  if (run.status === RunStatus.RUNNING && policy.class !== ToolClass.IRREVERSIBLE && compensationBuildable) {
    try {
      return await record({ phase: Phase.STAGING, approvalId: null, planItemIdx: null }, { runStatus: [RunStatus.RUNNING], appendOnly: true, noPivot: true });
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
  const plainStaging = pivots.length === 0 && policy.class !== ToolClass.IRREVERSIBLE && compensationBuildable;
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

  return record(decision);
}
