/**
 * One run as an agent drives it (`engine.startRun` / `engine.resume`): calls, the pivot, finishing
 * and unwinding. The decisions are calls.ts's, here on the store or on the server (`store.calls`).
 */
import { CrashPoint, SimulatedCrash } from "./crash-points";
import type { AgentPort } from "./agent-port";
import { backoffDelay, type AgentDeps, type EngineDeps } from "./deps";
import { beginCall, beginPlanItem, completeRun, recordOutcome, recordReconcile, type CallProposal } from "./calls";
import type { CallOutcomeReport, PlanItemAddress, UnwindReport } from "./messages";
import { SagaError, ToolCallFailed, ToolOutcomeUnknown, ToolRejected } from "./errors";
import type { ApprovalReason } from "./vocabulary";
import { lookUpStep, toJson } from "./reconcile";
import { requestPivot } from "./request-pivot";
import type { Actor, PivotRecord, RunRecord, StepRecord } from "./store";
import type { CompensationPlan, CorrectionDraft, Json, ToolDefinition, ToolRegistry } from "./tools";
import { unwindHere } from "./unwind-here";
import { assertToolEnabled, registeredTool, type TableTool } from "./tool-table";
import { PivotStatus, ToolClass, UNSETTLED_STATUSES } from "./vocabulary";

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

/** What committing an approved plan did (`RunContext.commitPlan`). */
export type CommitPlanResult =
  | {
      /** Every item ran once (or was replayed from the log) and the run is COMPLETED. */
      status: "committed";
      /** The pivot. */
      pivotId: string;
      /** Each item's outcome, in plan order. */
      items: Array<{ index: number; tool: string; outcome: Extract<CallOutcome, { status: "ok" }> }>;
      /** The finished run. */
      run: RunRecord;
    }
  | {
      /** The plan was committed already (by another process) and the run is COMPLETED: nothing ran. */
      status: "already_committed";
      /** The pivot. */
      pivotId: string;
      /** What the server said. */
      message: string;
    }
  | {
      /** An item was held for a person (its tool's policy changed since the approval): nothing after it ran. */
      status: "held";
      /** The pivot. */
      pivotId: string;
      /** The held item. */
      index: number;
      /** Why, and the escalation that holds it. */
      outcome: Extract<CallOutcome, { status: "approval_required" }>;
    };

/**
 * One run as an agent drives it. The context owns the step cursor: it starts at 0 on every resume,
 * so replay walks the recorded log, and it never advances past a step whose outcome is unknown.
 * Every decision (the gate, replay, retry under the same key, closed runs) is made by the call
 * commands of calls.ts: here on the store, or on the server when the store is remote (`store.calls`).
 */
export class RunContext {
  private cursor = 0;
  /** The log has rows at the cursor (a resume, until a call goes past them): decide on a read, not an unread insert. */
  private replaying: boolean;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly actor: Actor;
  private readonly port: AgentPort;
  /** Tools as read since the last pivot or error (the store's tool table, when it has one). */
  private readonly tools = new Map<string, TableTool>();

  constructor(
    private readonly deps: AgentDeps,
    /** The run as it was when the context was made. */
    readonly run: RunRecord,
    /** True for a run just started: nothing is recorded yet. */
    fresh = false,
  ) {
    this.actor = { type: "agent", id: run.agent };
    this.port = deps.server === null ? localAgentPort({ ...deps, store: deps.store }, (name) => this.tool(name)) : deps.server;
    this.replaying = !fresh;
  }

  /** The run's id. */
  get runId(): string {
    return this.run.id;
  }

  /** Calls a tool through the saga log. Calls are serialised so step indexes follow call order. */
  call(tool: string, args: unknown): Promise<CallOutcome> {
    return this.enqueue(() => this.dispatch(tool, args));
  }

