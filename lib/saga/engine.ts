/**
 * The saga engine: the harness an agent calls instead of calling tools directly. See ARCHITECTURE.md
 * for the state machine and where each invariant is enforced.
 */
import { systemClock, type Clock } from "./clock";
import { CrashPoint, noCrashPoints, SimulatedCrash, type CrashPoints } from "./crash-points";
import { backoffDelay, type EngineDeps } from "./deps";
import { ApprovalRequiredError, SagaError, ToolCallFailed, ToolOutcomeUnknown, ToolRejected } from "./errors";
import { checkGate, currentPolicyVersion, type ApprovalReason } from "./gate";
import { randomIds, type IdGenerator } from "./ids";
import { argsHash, compensationKey, planHash, stepKey } from "./keys";
import { irreversibleBeforePivot } from "./metrics";
import { reconcileStep, toJson } from "./reconcile";
import { IntentGuardFailed, type Actor, type EscalationRecord, type PivotRecord, type PlanItem, type RunRecord, type SagaStore, type StepRecord } from "./store";
import type { CompensationPlan, CorrectionDraft, Json, ToolDefinition, ToolRegistry } from "./tools";
import { compensateOneStep, unwindRun, type UnwindOptions, type UnwindReport } from "./unwind";
import { EscalationKind, EscalationStatus, Phase, PivotStatus, RunStatus, StepStatus, ToolClass, UNSETTLED_STATUSES } from "./vocabulary";

/** Options of an engine. */
export interface SagaEngineOptions {
  /** Persistence. */
  store: SagaStore;
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
}

/** What a call returns when it did not throw. */
export type CallOutcome =
  | {
      /** The call ran (or was replayed from the log). */
      status: "ok";
      /** The step's index (null for PURE calls, which are not logged). */
      stepIdx: number | null;
      /** The step's key (null for PURE calls). */
      stepKey: string | null;
      /** The external system's id for the effect. */
      externalRef: string | null;
      /** The tool's result. */
      result: Json;
      /** True when the result came from the log (replay or reconcile), not from a new call. */
      replayed: boolean;
    }
  | {
      /** The call was not made: a person must approve first. */
      status: "approval_required";
      /** Why. */
      reason: ApprovalReason;
      /** What to do, in words. */
      message: string;
      /** The escalation holding the call, if one was raised. */
      escalationId: string | null;
      /** The pivot concerned, if any. */
      pivotId: string | null;
    };

/** One item of a commit plan, as the agent proposes it. */
export interface ProposedPlanItem {
  /** Tool name. */
  tool: string;
  /** Exact arguments. */
  args: unknown;
}

/** A pivot request. */
export interface PivotRequest {
  /** One paragraph for the reviewer. */
  summary: string;
  /** The commit calls to approve. */
  plan: ProposedPlanItem[];
  /** When the staged effects stop being releasable (an authorisation hold expires). */
  deadline?: Date | null;
}

const CLOSED_RUN_STATUSES: readonly RunStatus[] = [RunStatus.COMPLETED, RunStatus.UNWINDING, RunStatus.UNWOUND, RunStatus.NEEDS_ATTENTION];

/** The harness. One per process; it holds no run state besides what the store has. */
export class SagaEngine {
  readonly deps: EngineDeps;

  constructor(options: SagaEngineOptions) {
    this.deps = {
      store: options.store,
      registry: options.registry,
      clock: options.clock ?? systemClock,
      ids: options.ids ?? randomIds,
      crashPoints: options.crashPoints ?? noCrashPoints,
      recheckAfterMs: options.recheckAfterMs ?? 2000,
      maxAttempts: options.maxAttempts ?? 3,
      backoffMs: options.backoffMs ?? 200,
      systemActor: { type: "system", id: "engine" },
    };
  }

  /** Starts a run for an agent. */
  async startRun(input: { title: string; agent: string; onBehalfOf?: string | null; metadata?: Json }): Promise<RunContext> {
    const run = await this.deps.store.createRun(
      { id: this.deps.ids.next("run"), title: input.title, agent: input.agent, onBehalfOf: input.onBehalfOf ?? null, metadata: input.metadata ?? {} },
      { type: "run.started", actor: { type: "agent", id: input.agent }, data: { title: input.title } },
    );
    return new RunContext(this.deps, run, { run, steps: [], pivots: [] });
  }

  /** Continues a run from its log alone (a new process after a crash): replayed steps return their recorded results. */
  async resume(runId: string): Promise<RunContext> {
    return new RunContext(this.deps, await this.getRun(runId));
  }

