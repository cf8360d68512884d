import { compensationStillOut, repairedByHand } from "./step-standing";
import { CrashPoint, SimulatedCrash } from "./crash-points";
import { EscalationSource, tellStepRecorded } from "./observer";
import { raiseEscalation } from "./raise-escalation";
import type { EngineDeps } from "./deps";
import type { CompensationReport, UnwindReport } from "./messages";
import { SagaError, ToolRejected } from "./errors";
import { reconcileStep } from "./reconcile";
import { actorLabel, type Actor, type StepRecord } from "./store";
import type { CompensationContext, CompensationPlan, CompensatorDefinition, Json } from "./tools";
import {
  audienceRank,
  CompensationState,
  EscalationKind,
  EscalationStatus,
  isExternalAudience,
  RunStatus,
  StepStatus,
  ToolClass,
  UNSETTLED_STATUSES,
} from "./vocabulary";

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Runs a confirmed step's pre-written compensation under its own key and confirms it by reading back. */
async function compensate(deps: EngineDeps, step: StepRecord, actor: Actor): Promise<StepRecord> {
  const startedAt = new Date(); // the compensate span covers the send and its read-back
  const plan = step.compensation;
  if (!plan || !step.compensationKey) {
    return failCompensation(deps, step, actor, "no_compensation", "the row carries no pre-written compensation", null, startedAt);
  }
  const compensator = deps.registry.compensator(plan.tool);
  const parsed = compensator.args.safeParse(plan.args);
  if (!parsed.success) {
    return failCompensation(deps, step, actor, "invalid_compensation", parsed.error.message, null, startedAt);
  }
  let current = step;
  const requestedBefore = current.compensationState !== CompensationState.NONE;
  if (!requestedBefore) {
    const requested = await markCompensationRequested(deps, step, plan, step.compensationKey, actor);
    if (!requested) return (await deps.store.getStep(step.id)) ?? step;
    current = requested;
  }
  const report = await sendCompensation(deps, compensator, parsed.data, compensationContext(current, step.compensationKey), requestedBefore);
  return report.done
    ? confirmCompensation(deps, current, actor, report.compensationRef, report.how, startedAt)
    : failCompensation(deps, current, actor, report.reason, report.message, report.remaining, startedAt);
}

/**
 * Records that a confirmed step's compensation is about to be sent (REQUESTED), fenced on CONFIRMED
 * with nothing requested yet: written before the connector is called, so a crash after the send is
 * found REQUESTED and read back first. Null when the fence did not match (someone else got there).
 */
export function markCompensationRequested(deps: Pick<EngineDeps, "store" | "clock">, step: StepRecord, plan: CompensationPlan, compensationKey: string, actor: Actor): Promise<StepRecord | null> {
  return deps.store.updateStep(
    step.id,
    { status: [StepStatus.CONFIRMED], compensationState: [CompensationState.NONE] },
    { compensationState: CompensationState.REQUESTED, compensationRequestedAt: deps.clock.now() },
    { type: "compensation.requested", actor, data: { compensation: plan as unknown as Json, compensationKey } },
  );
}

/** What a compensator is told about the step it answers. */
export function compensationContext(step: StepRecord, compensationKey: string): CompensationContext {
  return { compensationKey, target: { stepKey: step.stepKey, externalRef: step.externalRef, tool: step.tool, args: step.args } };
}

/**
 * The connector's part of a compensation, where the connector is (this process, or a worker driving
 * `unwind-commands.ts`): read the real system back first when it was requested before (a crash);
 * send it under its key; a refusal is final unless it is already in effect; a timeout or "try later"
 * is read back (again after the search lag) and retried up to `maxAttempts`. Writes nothing: the
 * caller records the report (`confirmCompensation` / `failCompensation`, or `recordCompensation`).
 */
