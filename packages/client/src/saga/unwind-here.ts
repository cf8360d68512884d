/**
 * Unwinds, revokes and reconciles from this process, wherever the decisions are made: on a store the
 * engine decides on (in process), the functions of unwind.ts and reconcile.ts; on a store whose
 * decisions are the server's (a `SagaServer`: HttpSagaStore), the server's commands, with this process doing only
 * what needs its connectors (`lookUpStep`, `sendCompensation`), as a worker in any language does.
 */
import { CrashPoint } from "./crash-points";
import type { CallPort, SagaServer, UnwindPort } from "./agent-port";
import { type AgentDeps } from "./deps";
import { lookUpStep, reconcileStep } from "./reconcile";
import type { Actor, StepRecord } from "./store";
import { compensateOneStep, compensationContext, sendCompensation, unwindRun, type UnwindOptions } from "./unwind";
import type { CompensationReport, ConnectorAction, UnwindReport } from "./messages";
import { UNSETTLED_STATUSES } from "./vocabulary";

/**
 * Unwinds a run from this process: on a store the engine decides on, `unwindRun`; on one whose
 * decisions are the server's (`server.unwinds`, over HTTP), the server walks the log and this process
 * only does what needs its connectors, exactly as a worker in any other language does.
 */
export function unwindHere(deps: AgentDeps, runId: string, actor: Actor, reason: string, options: UnwindOptions = {}): Promise<UnwindReport> {
  return deps.server ? unwindRemotely(deps, deps.server, runId, actor, reason, options) : unwindRun({ ...deps, store: deps.store }, runId, actor, reason, options);
}

async function unwindRemotely(deps: AgentDeps, server: SagaServer, runId: string, actor: Actor, reason: string, options: UnwindOptions): Promise<UnwindReport> {
  for (let done = 0; ; done++) {
    if (done > 0) deps.crashPoints.hit(CrashPoint.MID_UNWIND); // between steps, as unwindRun hits it
    const action = await server.unwinds.next({ runId, reason, skipStepIds: options.skipStepIds, draftedBy: options.draftedBy ?? null, actor });
    if (action.kind === "done") return action.report;
    await connectorAction(deps, server.calls, server.unwinds, action, actor);
  }
}

/** Looks the key up here and reports it to the deciding side (`server.calls`). */
async function reconcileRemotely(deps: AgentDeps, calls: CallPort, step: StepRecord, actor: Actor): Promise<StepRecord> {
  if (!UNSETTLED_STATUSES.includes(step.status)) return step;
  const report = await lookUpStep(deps, deps.registry.tool(step.tool), step);
  if (report.kind === "found") deps.crashPoints.hit(CrashPoint.DURING_RECONCILE);
  return calls.reconciled({ step, report, actor });
}

/** Does what the deciding side asked for with this process's connectors, and reports it. */
async function connectorAction(deps: AgentDeps, calls: CallPort, remote: UnwindPort, action: ConnectorAction, actor: Actor): Promise<void> {
  if (action.kind === "reconcile") {
    await reconcileRemotely(deps, calls, action.step, actor);
    return;
  }
  const compensator = deps.registry.compensator(action.compensation.tool);
  const parsed = compensator.args.safeParse(action.compensation.args);
  const report: CompensationReport = parsed.success
    ? await sendCompensation(deps, compensator, parsed.data, compensationContext(action.step, action.compensationKey), action.verifyFirst)
    : { done: false, reason: "invalid_compensation", message: parsed.error.message, remaining: null };
  await remote.compensated({ step: action.step, report, actor });
}

/** Pulls back one step from this process: `compensateOneStep`, or the server's walk for it (`server.unwinds`). */
export async function compensateStepHere(deps: AgentDeps, stepId: string, actor: Actor, draftedBy: string | null): Promise<StepRecord> {
  if (!deps.server) return compensateOneStep({ ...deps, store: deps.store }, stepId, actor, draftedBy);
  const { calls, unwinds } = deps.server;
  for (;;) {
    const action = await unwinds.nextForStep({ stepId, draftedBy, actor });
    if (action.kind === "done") return action.step;
    await connectorAction(deps, calls, unwinds, action, actor);
  }
}

/** Reconciles one step from this process: `reconcileStep`, or look up here and report to the server (`server.calls`). */
export function reconcileHere(deps: AgentDeps, step: StepRecord, actor: Actor): Promise<StepRecord> {
  return deps.server ? reconcileRemotely(deps, deps.server.calls, step, actor) : reconcileStep({ ...deps, store: deps.store }, step, actor);
}
