/**
 * Unwinds, revokes and reconciles from this process, wherever the decisions are made: on a store the
 * engine decides on (in process), the functions of unwind.ts and reconcile.ts; on a store whose
 * decisions are the server's (HttpSagaStore), the server's commands, with this process doing only
 * what needs its connectors (`lookUpStep`, `sendCompensation`), as a worker in any language does.
 */
import { CrashPoint } from "./crash-points";
import { type EngineDeps } from "./deps";
import { SagaError } from "./errors";
import { lookUpStep, reconcileStep } from "./reconcile";
import type { Actor, CallPort, StepRecord, UnwindPort } from "./store";
import { compensateOneStep, compensationContext, sendCompensation, unwindRun, type UnwindOptions, type UnwindReport } from "./unwind";
import type { CompensationReport, ConnectorAction } from "./unwind-commands";
import { UNSETTLED_STATUSES } from "./vocabulary";

/**
 * Unwinds a run from this process: on a store the engine decides on, `unwindRun`; on one whose
 * decisions are the server's (`store.unwinds`, over HTTP), the server walks the log and this process
 * only does what needs its connectors, exactly as a worker in any other language does.
 */
export function unwindHere(deps: EngineDeps, runId: string, actor: Actor, reason: string, options: UnwindOptions = {}): Promise<UnwindReport> {
  const remote = deps.store.unwinds;
  return remote ? unwindRemotely(deps, remote, runId, actor, reason, options) : unwindRun(deps, runId, actor, reason, options);
}

async function unwindRemotely(deps: EngineDeps, remote: UnwindPort, runId: string, actor: Actor, reason: string, options: UnwindOptions): Promise<UnwindReport> {
  for (let done = 0; ; done++) {
    if (done > 0) deps.crashPoints.hit(CrashPoint.MID_UNWIND); // between steps, as unwindRun hits it
    const action = await remote.next({ runId, reason, skipStepIds: options.skipStepIds, draftedBy: options.draftedBy ?? null, actor });
    if (action.kind === "done") return action.report;
    await connectorAction(deps, remote, action, actor);
  }
}

/** Looks the key up here and reports it to the deciding side (`store.calls`). */
async function reconcileRemotely(deps: EngineDeps, calls: CallPort, step: StepRecord, actor: Actor): Promise<StepRecord> {
  if (!UNSETTLED_STATUSES.includes(step.status)) return step;
  const report = await lookUpStep(deps, deps.registry.tool(step.tool), step);
  if (report.kind === "found") deps.crashPoints.hit(CrashPoint.DURING_RECONCILE);
  return calls.reconciled({ step, report, actor });
}

/** Does what the deciding side asked for with this process's connectors, and reports it. */
async function connectorAction(deps: EngineDeps, remote: UnwindPort, action: ConnectorAction, actor: Actor): Promise<void> {
  if (action.kind === "reconcile") {
    if (!deps.store.calls) throw new SagaError("CONFLICT", "This store decides unwinds remotely but offers no reconcile command.");
    await reconcileRemotely(deps, deps.store.calls, action.step, actor);
    return;
  }
  const compensator = deps.registry.compensator(action.compensation.tool);
  const parsed = compensator.args.safeParse(action.compensation.args);
  const report: CompensationReport = parsed.success
    ? await sendCompensation(deps, compensator, parsed.data, compensationContext(action.step, action.compensationKey), action.verifyFirst)
    : { done: false, reason: "invalid_compensation", message: parsed.error.message, remaining: null };
  await remote.compensated({ step: action.step, report, actor });
}

/** Pulls back one step from this process: `compensateOneStep`, or the server's walk for it (`store.unwinds`). */
export async function compensateStepHere(deps: EngineDeps, stepId: string, actor: Actor, draftedBy: string | null): Promise<StepRecord> {
  const remote = deps.store.unwinds;
  if (!remote) return compensateOneStep(deps, stepId, actor, draftedBy);
  for (;;) {
    const action = await remote.nextForStep({ stepId, draftedBy, actor });
    if (action.kind === "done") return action.step;
    await connectorAction(deps, remote, action, actor);
  }
}

/** Reconciles one step from this process: `reconcileStep`, or look up here and report to the server (`store.calls`). */
export function reconcileHere(deps: EngineDeps, step: StepRecord, actor: Actor): Promise<StepRecord> {
  return deps.store.calls ? reconcileRemotely(deps, deps.store.calls, step, actor) : reconcileStep(deps, step, actor);
}