export async function sendCompensation(
  deps: Pick<EngineDeps, "maxAttempts" | "clock" | "recheckAfterMs" | "crashPoints">,
  compensator: CompensatorDefinition,
  args: unknown,
  ctx: CompensationContext,
  verifyFirst: boolean,
): Promise<CompensationReport> {
  if (verifyFirst) {
    // A compensation was requested before a crash: read the real system before sending anything again.
    const check = await compensator.verify(args, ctx);
    if (check.done) return { done: true, compensationRef: null, how: "verified after resume" };
  }
  let lastError = "compensation not confirmed";
  let remaining: Json | null = null;
  for (let attempt = 1; attempt <= deps.maxAttempts; attempt++) {
    let compensationRef: string | null = null;
    try {
      compensationRef = (await compensator.run(args, ctx)).externalRef ?? null;
    } catch (e) {
      if (e instanceof SimulatedCrash) throw e;
      if (e instanceof ToolRejected && !e.retryable) {
        const check = await compensator.verify(args, ctx);
        if (check.done) return { done: true, compensationRef: null, how: "already in effect" };
        return { done: false, reason: e.reason, message: e.message, remaining: check.remaining ?? null };
      }
      lastError = errorMessage(e); // timeout or retryable: the real system says what happened
    }
    deps.crashPoints.hit(CrashPoint.MID_COMPENSATION);
    let check = await compensator.verify(args, ctx);
    if (!check.done) {
      await deps.clock.sleep(deps.recheckAfterMs);
      check = await compensator.verify(args, ctx);
    }
    if (check.done) return { done: true, compensationRef, how: "read back" };
    remaining = check.remaining ?? null;
  }
  return { done: false, reason: "not_confirmed", message: lastError, remaining };
}

export async function confirmCompensation(
  deps: EngineDeps,
  step: StepRecord,
  actor: Actor,
  compensationRef: string | null,
  how: string,
  startedAt: Date = new Date(),
): Promise<StepRecord> {
  const updated = await deps.store.updateStep(
    step.id,
    { status: [StepStatus.CONFIRMED], compensationState: [CompensationState.NONE, CompensationState.REQUESTED] },
    {
      status: StepStatus.COMPENSATED,
      compensationState: CompensationState.CONFIRMED,
      compensationConfirmedAt: deps.clock.now(),
      compensationRef,
      compensationRequestedAt: step.compensationRequestedAt ?? deps.clock.now(),
    },
    { type: "compensation.confirmed", actor, data: { compensationRef, how } },
  );
  if (!updated) return (await deps.store.getStep(step.id)) as StepRecord;
  await tellStepRecorded(deps, "compensate", updated, startedAt);
  return updated;
}

export async function failCompensation(
  deps: EngineDeps,
  step: StepRecord,
  actor: Actor,
  reason: string,
  message: string,
  remaining: Json | null,
  startedAt: Date = new Date(),
): Promise<StepRecord> {
  const error = { reason, message, remaining, externalRef: step.externalRef, stepKey: step.stepKey };
  const updated =
    (await deps.store.updateStep(
      step.id,
      { status: [StepStatus.CONFIRMED] },
      { status: StepStatus.COMPENSATION_FAILED, compensationState: CompensationState.FAILED, compensationError: error },
      { type: "compensation.failed", actor, data: error },
    )) ?? ((await deps.store.getStep(step.id)) as StepRecord);
  await escalateFailedCompensation(deps, updated, actor);
  await tellStepRecorded(deps, "compensate", updated, startedAt);
  return updated;
}