  /** The run, or RUN_NOT_FOUND. */
  async getRun(runId: string): Promise<RunRecord> {
    const run = await this.deps.store.getRun(runId);
    if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${runId} does not exist; check the id, or start a new run.`);
    return run;
  }

  /** Unwinds a run (reconcile, then compensate in reverse); call again to resume a crashed unwind. */
  async unwind(runId: string, actor: Actor, reason: string, options: UnwindOptions = {}): Promise<UnwindReport> {
    return unwindRun(this.deps, runId, actor, reason, options);
  }

  /** Pulls back one step: its compensation (confirmed by reading back) or its correction draft. Idempotent. */
  async compensateStep(stepId: string, actor: Actor, draftedBy: string | null = null): Promise<StepRecord> {
    return compensateOneStep(this.deps, stepId, actor, draftedBy);
  }

  /** Reconciles one step against the real system. */
  async reconcile(stepId: string, actor: Actor = this.deps.systemActor): Promise<StepRecord> {
    const step = await this.deps.store.getStep(stepId);
    if (!step) throw new SagaError("STEP_NOT_FOUND", `Step ${stepId} does not exist.`);
    return reconcileStep(this.deps, step, actor);
  }

  /** Irreversible steps executed before the pivot without approval (must be 0). */
  async irreversibleBeforePivot(runId: string): Promise<number> {
    return irreversibleBeforePivot(await this.deps.store.listSteps(runId));
  }

  /**
   * A reviewer's decision on a pivot, bound to the plan hash the reviewer saw. Refused with
   * PIVOT_CONFLICT when it was already decided or the plan changed since.
   */
  async decidePivot(
    pivotId: string,
    decision: { approve: boolean; actor: Actor; planHash: string; reason?: string | null },
  ): Promise<PivotRecord> {
    if (!decision.approve && !decision.reason?.trim()) {
      throw new SagaError("INVALID_ARGS", "A rejection needs a reason: it goes back to the agent.", [{ path: "reason", message: "required when rejecting" }]);
    }
    const status = decision.approve ? PivotStatus.APPROVED : PivotStatus.REJECTED;
    const decided = await this.deps.store.decidePivot(
      pivotId,
      { status, decidedBy: decision.actor.id, reason: decision.reason ?? null, expectedPlanHash: decision.planHash },
      { type: decision.approve ? "pivot.approved" : "pivot.rejected", actor: decision.actor, data: { pivotId, planHash: decision.planHash, reason: decision.reason ?? null } },
    );
    if (decided) {
      if (decided.status === PivotStatus.APPROVED) await this.supersedeHolds(decided, decision.actor);
      return decided;
    }
    const pivot = await this.deps.store.getPivot(pivotId);
    if (!pivot) throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${pivotId} does not exist.`);
    if (pivot.status !== PivotStatus.PENDING) {
      throw new SagaError("PIVOT_CONFLICT", `Pivot ${pivotId} was already ${pivot.status.toLowerCase()} by ${pivot.decidedBy ?? "someone"}; reload it.`);
    }
    if (pivot.planHash === decision.planHash) {
      const run = await this.deps.store.getRun(pivot.runId);
      throw new SagaError("PIVOT_CONFLICT", `Run ${pivot.runId} is ${run?.status ?? "gone"} and no longer waits for pivot ${pivotId}; nothing was decided.`);
    }
    throw new SagaError(
      "PIVOT_CONFLICT",
      `The plan of pivot ${pivotId} changed since it was loaded (plan hash ${pivot.planHash.slice(0, 12)}, not ${decision.planHash.slice(0, 12)}); review the current plan and decide again.`,
    );
  }

  /**
   * Held calls that an approved pivot covers are resolved as superseded: the pivot is now their
   * approval, and a late approval of the old hold must not let the same call run a second time.
   */
  private async supersedeHolds(pivot: PivotRecord, actor: Actor): Promise<void> {
    const open = await this.deps.store.listEscalations({ runId: pivot.runId, status: [EscalationStatus.OPEN, EscalationStatus.CLAIMED] });
    for (const e of open) {
      const held = e.detail as { tool?: unknown; argsHash?: unknown } | null;
      if (e.kind !== EscalationKind.APPROVAL_REQUIRED || !pivot.plan.some((i) => i.tool === held?.tool && i.argsHash === held?.argsHash)) continue;
      const resolution = { approved: false, supersededBy: pivot.id, note: `covered by approved pivot ${pivot.id}` };
      await this.deps.store.resolveEscalation(e.id, { resolvedBy: actor.id, resolution }, {
        type: "escalation.resolved",
        actor,
        data: { escalationId: e.id, kind: e.kind, resolution },
      });
    }
  }

  /** A reviewer approves or rejects a call held in the escalation queue (APPROVAL_REQUIRED). */
  async decideHeldCall(escalationId: string, decision: { approve: boolean; actor: Actor; note?: string }): Promise<EscalationRecord> {
    const escalation = await this.getOpenEscalation(escalationId, EscalationKind.APPROVAL_REQUIRED);
    return this.resolve(escalation, decision.actor, { approved: decision.approve, note: decision.note ?? null });
  }

  /**
   * A person settles an UNKNOWN outcome with evidence: CONFIRMED (with the external ref found) or
   * NOT_EXECUTED (a retry may then reuse the key). Writes back to the saga log.
   */
  async settleUnknown(
    escalationId: string,
    decision: { outcome: "CONFIRMED" | "NOT_EXECUTED"; evidence: string; externalRef?: string | null; actor: Actor },
  ): Promise<EscalationRecord> {
    if (!decision.evidence.trim()) {
      throw new SagaError("INVALID_ARGS", "Settling an unknown outcome needs evidence (what you saw in the real system).", [{ path: "evidence", message: "required" }]);
    }
    const escalation = await this.getOpenEscalation(escalationId, EscalationKind.OUTCOME_UNKNOWN);
    if (!escalation.stepId) throw new SagaError("STEP_NOT_FOUND", `Escalation ${escalationId} names no step.`);
    const patch =
      decision.outcome === "CONFIRMED"
        ? { status: StepStatus.CONFIRMED, externalRef: decision.externalRef ?? null, result: { settledBy: decision.actor.id, evidence: decision.evidence } }
        : { status: StepStatus.NOT_EXECUTED };
    const step = await this.deps.store.updateStep(escalation.stepId, { status: UNSETTLED_STATUSES }, patch, {
      type: "step.settled",
      actor: decision.actor,
      data: { outcome: decision.outcome, evidence: decision.evidence, externalRef: decision.externalRef ?? null, escalationId },
    });
    if (!step) throw new SagaError("CONFLICT", `The step of escalation ${escalationId} is no longer unsettled; reload it.`);
    return this.resolve(escalation, decision.actor, { outcome: decision.outcome, evidence: decision.evidence });
  }

  /** Records a manual resolution (a repaired compensation, a decided stuck step) with a note. */
  async resolveEscalation(escalationId: string, decision: { actor: Actor; note: string; resolution?: Json }): Promise<EscalationRecord> {
    if (!decision.note.trim()) throw new SagaError("INVALID_ARGS", "A resolution needs a note saying what was done.", [{ path: "note", message: "required" }]);
    const escalation = await this.getOpenEscalation(escalationId, null);
    return this.resolve(escalation, decision.actor, { note: decision.note, ...(decision.resolution && typeof decision.resolution === "object" && !Array.isArray(decision.resolution) ? decision.resolution : {}) });
  }

  private async getOpenEscalation(escalationId: string, kind: EscalationKind | null): Promise<EscalationRecord> {
    const escalation = await this.deps.store.getEscalation(escalationId);
    if (!escalation) throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${escalationId} does not exist.`);
    if (kind && escalation.kind !== kind) {
      throw new SagaError("ESCALATION_CONFLICT", `Escalation ${escalationId} is ${escalation.kind}, not ${kind}; use the resolution for its kind.`);
    }
    if (escalation.status === EscalationStatus.RESOLVED) {
      throw new SagaError("ESCALATION_CONFLICT", `Escalation ${escalationId} was already resolved by ${escalation.resolvedBy ?? "someone"}.`);
    }
    return escalation;
  }

  private async resolve(escalation: EscalationRecord, actor: Actor, resolution: Json): Promise<EscalationRecord> {
    const resolved = await this.deps.store.resolveEscalation(
      escalation.id,
      { resolvedBy: actor.id, resolution },
      { type: "escalation.resolved", actor, data: { escalationId: escalation.id, kind: escalation.kind, resolution } },
    );
    if (!resolved) throw new SagaError("ESCALATION_CONFLICT", `Escalation ${escalation.id} was resolved by someone else first.`);
    return resolved;
  }
}

/**
 * One run as an agent drives it. The context owns the step cursor: it starts at 0 on every resume,
 * so replay walks the recorded log, and it never advances past a step whose outcome is unknown.
 */
export class RunContext {
  private cursor = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly actor: Actor;
  /** What this context last read of its run, kept up to date with its own writes (see `dispatch`). */
  private view: RunView | null;

  constructor(
    private readonly deps: EngineDeps,
    /** The run as it was when the context was made. */
    readonly run: RunRecord,
    /** What the creator knows the run holds (a run just started: nothing); else it is read on the first call. */
    known?: { run: RunRecord; steps: StepRecord[]; pivots: PivotRecord[] },
  ) {
    this.actor = { type: "agent", id: run.agent };
    this.view = known ? { ...known, fresh: false, policyVersions: new Map() } : null;
  }

  /** The run's id. */
  get runId(): string {
    return this.run.id;
  }

  /** Calls a tool through the saga log. Calls are serialised so step indexes follow call order. */
  call(tool: string, args: unknown): Promise<CallOutcome> {
    const next = this.queue.then(() =>
      this.dispatch(tool, args).catch((e: unknown): CallOutcome => {
        this.view = null; // whatever went wrong, the next call reads the run afresh
        if (!(e instanceof HeldByServer)) throw e;
        const { message, reason, escalationId, pivotId } = e.refusal;
        return { status: "approval_required", reason: reason as ApprovalReason, message, escalationId, pivotId };
      }),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Proposes the pivot: everything staged so far plus the commit plan. Re-proposing the same plan returns the same pivot. */
  async requestPivot(request: PivotRequest): Promise<PivotRecord> {
    this.view = null; // the pivot moves the run: the next call reads it afresh
    const { store, registry } = this.deps;
    if (!request.summary?.trim()) throw new SagaError("INVALID_ARGS", "A pivot needs a summary for the reviewer.", [{ path: "summary", message: "required" }]);
    if (!Array.isArray(request.plan) || request.plan.length === 0) {
      throw new SagaError("INVALID_ARGS", "A pivot needs a commit plan with at least one call.", [{ path: "plan", message: "must be a non-empty list" }]);
    }
    const plan: PlanItem[] = [];
    for (const [i, item] of request.plan.entries()) {
      const def = registry.tool(item.tool);
      if (def.class === ToolClass.PURE) {
        throw new SagaError("INVALID_ARGS", `Plan item ${i} (${def.name}) is PURE: pure calls need no approval; leave it out.`, [{ path: `plan.${i}.tool`, message: "pure tool" }]);
      }
      const parsed = toJson(parseArgsAt(registry, def, item.args, `plan.${i}.args`));
      plan.push({ tool: def.name, args: parsed, argsHash: argsHash(parsed), policyVersion: await this.policyVersion(def), toolClass: def.class });
    }
    const hash = planHash(plan);
    const pivots = await store.listPivots(this.runId);
    const latest = pivots.at(-1);
    if (latest && latest.planHash === hash && latest.status !== PivotStatus.REJECTED) return latest;
    const run = await store.getRun(this.runId);
    if (run && CLOSED_RUN_STATUSES.includes(run.status)) throw closedRun(run);
    const steps = await store.listSteps(this.runId);
    const staged = steps.filter((s) => s.phase === Phase.STAGING && s.status !== StepStatus.NOT_EXECUTED && s.status !== StepStatus.FAILED);
    if (latest?.status === PivotStatus.PENDING) {
      // A revised proposal replaces the pending one; a reviewer holding the old plan hash is refused.
      const revised = await store.revisePivot(
        latest.id,
        { summary: request.summary, plan, planHash: hash, stagedStepIds: staged.map((s) => s.id), deadline: request.deadline ?? null },
        { type: "pivot.revised", actor: this.actor, data: { previousPlanHash: latest.planHash, planHash: hash, items: plan.length } },
      );
      if (revised) return revised;
      throw new SagaError("PIVOT_CONFLICT", `Pivot ${latest.id} was decided while it was being revised; read its decision first.`);
    }
    return store.createPivot(
      { id: this.deps.ids.next("piv"), runId: this.runId, summary: request.summary, plan, planHash: hash, stagedStepIds: staged.map((s) => s.id), deadline: request.deadline ?? null },
      { type: "pivot.requested", actor: this.actor, data: { planHash: hash, items: plan.length, staged: staged.length } },
    );
  }

  /** Waits until the pivot is decided or `timeoutMs` passes (long-polling when the store can, else polling). */
  async awaitPivot(pivotId: string, options: { timeoutMs: number; pollMs?: number }): Promise<PivotRecord> {
    this.view = null;
    const deadline = Date.now() + options.timeoutMs;
    const { store } = this.deps;
    for (;;) {
      const remaining = Math.max(0, deadline - Date.now());
      const pivot = store.waitForPivot ? await store.waitForPivot(pivotId, Math.min(remaining, 25_000)) : await store.getPivot(pivotId);
      if (!pivot) throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${pivotId} does not exist.`);
      if (pivot.status !== PivotStatus.PENDING || Date.now() >= deadline) return pivot;
      if (!store.waitForPivot) await new Promise((r) => setTimeout(r, options.pollMs ?? 200));
    }
  }

  /** Unwinds this run. */
  unwind(reason: string): Promise<UnwindReport> {
    this.view = null;
    return unwindRun(this.deps, this.runId, this.actor, reason);
  }

  /** Marks the run finished; refused while a step is unsettled. */
  async complete(): Promise<RunRecord> {
    const steps = await this.deps.store.listSteps(this.runId);
    const open = steps.find((s) => UNSETTLED_STATUSES.includes(s.status));
    if (open) {
      throw new SagaError("STEP_UNRESOLVED", `Step ${open.stepIdx} (${open.tool}) is ${open.status}; call it again to reconcile before completing the run.`);
    }
    const run = await this.deps.store.setRunStatus(this.runId, [RunStatus.RUNNING, RunStatus.COMMITTING], RunStatus.COMPLETED, { type: "run.completed", actor: this.actor });
    if (!run) {
      const current = (await this.deps.store.getRun(this.runId)) ?? this.run;
      if (current.status === RunStatus.AWAITING_PIVOT) {
        throw new SagaError("PIVOT_CONFLICT", `Run ${this.runId} waits for a pivot decision; wait for it (or unwind) before completing.`);
      }
      throw closedRun(current);
    }
    return run;
  }

  /** Reads the run, its log and its pivots (the view the next decisions rest on). */
  private async readView(): Promise<RunView> {
    const { store } = this.deps;
    const run = await store.getRun(this.runId);
    if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${this.runId} does not exist.`);
    const steps = await store.listSteps(this.runId);
    const pivots = await store.listPivots(this.runId);
    this.view = { run, steps, pivots, fresh: true, policyVersions: new Map() };
    return this.view;
  }

  /** Puts a step row this context wrote (or read) into its view. */
  private remember(step: StepRecord): void {
    if (!this.view) return;
    const i = this.view.steps.findIndex((s) => s.id === step.id);
    if (i >= 0) this.view.steps[i] = step;
    else this.view.steps.push(step);
  }

  /**
   * One call. The context decides on its view of the run instead of reading the run, its log and its
   * pivots before every call: a call that the view lets through as plain staging (or within the plan
   * it last read) is recorded with a guard that the run row is still the version the view holds
   * (IntentGuard: checked in the insert's own transaction), so a pivot, decision or unwind by anyone
   * since makes the insert write nothing and the call is decided again on a fresh read. Everything
   * else (replaying a recorded step, holding a call, refusing one) is decided on a view read during
   * this call. A call on a fresh run thus costs its two writes and nothing more.
   */
  private async dispatch(toolName: string, rawArgs: unknown): Promise<CallOutcome> {
    const { registry } = this.deps;
    const def = registry.tool(toolName);
    const args = toJson(parseArgsAt(registry, def, rawArgs, "args"));
    if (def.class === ToolClass.PURE) {
      const effect = await def.call(args, { stepKey: "", runId: this.runId, stepIdx: -1 });
      return { status: "ok", stepIdx: null, stepKey: null, externalRef: effect.externalRef, result: toJson(effect.result), replayed: false };
    }
    if (this.view) this.view.fresh = false;
    for (let attempt = 1; ; attempt++) {
      let view = this.view ?? (await this.readView());
      const replaying = view.steps.some((s) => s.stepIdx >= this.cursor);
      if (!view.fresh && (replaying || CLOSED_RUN_STATUSES.includes(view.run.status))) view = await this.readView();
      if (CLOSED_RUN_STATUSES.includes(view.run.status)) throw closedRun(view.run);
      const outcome = await this.dispatchOn(view, def, args);
      if (outcome !== STALE_VIEW) return outcome;
      if (attempt >= 5) throw new SagaError("CONFLICT", `Run ${this.runId} kept changing while ${def.name} was being recorded; call it again.`);
      await this.readView();
    }
  }

  private async dispatchOn(view: RunView, def: ToolDefinition, args: Json): Promise<CallOutcome | typeof STALE_VIEW> {
    const steps = view.steps;
    for (;;) {
      const row = steps.find((s) => s.stepIdx === this.cursor);
      if (!row) return this.newStep(def, args, view);
      if (row.tool !== def.name) {
        if (UNSETTLED_STATUSES.includes(row.status)) {
          throw new SagaError(
            "STEP_UNRESOLVED",
            `Step ${row.stepIdx} (${row.tool}) has an unknown outcome; call ${row.tool} again so it is reconciled before calling ${def.name}.`,
          );
        }
        if (row.status === StepStatus.NOT_EXECUTED) {
          this.cursor++; // a step that never happened may be abandoned for another tool
          continue;
        }
        throw new SagaError(
          "DETERMINISM",
          `Step ${row.stepIdx} was recorded as ${row.tool} but ${def.name} was called. ` +
            "Resume must replay the same tool calls in the same order; check that the agent is deterministic up to its last recorded step, or start a new run.",
        );
      }
      return this.existingStep(def, args, row);
    }
  }

  private async existingStep(def: ToolDefinition, args: Json, row: StepRecord): Promise<CallOutcome> {
    let step = row;
    if (UNSETTLED_STATUSES.includes(step.status)) {
      step = await reconcileStep(this.deps, step, this.actor);
      this.remember(step);
      if (UNSETTLED_STATUSES.includes(step.status)) throw new ToolOutcomeUnknown(def.name, step.stepIdx, step.stepKey);
    }
    switch (step.status) {
      case StepStatus.NOT_EXECUTED:
        return this.retryStep(def, args, step);
      case StepStatus.FAILED: {
        this.cursor++;
        const error = (step.error ?? {}) as { reason?: string; message?: string };
        throw new ToolCallFailed(def.name, step.stepIdx, error.reason ?? "rejected", error.message ?? "refused");
      }
      default:
        this.cursor++;
        return { status: "ok", stepIdx: step.stepIdx, stepKey: step.stepKey, externalRef: step.externalRef, result: step.result, replayed: true };
    }
  }

  private prepare(def: ToolDefinition, args: Json, key: string, compKey: string) {
    let compensation: CompensationPlan | null = null;
    if (def.compensation) {
      try {
        const built = def.compensation.build(args, key);
        if (built !== null && built !== undefined && this.deps.registry.compensator(def.compensation.with).args.safeParse(built).success) {
          compensation = { tool: def.compensation.with, args: toJson(built) };
        }
      } catch {
        compensation = null; // unbuildable: the gate holds the call for approval
      }
    }
    const correction: CorrectionDraft | null = def.correction ? def.correction(args) : null;
    const audience = def.audience ? def.audience(args) : def.class === ToolClass.REVERSIBLE ? ["agent"] : [];
    return {
      compensation,
      // Derived from the step, so it is stored even when this attempt's args cannot build a compensation.
      compensationKey: def.compensation ? compKey : null,
      correction: correction ? (toJson(correction) as unknown as CorrectionDraft) : null,
      audience,
      compensationBuildable: def.class === ToolClass.IRREVERSIBLE || compensation !== null,
    };
  }

  /** The tool's policy version: the store's tool table when it has one, else the registry's. */
  private async policyVersion(def: ToolDefinition): Promise<number> {
    const known = this.view?.policyVersions.get(def.name);
    if (known !== undefined) return known;
    const fromTable = this.deps.store.toolPolicyVersion ? await this.deps.store.toolPolicyVersion(def.name) : null;
    const version = fromTable ?? currentPolicyVersion(def);
    this.view?.policyVersions.set(def.name, version); // for as long as this view lives
    return version;
  }

  private async gate(def: ToolDefinition, args: Json, hash: string, buildable: boolean, steps: readonly StepRecord[], pivots?: readonly PivotRecord[]) {
    const tool = { name: def.name, class: def.class, owner: def.owner, policyVersion: await this.policyVersion(def) };
    return checkGate(this.deps, {
      runId: this.runId,
      def: tool,
      args,
      argsHash: hash,
      compensationBuildable: buildable,
      pivots: pivots ?? (await this.deps.store.listPivots(this.runId)),
      steps,
      actor: this.actor,
    });
  }

  private async newStep(def: ToolDefinition, args: Json, view: RunView): Promise<CallOutcome | typeof STALE_VIEW> {
    const idx = this.cursor;
    const key = stepKey(this.runId, idx, def.name);
    const prepared = this.prepare(def, args, key, compensationKey(this.runId, idx, def.name));
    const hash = argsHash(args);
    // Plain staging is what checkGate answers for a releasable call while no pivot is pending or approved.
    const latest = view.pivots.at(-1);
    const plainStaging =
      view.run.status === RunStatus.RUNNING && (!latest || latest.status === PivotStatus.REJECTED) && def.class !== ToolClass.IRREVERSIBLE && prepared.compensationBuildable;
    if (!plainStaging && !view.fresh) return STALE_VIEW; // holds and refusals are decided on a fresh read
    const decision = plainStaging
      ? { allowed: true as const, phase: Phase.STAGING, approvalId: null, planItemIdx: null }
      : await this.gate(def, args, hash, prepared.compensationBuildable, view.steps, view.pivots);
    if (!decision.allowed) return { status: "approval_required", ...omitAllowed(decision) };

    const policyVersion = await this.policyVersion(def);
    const intentId = this.deps.ids.next("stp");
    const guard = { runStatus: [view.run.status], runUpdatedAt: view.run.updatedAt };
    const inserted = await this.serverChecked(() => this.deps.store.insertIntent(
      {
        id: intentId,
        runId: this.runId,
        stepIdx: idx,
        tool: def.name,
        toolClass: def.class,
        stepKey: key,
        args,
        argsHash: hash,
        phase: decision.phase,
        policyVersion,
        approvalId: decision.approvalId,
        planItemIdx: decision.planItemIdx,
        compensation: prepared.compensation,
        compensationKey: prepared.compensationKey,
        correction: prepared.correction,
        audience: prepared.audience,
      },
      { type: "step.intended", actor: this.actor, data: { stepIdx: idx, tool: def.name, stepKey: key, phase: decision.phase } },
      guard,
    ).catch((e: unknown): typeof STALE_VIEW => {
      if (e instanceof IntentGuardFailed) return STALE_VIEW;
      throw e;
    }));
    if (inserted === STALE_VIEW) return STALE_VIEW;
    const { created, step } = inserted;
    this.remember(step);
    // Our own row answered as existing: the first attempt committed and only its answer was lost.
    if (!created && step.id === intentId && step.status === StepStatus.INTENDED) {
      this.deps.crashPoints.hit(CrashPoint.AFTER_INTENT);
      return this.execute(def, args, step);
    }
    if (!created) {
      // Another process wrote this step first: treat its row as the log says.
      if (step.tool !== def.name) throw new SagaError("DETERMINISM", `Step ${idx} was recorded as ${step.tool} by another writer while ${def.name} was called.`);
      return this.existingStep(def, args, step);
    }
    this.deps.crashPoints.hit(CrashPoint.AFTER_INTENT);
    return this.execute(def, args, step);
  }

  /** Retries a NOT_EXECUTED step under the same key; the reworded args replace the old ones. */
  private async retryStep(def: ToolDefinition, args: Json, row: StepRecord): Promise<CallOutcome> {
    const hash = argsHash(args);
    const prepared = this.prepare(def, args, row.stepKey, compensationKey(this.runId, row.stepIdx, def.name));
    const steps = await this.deps.store.listSteps(this.runId);
    const others = steps.filter((s) => s.id !== row.id);
    const decision =
      row.approvalId && row.argsHash === hash
        ? { allowed: true as const, phase: row.phase, approvalId: row.approvalId, planItemIdx: row.planItemIdx }
        : await this.gate(def, args, hash, prepared.compensationBuildable, others);
    if (!decision.allowed) return { status: "approval_required", ...omitAllowed(decision) };
    const step = await this.serverChecked(() => this.deps.store.updateStep(
      row.id,
      { status: [StepStatus.NOT_EXECUTED] },
      {
        status: StepStatus.INTENDED,
        args,
        argsHash: hash,
        phase: decision.phase,
        approvalId: decision.approvalId,
        planItemIdx: decision.planItemIdx,
        compensation: prepared.compensation,
        correction: prepared.correction,
        audience: prepared.audience,
        error: null,
      },
      { type: "step.retry_intended", actor: this.actor, data: { stepIdx: row.stepIdx, stepKey: row.stepKey } },
    ));
    if (!step) throw new SagaError("CONFLICT", `Step ${row.stepIdx} changed while it was being retried; call ${def.name} again.`);
    this.remember(step);
    this.deps.crashPoints.hit(CrashPoint.AFTER_INTENT);
    return this.execute(def, args, step);
  }

  /**
   * Runs a store write that a server may refuse with its own gate; the refusal becomes an
   * `approval_required` outcome, thrown as `HeldByServer` and turned into a value by the caller.
   */
  private async serverChecked<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (e) {
      if (e instanceof ApprovalRequiredError) throw new HeldByServer(e);
      throw e;
    }
  }

  /** Calls the tool for a committed INTENDED row and records the outcome. */
  private async execute(def: ToolDefinition, args: Json, step: StepRecord): Promise<CallOutcome> {
    const { store, clock, crashPoints } = this.deps;
    for (let attempt = 1; ; attempt++) {
      let effect;
      try {
        effect = await def.call(args, { stepKey: step.stepKey, runId: this.runId, stepIdx: step.stepIdx });
      } catch (e) {
        if (e instanceof SimulatedCrash) throw e;
        if (e instanceof ToolRejected) {
          if (e.retryable && attempt < this.deps.maxAttempts) {
            await clock.sleep(backoffDelay(this.deps, attempt));
            continue;
          }
          return this.fail(def, step, e, step.attempts + attempt);
        }
        const message = e instanceof Error ? e.message : String(e);
        await store.updateStep(
          step.id,
          { status: [StepStatus.INTENDED] },
          { status: StepStatus.UNKNOWN, error: { reason: "outcome_unknown", message }, attempts: step.attempts + attempt },
          { type: "step.unknown", actor: this.actor, data: { stepIdx: step.stepIdx, message } },
        );
        throw new ToolOutcomeUnknown(def.name, step.stepIdx, step.stepKey, e);
      }
      crashPoints.hit(CrashPoint.AFTER_EFFECT);
      const result = toJson(effect.result);
      const confirmed = await store.updateStep(
        step.id,
        { status: [StepStatus.INTENDED] },
        { status: StepStatus.CONFIRMED, externalRef: effect.externalRef, result, error: null, attempts: step.attempts + attempt },
        { type: "step.confirmed", actor: this.actor, data: { stepIdx: step.stepIdx, externalRef: effect.externalRef } },
      );
      if (!confirmed) {
        // Someone (reconcile in another process) settled the row meanwhile: the log wins.
        const current = await store.getStep(step.id);
        if (current) return this.existingStep(def, args, current);
      } else {
        this.remember(confirmed);
      }
      this.cursor++;
      return { status: "ok", stepIdx: step.stepIdx, stepKey: step.stepKey, externalRef: effect.externalRef, result, replayed: false };
    }
  }

  private async fail(def: ToolDefinition, step: StepRecord, e: ToolRejected, attempts: number): Promise<never> {
    const { store } = this.deps;
    const error = { reason: e.reason, message: e.message, attempts, retryable: e.retryable };
    await store.updateStep(step.id, { status: [StepStatus.INTENDED] }, { status: StepStatus.FAILED, error, attempts }, {
      type: "step.failed",
      actor: this.actor,
      data: { stepIdx: step.stepIdx, ...error },
    });
    if (step.phase !== Phase.STAGING) {
      await store.createEscalation(
        {
          id: this.deps.ids.next("esc"),
          runId: this.runId,
          stepId: step.id,
          kind: EscalationKind.STUCK_AFTER_PIVOT,
          title: `${def.name} (step ${step.stepIdx}) failed after the pivot: ${e.message}`,
          detail: { tool: def.name, args: step.args, stepKey: step.stepKey, error },
          owner: def.owner ?? null,
          dedupeKey: `stuck:${step.id}`,
        },
        { type: "escalation.raised", actor: this.actor, data: { kind: EscalationKind.STUCK_AFTER_PIVOT, stepIdx: step.stepIdx } },
      );
    }
    this.cursor++;
    throw new ToolCallFailed(def.name, step.stepIdx, e.reason, e.message);
  }
}

function parseArgsAt(registry: ToolRegistry, def: ToolDefinition, args: unknown, prefix: string): unknown {
  try {
    return registry.parseArgs(def, args);
  } catch (e) {
    if (e instanceof SagaError && prefix !== "args") {
      throw new SagaError(e.code, e.message, e.issues.map((i) => ({ ...i, path: i.path.replace(/^args/, prefix) })));
    }
    throw e;
  }
}

/** What a RunContext last read of its run. */
interface RunView {
  run: RunRecord;
  /** The log, by stepIdx, with this context's own writes applied. */
  steps: StepRecord[];
  /** Oldest first. */
  pivots: PivotRecord[];
  /** Read during the current call, so a hold or refusal may rest on it. */
  fresh: boolean;
  /** Tool policy versions read while this view lives. */
  policyVersions: Map<string, number>;
}

/** The view no longer matches the run: read it again and decide afresh. */
const STALE_VIEW: unique symbol = Symbol("stale view");

/** A server's gate refused a write of this dispatch (internal: becomes an approval_required outcome). */
class HeldByServer extends Error {
  constructor(readonly refusal: ApprovalRequiredError) {
    super(refusal.message);
  }
}

function closedRun(run: RunRecord): SagaError {
  return new SagaError("RUN_CLOSED", `Run ${run.id} is ${run.status} and takes no more tool calls; start a new run.`);
}

function omitAllowed<T extends { allowed: false }>(decision: T): Omit<T, "allowed"> {
  const { allowed: _allowed, ...rest } = decision;
  return rest;
}
