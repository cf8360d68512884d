/**
 * The saga engine: the harness an agent calls instead of calling tools directly. See ARCHITECTURE.md
 * for the state machine and where each invariant is enforced.
 */
import { systemClock, type Clock } from "./clock";
import { noCrashPoints, type CrashPoints } from "./crash-points";
import { isSagaServer, type SagaServer } from "./agent-port";
import { type AgentDeps } from "./deps";
import type { SagaObserver } from "./observer";
import type { ReconcileReport, UnwindReport } from "./messages";
import { SagaError } from "./errors";
import { randomIds, type IdGenerator } from "./ids";
import { irreversibleBeforePivot } from "./metrics";
import { lookUpStep } from "./reconcile";
import type { Actor, RunRecord, SagaStore, StepRecord } from "./store";
import type { Json, ToolRegistry } from "./tools";
import { type UnwindOptions } from "./unwind";
import { RunContext } from "./run-context";
import { compensateStepHere, reconcileHere, unwindHere } from "./unwind-here";

/** Options of an engine. */
export interface SagaEngineOptions {
  /**
   * Who decides: this process's store (the engine decides in process), or a server that decides for
   * it (`HttpSagaStore`: the engine then only calls tools, looks keys up and sends compensations).
   */
  store: SagaStore | SagaServer;
  /** Tools and compensators this process can run. */
  registry: ToolRegistry;
  /** Time (default: the wall clock). */
  clock?: Clock;
  /** Id generation (default: time-ordered random ids). */
  ids?: IdGenerator;
  /** Named crash points (tests only). */
  crashPoints?: CrashPoints;
  /** Pause before reconcile's second lookup (default 2000 ms: search indexes lag). */
  recheckAfterMs?: number;
  /** Attempts under one key when the provider says "try later" (default 3). */
  maxAttempts?: number;
  /** First backoff pause (default 200 ms, doubling). */
  backoffMs?: number;
  /**
   * Told of the steps this engine records and the escalations it raises when it decides in process
   * (traces: lib/core/observability/saga-spans.ts); an engine over a server leaves that to the server.
   */
  observer?: SagaObserver;
}

/**
 * The harness. One per process; it holds no run state besides what the store has. The decisions only
 * people make (pivots, held calls, unknown outcomes) are not here: they are `ReviewerEngine`'s
 * (reviewer-engine.ts), which needs the store itself; an agent's engine reaches a server that never
 * lets it decide them.
 */
export class SagaEngine {
  readonly deps: AgentDeps;

  constructor(options: SagaEngineOptions) {
    const side = isSagaServer(options.store) ? { store: null, server: options.store } : { store: options.store, server: null };
    this.deps = {
      ...side,
      registry: options.registry,
      clock: options.clock ?? systemClock,
      ids: options.ids ?? randomIds,
      crashPoints: options.crashPoints ?? noCrashPoints,
      recheckAfterMs: options.recheckAfterMs ?? 2000,
      maxAttempts: options.maxAttempts ?? 3,
      backoffMs: options.backoffMs ?? 200,
      systemActor: { type: "system", id: "engine" },
      ...(options.observer ? { observer: options.observer } : {}),
    } as AgentDeps;
  }

  /** Where runs, steps and pivots are read: the server, or this process's store. */
  private get reader(): Pick<SagaServer, "createRun" | "getRun" | "getStep" | "listSteps"> {
    return this.deps.server ?? this.deps.store!;
  }

  /** Starts a run for an agent. */
  async startRun(input: { title: string; agent: string; onBehalfOf?: string | null; metadata?: Json }): Promise<RunContext> {
    const run = await this.reader.createRun(
      { id: this.deps.ids.next("run"), title: input.title, agent: input.agent, onBehalfOf: input.onBehalfOf ?? null, metadata: input.metadata ?? {} },
      { type: "run.started", actor: { type: "agent", id: input.agent }, data: { title: input.title } },
    );
    return new RunContext(this.deps, run, true);
  }

  /** Continues a run from its log alone (a new process after a crash): replayed steps return their recorded results. */
  async resume(runId: string): Promise<RunContext> {
    return new RunContext(this.deps, await this.getRun(runId));
  }

  /** The run's saga log, by stepIdx (the server's, or this process's store). */
  listSteps(runId: string): Promise<StepRecord[]> {
    return this.reader.listSteps(runId);
  }

  /** The run, or RUN_NOT_FOUND. */
  async getRun(runId: string): Promise<RunRecord> {
    const run = await this.reader.getRun(runId);
    if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${runId} does not exist; check the id, or start a new run.`);
    return run;
  }

  /**
   * Unwinds a run (reconcile, then compensate in reverse); call again to resume a crashed unwind. On
   * server (`SagaServer.unwinds`, over HTTP) the server walks the log
   * and this process only does what needs its connectors, as a worker in any other language does.
   */
  async unwind(runId: string, actor: Actor, reason: string, options: UnwindOptions = {}): Promise<UnwindReport> {
    return unwindHere(this.deps, runId, actor, reason, options);
  }

  /** Pulls back one step: its compensation (confirmed by reading back) or its correction draft. Idempotent. */
  async compensateStep(stepId: string, actor: Actor, draftedBy: string | null = null): Promise<StepRecord> {
    return compensateStepHere(this.deps, stepId, actor, draftedBy);
  }

  /** Reconciles one step against the real system. */
  async reconcile(stepId: string, actor: Actor = this.deps.systemActor): Promise<StepRecord> {
    const step = await this.reader.getStep(stepId);
    if (!step) throw new SagaError("STEP_NOT_FOUND", `Step ${stepId} does not exist.`);
    return reconcileHere(this.deps, step, actor);
  }

  /**
   * Looks one step's key up in the real system for a person ("check the real system"): found, absent
   * after the search-lag recheck, or the lookup failing. Changes nothing; settling the step with what
   * it found is a separate, audited decision.
   */
  async lookUp(stepId: string): Promise<{ step: StepRecord; report: ReconcileReport }> {
    const step = await this.reader.getStep(stepId);
    if (!step) throw new SagaError("STEP_NOT_FOUND", `Step ${stepId} does not exist.`);
    return { step, report: await lookUpStep(this.deps, this.deps.registry.tool(step.tool), step) };
  }

  /** Irreversible steps executed before the pivot without approval (must be 0). */
  async irreversibleBeforePivot(runId: string): Promise<number> {
    return irreversibleBeforePivot(await this.reader.listSteps(runId));
  }
}