/** Idempotent: a crash between the row update and the escalation is mended on the next unwind. */
async function escalateFailedCompensation(deps: EngineDeps, step: StepRecord, actor: Actor): Promise<void> {
  const def = deps.registry.has(step.tool) ? deps.registry.tool(step.tool) : null;
  await raiseEscalation(deps, {
    runId: step.runId,
    stepId: step.id,
    kind: EscalationKind.COMPENSATION_FAILED,
    title: `Compensation of ${step.tool} (step ${step.stepIdx}) failed: ${step.externalRef ?? step.stepKey} is still out there`,
    detail: {
      tool: step.tool,
      stepKey: step.stepKey,
      externalRef: step.externalRef,
      compensation: step.compensation as unknown as Json,
      compensationKey: step.compensationKey,
      error: step.compensationError,
    },
    owner: def?.owner ?? null,
    dedupeKey: `compfail:${step.id}`,
    actor,
    facts: { stepIdx: step.stepIdx },
    source: EscalationSource.compensation_failed,
  });
}

/**
 * Drafts the correction for an effect people saw. Irreversible effects always had an audience; a
 * compensated effect needs a note only when someone outside saw it (a refund with receipts off does not).
 */
export async function draftCorrection(deps: EngineDeps, step: StepRecord, actor: Actor, draftedBy: string | null = null): Promise<boolean> {
  if (!step.correction) return false;
  if (step.toolClass !== ToolClass.IRREVERSIBLE && !isExternalAudience(step.audience)) return false;
  await deps.store.createCorrection(
    {
      id: deps.ids.next("cor"),
      runId: step.runId,
      stepId: step.id,
      audience: step.correction.audience,
      rank: audienceRank(step.correction.audience),
      subject: step.correction.subject,
      body: step.correction.body,
      draftedBy,
    },
    { type: "correction.drafted", actor, data: { stepIdx: step.stepIdx, audience: step.correction.audience } },
  );
  return true;
}

/**
 * Unwinds a run: walks the log backwards; reconciles unsettled rows first; releases REVERSIBLE effects
 * silently; compensates COMPENSATABLE ones under their own keys and confirms by reading back; drafts
 * corrections for IRREVERSIBLE ones. A failing compensation is escalated and the unwind goes on.
 * Idempotent: a crashed unwind is resumed by calling it again.
 */
/** Options of `unwindRun`. */
export interface UnwindOptions {
  /**
   * Steps the unwind leaves as they are (a whole-run revoke: steps past their revocation window,
   * each answered by an escalation of its own instead). They are reported as skipped.
   */
  skipStepIds?: readonly string[];
  /** What asked for the unwind (`revoke:<rvk_...>`), recorded on the corrections it drafts. */
  draftedBy?: string | null;
  /**
   * The lookups already ran where the connectors are (a worker driving `unwind-commands.ts`): a step
   * still unsettled is left to its OUTCOME_UNKNOWN escalation and reported unresolved, not looked up here.
   */
  lookupsDone?: boolean;
}

/**
 * Pulls back one step (a revoke trigger): reconciles it if its outcome is unsettled, runs its
 * pre-written compensation under its own key and confirms it by reading back (a failure is recorded
 * with what is still out there and escalated), and drafts the correction an effect people saw needs.
 * An irreversible step is not compensated: it only gets its correction draft. Idempotent: a step
 * already compensated is returned as it is; a REQUESTED compensation is verified before anything is
 * sent again.
 */
export async function compensateOneStep(deps: EngineDeps, stepId: string, actor: Actor, draftedBy: string | null = null, options: Pick<UnwindOptions, "lookupsDone"> = {}): Promise<StepRecord> {
  let step = await deps.store.getStep(stepId);
  if (!step) throw new SagaError("STEP_NOT_FOUND", `Step ${stepId} does not exist.`);
  if (UNSETTLED_STATUSES.includes(step.status) && !options.lookupsDone) step = await reconcileStep(deps, step, actor);
  if (step.status === StepStatus.CONFIRMED && step.toolClass !== ToolClass.IRREVERSIBLE) step = await compensate(deps, step, actor);
  if (compensationStillOut(step)) await escalateFailedCompensation(deps, step, actor);
  if (step.status === StepStatus.CONFIRMED || step.status === StepStatus.COMPENSATED) await draftCorrection(deps, step, actor, draftedBy);
  return step;
}