  /** Runs `work` after every call queued before it. */
  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(() =>
      work().catch((e: unknown) => {
        this.tools.clear(); // whatever went wrong, the next call reads the table afresh
        throw e;
      }),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Commits an approved plan: runs its items in plan order, then completes the run. Each item's step
   * is found by the pivot and its place in the plan (`beginPlanItem`), not by this context's cursor,
   * so this works in the process that waited, in a fresh process that never replayed the earlier
   * steps, and in a worker; whoever commits second is answered from the log (replayed, reconciled by
   * key, or retried under the same key after a confirmed absence) and runs only what is not done.
   * A step left unsettled anywhere in the run is reconciled first, with its own tool's lookup.
   * Throws `ToolCallFailed` / `ToolOutcomeUnknown` as `call` does (a failed item raises
   * STUCK_AFTER_PIVOT for a person; an unknown one is reconciled by committing again), and
   * PIVOT_NOT_APPROVED, PLAN_ITEM_MISMATCH, PLAN_ORDER, RUN_CLOSED as SagaErrors.
   */
  async commitPlan(pivotId: string): Promise<CommitPlanResult> {
    const pivot = await this.port.getPivot(pivotId);
    if (!pivot || pivot.runId !== this.runId) throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${pivotId} is not a pivot of run ${this.runId}; commit the run's own approved pivot.`);
    const items: Array<{ index: number; tool: string; outcome: Extract<CallOutcome, { status: "ok" }> }> = [];
    try {
      for (const [index, item] of pivot.plan.entries()) {
        const outcome = await this.enqueue(() => this.dispatch(item.tool, item.args, { pivotId, index }));
        if (outcome.status === "approval_required") return { status: "held", pivotId, index, outcome };
        items.push({ index, tool: item.tool, outcome });
      }
      return { status: "committed", pivotId, items, run: await this.complete() };
    } catch (e) {
      if (e instanceof SagaError && e.code === "PLAN_ALREADY_COMMITTED") return { status: "already_committed", pivotId, message: e.message };
      throw e;
    }
  }

  /** Proposes the pivot: everything staged so far plus the commit plan. Re-proposing the same plan returns the same pivot. */
  async requestPivot(request: PivotRequest): Promise<PivotRecord> {
    try {
      return await this.proposePivot(request);
    } finally {
      this.tools.clear(); // a pivot changes what calls are decided on: read the table afresh
    }
  }

  /** Parses the plan's arguments with this process's tool schemas; the deciding side does the rest (`requestPivot`). */
  private async proposePivot(request: PivotRequest): Promise<PivotRecord> {
    const { registry } = this.deps;
    const plan = (Array.isArray(request.plan) ? request.plan : []).map((item, i) => {
      const def = registry.tool(item.tool);
      return { tool: def.name, args: toJson(parseArgsAt(registry, def, item.args, `plan.${i}.args`)) };
    });
    return this.port.pivots.request({ runId: this.runId, summary: request.summary, plan, deadline: request.deadline ?? null, actor: this.actor });
  }

  /** Waits until the pivot is decided or `timeoutMs` passes (long-polling when the store can, else polling on the clock). */
  async awaitPivot(pivotId: string, options: { timeoutMs: number; pollMs?: number }): Promise<PivotRecord> {
    this.tools.clear();
    const { clock } = this.deps;
    const port = this.port;
    const deadline = clock.now().getTime() + options.timeoutMs;
    for (;;) {
      const remaining = Math.max(0, deadline - clock.now().getTime());
      const pivot = port.waitForPivot ? await port.waitForPivot(pivotId, Math.min(remaining, 25_000)) : await port.getPivot(pivotId);
      if (!pivot) throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${pivotId} does not exist.`);
      if (pivot.status !== PivotStatus.PENDING || clock.now().getTime() >= deadline) return pivot;
      if (!port.waitForPivot) await clock.sleep(options.pollMs ?? 200);
    }
  }

  /** Unwinds this run. */
  unwind(reason: string): Promise<UnwindReport> {
    return unwindHere(this.deps, this.runId, this.actor, reason);
  }

  /** Marks the run finished; refused while a step is unsettled. */
  complete(): Promise<RunRecord> {
    return this.port.calls.complete({ runId: this.runId, actor: this.actor });
  }

  /** The tool as the store's tool table has it (read once until the next pivot or error), else as registered. */
  private async tool(name: string): Promise<TableTool> {
    const known = this.tools.get(name);
    if (known !== undefined) return known;
    const fromTable = this.deps.store?.toolTable ? await this.deps.store.toolTable(name) : null;
    const tool = fromTable ?? registeredTool(this.deps.registry.tool(name));
    this.tools.set(name, tool);
    return tool;
  }

  /** The compensation, correction and audience this process proposes for a call. */
  private propose(def: ToolDefinition, args: Json): CallProposal {
    let compensation: CompensationPlan | null = null;
    if (def.compensation) {
      try {
        const built = def.compensation.build(args);
        if (built !== null && built !== undefined && this.deps.registry.compensator(def.compensation.with).args.safeParse(built).success) {
          compensation = { tool: def.compensation.with, args: toJson(built) };
        }
      } catch {
        compensation = null; // unbuildable: the gate holds the call for approval
      }
    }
    const correction: CorrectionDraft | null = def.correction ? def.correction(args) : null;
    const audience = def.audience ? def.audience(args) : def.class === ToolClass.REVERSIBLE ? ["agent"] : [];
    return { compensation, correction: correction ? (toJson(correction) as unknown as CorrectionDraft) : null, audience };
  }

  /**
   * One call: begin it; then call the tool, replay, reconcile first, or report the hold. With
   * `planItem` the call commits that item of an approved plan and the cursor is not consulted.
   */
  private async dispatch(toolName: string, rawArgs: unknown, planItem?: PlanItemAddress): Promise<CallOutcome> {
    const { registry } = this.deps;
    const def = registry.tool(toolName);
    const args = toJson(parseArgsAt(registry, def, rawArgs, "args"));
    // The class, holds and owner are the table's, as on the server: an admin's edit governs this call too.
    const tool = await this.tool(def.name);
    assertToolEnabled(tool);
    if (tool.class === ToolClass.PURE) {
      const effect = await def.call(args, { stepKey: "", runId: this.runId, stepIdx: -1 });
      return { status: "ok", stepIdx: null, stepKey: null, externalRef: effect.externalRef, result: toJson(effect.result), replayed: false };
    }
    const proposal = this.propose(def, args);
    for (let attempt = 1; ; attempt++) {
      if (attempt > 5) throw new SagaError("CONFLICT", `Step ${this.cursor} of run ${this.runId} kept changing while ${def.name} was being called; call it again.`);
      const answer = planItem
        ? await this.port.calls.begin({ runId: this.runId, cursor: this.cursor, tool: def.name, args, proposal, tryAppend: false, actor: this.actor, planItem })
        : await this.port.calls.begin({ runId: this.runId, cursor: this.cursor, tool: def.name, args, proposal, tryAppend: !this.replaying, actor: this.actor });
      if (!planItem) {
        if (answer.kind !== "held") this.replaying = answer.kind !== "call";
        this.cursor = answer.cursor;
      }
      switch (answer.kind) {
        case "held":
          return { status: "approval_required", reason: answer.reason, message: answer.message, escalationId: answer.escalationId, pivotId: answer.pivotId };
        case "replay":
          return { status: "ok", stepIdx: answer.step.stepIdx, stepKey: answer.step.stepKey, externalRef: answer.step.externalRef, result: answer.step.result, replayed: true };
        case "failed": {
          const error = (answer.step.error ?? {}) as { reason?: string; message?: string };
          throw new ToolCallFailed(def.name, answer.step.stepIdx, error.reason ?? "rejected", error.message ?? "refused");
        }
        case "reconcile": {
          // A commit is answered with whichever step is unsettled first: look it up with its own tool.
          const stepDef = answer.step.tool === def.name ? def : registry.tool(answer.step.tool);
          const settled = await this.reconcile(stepDef, answer.step);
          if (UNSETTLED_STATUSES.includes(settled.status)) throw new ToolOutcomeUnknown(stepDef.name, settled.stepIdx, settled.stepKey);
          continue; // the log now says CONFIRMED (replay) or NOT_EXECUTED (retry under the same key)
        }
        case "call": {
          this.deps.crashPoints.hit(CrashPoint.AFTER_INTENT);
          const outcome = await this.execute(def, args, answer.step);
          if (outcome === LOG_MOVED) continue;
          return outcome;
        }
      }
    }
  }

  private async reconcile(def: ToolDefinition, step: StepRecord): Promise<StepRecord> {
    const report = await lookUpStep(this.deps, def, step);
    if (report.kind === "found") this.deps.crashPoints.hit(CrashPoint.DURING_RECONCILE);
    return this.port.calls.reconciled({ step, report, actor: this.actor });
  }

  /** Calls the tool for a committed INTENDED row and records the outcome. LOG_MOVED: someone settled it first. */
  private async execute(def: ToolDefinition, args: Json, step: StepRecord): Promise<CallOutcome | typeof LOG_MOVED> {
    const { clock, crashPoints } = this.deps;
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
          if ((await this.report(step, { kind: "failed", reason: e.reason, message: e.message, retryable: e.retryable }, attempt)) === LOG_MOVED) return LOG_MOVED;
          this.cursor = step.stepIdx + 1;
          throw new ToolCallFailed(def.name, step.stepIdx, e.reason, e.message);
        }
        const message = e instanceof Error ? e.message : String(e);
        await this.report(step, { kind: "unknown", message }, attempt);
        throw new ToolOutcomeUnknown(def.name, step.stepIdx, step.stepKey, e);
      }
      crashPoints.hit(CrashPoint.AFTER_EFFECT);
      const result = toJson(effect.result);
      if ((await this.report(step, { kind: "confirmed", externalRef: effect.externalRef, result }, attempt)) === LOG_MOVED) return LOG_MOVED;
      this.cursor = step.stepIdx + 1;
      return { status: "ok", stepIdx: step.stepIdx, stepKey: step.stepKey, externalRef: effect.externalRef, result, replayed: false };
    }
  }

  private async report(step: StepRecord, outcome: CallOutcomeReport, attempts: number): Promise<StepRecord | typeof LOG_MOVED> {
    try {
      return await this.port.calls.outcome({ step, outcome, attempts, actor: this.actor });
    } catch (e) {
      if (e instanceof SagaError && e.code === "STEP_NOT_IN_FLIGHT") return LOG_MOVED;
      throw e;
    }
  }
}

/** The commands on this process's store: the engine decides in process, with the functions the server runs. */
function localAgentPort(deps: EngineDeps, toolOf: (tool: string) => Promise<TableTool>): AgentPort {
  const calls: AgentPort["calls"] = {
    async begin(input) {
      const tool = await toolOf(input.tool);
      const call = { runId: input.runId, tool, args: input.args, proposal: input.proposal, actor: input.actor };
      if (input.planItem) return beginPlanItem(deps, { ...call, planItem: input.planItem });
      return beginCall(deps, { ...call, cursor: input.cursor, tryAppend: input.tryAppend });
    },
    async outcome(input) {
      const owner = (await toolOf(input.step.tool)).owner ?? null;
      return recordOutcome(deps, {
        stepId: input.step.id,
        stepIdx: input.step.stepIdx,
        outcome: input.outcome,
        attempts: input.step.attempts + input.attempts,
        actor: input.actor,
        owner: () => owner,
      });
    },
    reconciled: async (input) => recordReconcile(deps, { ...input, owner: (await toolOf(input.step.tool)).owner ?? null }),
    complete: (input) => completeRun(deps, input.runId, input.actor),
  };
  return {
    calls,
    pivots: {
      request: (input) => requestPivot(deps, { ...input, toolFacts: toolOf }),
    },
    getPivot: (pivotId) => deps.store.getPivot(pivotId),
  };
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

/** The log moved under a call (someone settled its row first): begin it again and do what the log says. */
const LOG_MOVED: unique symbol = Symbol("log moved");
