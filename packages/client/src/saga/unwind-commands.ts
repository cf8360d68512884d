/**
 * An unwind driven one step at a time, for workers in any language: the server walks the log in
 * reverse and answers the next thing only a connector can do (look a key up, send a compensation
 * and read it back); the worker does it and reports; everything else (the order, what is skipped,
 * escalations, corrections, the final status) is decided here and in unwind.ts, never in the worker.
 */
import type { EngineDeps } from "./deps";
import type { CompensationReport, ConnectorAction, StepCompensateAction, UnwindAction } from "./messages";
import { SagaError } from "./errors";
import type { Actor, StepRecord } from "./store";
import { compensateOneStep, confirmCompensation, failCompensation, markCompensationRequested, unwindRun, type UnwindOptions } from "./unwind";
import { CompensationState, EscalationStatus, RunStatus, StepStatus, ToolClass, UNSETTLED_STATUSES } from "./vocabulary";

/**
 * The next action of the run's unwind: the latest unsettled step to reconcile, else the latest
 * confirmed reversible or compensatable step to compensate (its compensation is marked REQUESTED
 * before the worker is told, as an in-process unwind does before it calls); when nothing needs a
 * connector any more, the unwind finishes here (corrections, escalations, UNWOUND or NEEDS_ATTENTION).
 */
export async function nextUnwindAction(deps: EngineDeps, runId: string, actor: Actor, reason: string, options: Pick<UnwindOptions, "skipStepIds" | "draftedBy"> = {}): Promise<UnwindAction> {
  const skip = new Set(options.skipStepIds ?? []);
  const run = await deps.store.getRun(runId);
  if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${runId} does not exist.`);
  if (run.status !== RunStatus.UNWINDING) {
    await deps.store.setRunStatus(runId, null, RunStatus.UNWINDING, { type: "run.unwinding", actor, data: { reason } });
  }
  for (const step of (await deps.store.listSteps(runId)).reverse()) {
    if (skip.has(step.id)) continue; // left as it is (a whole-run revoke: past its window, escalated instead)
    const action = await nextStepAction(deps, step, actor);
    if (action) return action;
  }
  // Nothing left that needs a connector: the walk's bookkeeping (corrections, escalations, status).
  return { kind: "done", report: await unwindRun(deps, runId, actor, reason, { ...options, lookupsDone: true }) };
}

/**
 * The next action of pulling back one step (a revoke's COMPENSATE task): reconcile it, or
 * compensate it, as an unwind would; when nothing needs a connector any more, the bookkeeping is
 * `compensateOneStep`'s (a failed compensation escalated, the correction an audience that saw it needs).
 */
export async function nextCompensateAction(deps: EngineDeps, stepId: string, actor: Actor, draftedBy: string | null): Promise<StepCompensateAction> {
  const step = await deps.store.getStep(stepId);
  if (!step) throw new SagaError("STEP_NOT_FOUND", `Step ${stepId} does not exist.`);
  const action = await nextStepAction(deps, step, actor);
  if (action) return action;
  return { kind: "done", step: await compensateOneStep(deps, stepId, actor, draftedBy, { lookupsDone: true }) };
}

/**
 * What `step` needs from a connector, if anything: a lookup while its outcome is unsettled (unless a
 * failed one already went to a person), else the compensation of a confirmed reversible or
 * compensatable step, marked REQUESTED before the worker is told (as an in-process unwind marks it
 * before it calls). Null: nothing (settled, irreversible, answered, or left to a person).
 */
async function nextStepAction(deps: EngineDeps, step: StepRecord, actor: Actor): Promise<ConnectorAction | null> {
  if (UNSETTLED_STATUSES.includes(step.status)) {
    // Its lookup already failed (a person was asked): leave it to them, or the walk would ask forever.
    return (await lookupFailedBefore(deps, step)) ? null : { kind: "reconcile", step };
  }
  if (step.status !== StepStatus.CONFIRMED || step.toolClass === ToolClass.IRREVERSIBLE) return null;
  if (!step.compensation || !step.compensationKey) {
    await failCompensation(deps, step, actor, "no_compensation", "the row carries no pre-written compensation", null);
    return null;
  }
  if (step.compensationState === CompensationState.REQUESTED) {
    return { kind: "compensate", step, compensation: step.compensation, compensationKey: step.compensationKey, verifyFirst: true };
  }
  const requested = await markCompensationRequested(deps, step, step.compensation, step.compensationKey, actor);
  const current = requested ?? (await deps.store.getStep(step.id));
  if (current?.compensationState === CompensationState.REQUESTED && current.status === StepStatus.CONFIRMED) {
    return { kind: "compensate", step: current, compensation: step.compensation, compensationKey: step.compensationKey, verifyFirst: !requested };
  }
  return null;
}

/** Whether a lookup of `step` failed and its OUTCOME_UNKNOWN escalation still waits for a person. */
async function lookupFailedBefore(deps: EngineDeps, step: StepRecord): Promise<boolean> {
  const escalation = await deps.store.findEscalationByDedupeKey(`unknown:${step.id}`);
  return escalation !== null && escalation.status !== EscalationStatus.RESOLVED;
}

/** Records a compensation's outcome as read back by the worker; a step no longer REQUESTED is answered as it is. */
export async function recordCompensation(deps: EngineDeps, step: StepRecord, report: CompensationReport, actor: Actor): Promise<StepRecord> {
  if (step.status !== StepStatus.CONFIRMED || step.compensationState !== CompensationState.REQUESTED) {
    throw new SagaError("STEP_NOT_IN_FLIGHT", `Step ${step.stepIdx} (${step.tool}) has no compensation in flight (it is ${step.status}, compensation ${step.compensationState}); ask for the next action.`, [
      { path: "done", message: "no compensation requested" },
    ]);
  }
  if (report.done) return confirmCompensation(deps, step, actor, report.compensationRef, report.how);
  return failCompensation(deps, step, actor, report.reason, report.message, report.remaining);
}