export async function unwindRun(deps: EngineDeps, runId: string, actor: Actor, reason: string, options: UnwindOptions = {}): Promise<UnwindReport> {
  const skip = new Set(options.skipStepIds ?? []);
  const run = await deps.store.getRun(runId);
  if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${runId} does not exist.`);
  if (run.status !== RunStatus.UNWINDING) {
    await deps.store.setRunStatus(runId, null, RunStatus.UNWINDING, { type: "run.unwinding", actor, data: { reason } });
  }

  const report: UnwindReport = { runId, status: RunStatus.UNWINDING, compensated: [], compensationFailed: [], unresolved: [], corrections: [], skipped: [] };
  const steps = (await deps.store.listSteps(runId)).reverse();
  let settledOne = false;
  for (const original of steps) {
    if (skip.has(original.id)) {
      report.skipped.push(original.stepIdx);
      continue;
    }
    if (settledOne) deps.crashPoints.hit(CrashPoint.MID_UNWIND);
    let step = original;
    if (UNSETTLED_STATUSES.includes(step.status) && !options.lookupsDone) step = await reconcileStep(deps, step, actor);

    if (step.status === StepStatus.CONFIRMED && step.toolClass !== ToolClass.IRREVERSIBLE) {
      step = await compensate(deps, step, actor);
    }

    if (UNSETTLED_STATUSES.includes(step.status)) report.unresolved.push(step.stepIdx);
    else if (step.status === StepStatus.COMPENSATED) report.compensated.push(step.stepIdx);
    // A person answered it by hand (packages/client/src/saga/record-manual-repair.ts): nothing is left out there.
    else if (repairedByHand(step)) report.skipped.push(step.stepIdx);
    else if (step.status === StepStatus.COMPENSATION_FAILED) {
      await escalateFailedCompensation(deps, step, actor);
      report.compensationFailed.push(step.stepIdx);
    } else if (step.status !== StepStatus.CONFIRMED) report.skipped.push(step.stepIdx);

    if (step.status === StepStatus.CONFIRMED || step.status === StepStatus.COMPENSATED) {
      if (await draftCorrection(deps, step, actor, options.draftedBy ?? null)) report.corrections.push(step.stepIdx);
    }
    settledOne = true;
  }

  await closeHeldCalls(deps, runId, actor, reason);
  const openEscalations = await deps.store.listEscalations({ runId, status: ["OPEN", "CLAIMED"] });
  const needsPeople = report.compensationFailed.length + report.unresolved.length + report.corrections.length + openEscalations.length > 0;
  report.status = needsPeople ? RunStatus.NEEDS_ATTENTION : RunStatus.UNWOUND;
  await deps.store.setRunStatus(runId, [RunStatus.UNWINDING], report.status, {
    type: "run.unwound",
    actor,
    data: { ...report, reason } as unknown as Json,
  });
  return report;
}

/**
 * The calls of an unwound run that still wait for a person's approval are closed, saying why: the
 * run takes no more calls, so an approval could never let one run, and a reviewer should not spend
 * a decision on it. Each is its own resolution with its audit event; one another process resolved
 * first is left as that process left it.
 */
async function closeHeldCalls(deps: EngineDeps, runId: string, actor: Actor, reason: string): Promise<void> {
  const held = await deps.store.listEscalations({ runId, status: [EscalationStatus.OPEN, EscalationStatus.CLAIMED] });
  for (const e of held.filter((x) => x.kind === EscalationKind.APPROVAL_REQUIRED)) {
    const resolution = { approved: false, closedBecause: "run_unwound", note: `Closed: the run was pulled back (${reason}), so this call will never be sent.` };
    await deps.store.resolveEscalation(e.id, { resolvedBy: actorLabel(actor), resolution }, { type: "escalation.resolved", actor, data: { escalationId: e.id, kind: e.kind, resolution } });
  }
}
