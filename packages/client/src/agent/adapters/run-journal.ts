/**
 * What the framework adapters share: a saga run driven from a framework that checkpoints its own
 * state (an OpenAI `RunState`, a LangGraph checkpoint) instead of re-running the agent from the start.
 *
 * A `RunContext` replays by position: its cursor starts at 0 and every call takes the next step of
 * the log. A framework resumed from a checkpoint does not repeat the calls it already consumed (the
 * OpenAI SDK keeps their outputs in the state; LangGraph skips finished nodes), so a fresh
 * `RunContext` would meet the log's step 0 where the framework asks for step 3. The adapters
 * therefore keep a **journal** inside the framework's own checkpoint: the calls whose outcome the
 * framework consumed and that moved the cursor (a confirmed or failed step). Before anything new, a
 * `RunContext` is brought to the journal by replaying those calls, which the log answers from its
 * records without calling any tool. The journal can lag the log (a crash after the effect, before
 * the checkpoint); then the framework asks again and the log replays or reconciles: one effect.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { z } from "zod";
import type { SagaEngine } from "../../saga/engine";
import type { CallOutcome, CommitPlanResult, PivotRequest, RunContext } from "../../saga/run-context";
import { SagaError, ToolCallFailed, ToolOutcomeUnknown } from "../../saga/errors";
import type { PivotRecord } from "../../saga/store";
import type { CompensationSpec, CorrectionDraft, Json, ToolCallContext, ToolDefinition } from "../../saga/tools";
import { defineTool } from "../../saga/tools";
import type { ToolClass } from "../../saga/vocabulary";

/** One consumed call: replayed, never re-run, when a fresh RunContext catches up. */
export const ZJournalEntry = z.object({
  /** Tool name. */
  tool: z.string(),
  /** The arguments as the framework sent them (a replay only needs them to pass the schema). */
  args: z.json(),
  /** The step the log gave the call; a replay must land on the same one. */
  stepIdx: z.number().int().nonnegative(),
  /** The framework's id for the call, when it has one (the OpenAI SDK's callId). */
  callId: z.string().nullable(),
});
/** One consumed call. */
export type JournalEntry = z.infer<typeof ZJournalEntry>;

/** A call Sagaboard holds for a person, as the framework surfaces it. */
export const ZHeldCall = z.object({
  /** Tool name. */
  tool: z.string(),
  /** The gate's reason (IRREVERSIBLE, PIVOT_PENDING, REJECTED, ...). */
  reason: z.string(),
  /** What to do, in words. */
  message: z.string(),
  /** The escalation a reviewer answers in Sagaboard, if one holds the call. */
  escalationId: z.string().nullable(),
  /** The pivot concerned, if any. */
  pivotId: z.string().nullable(),
});
/** A held call. */
export type HeldCall = z.infer<typeof ZHeldCall>;

/** What an adapter keeps in the framework's checkpoint. */
export const ZRunJournal = z.object({
  /** The saga run the journal belongs to. */
  runId: z.string().min(1),
  /** Consumed calls, in call order. */
  calls: z.array(ZJournalEntry),
  /** Calls held for a person, by the framework's call id (for the OpenAI SDK's interruptions). */
  held: z.record(z.string(), ZHeldCall),
});
/** What an adapter keeps in the framework's checkpoint. */
export type RunJournal = z.infer<typeof ZRunJournal>;

/** A new, empty journal for `runId`. */
export function emptyJournal(runId: string): RunJournal {
  return { runId, calls: [], held: {} };
}

/** Reads a journal from a checkpoint, or says exactly what is wrong with it. */
export function parseJournal(value: unknown, runId: string): RunJournal {
  if (value === undefined || value === null) return emptyJournal(runId);
  const parsed = ZRunJournal.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${["sagaboard", ...i.path.map(String)].join(".")}: ${i.message}`).join("; ");
    throw new SagaError("INVALID_ARGS", `The Sagaboard journal in the framework's state is malformed (${issues}); restore a state this adapter saved.`);
  }
  if (parsed.data.runId !== runId) {
    throw new SagaError(
      "INVALID_ARGS",
      `The framework's state belongs to saga run ${parsed.data.runId}, not ${runId}; resume it with an adapter bound to ${parsed.data.runId}.`,
    );
  }
  return parsed.data;
}

/** The answer to one call, as the adapters hand it on. */
export type JournaledOutcome =
  | { kind: "ok"; outcome: Extract<CallOutcome, { status: "ok" }> }
  | { kind: "held"; held: HeldCall }
  | { kind: "failed"; error: ToolCallFailed }
  | { kind: "unknown"; error: ToolOutcomeUnknown }
  /** A refusal the model can act on (bad arguments, another step to settle first). */
  | { kind: "refused"; error: SagaError };

/** Saga errors a model can answer by calling differently; every other error stops the run. */
const MODEL_ACTIONABLE: readonly string[] = ["INVALID_ARGS", "STEP_UNRESOLVED", "UNKNOWN_TOOL"];

/**
 * A saga run as one framework thread drives it: a RunContext kept in step with the journal of the
 * checkpoint it is asked from. One thread drives a run at a time (the engine's own limit).
 */
export class JournaledRun {
  private context: RunContext | null = null;
  /** The journal entries `context` has consumed, in order. */
  private consumed: JournalEntry[] = [];
  /** Outcomes of the calls in the journal that carry a framework call id, replayed or live. */
  private readonly recorded = new Map<string, JournaledOutcome>();
  /** The calls in flight, chained so they run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The answer of a call asked before the framework runs it (OpenAI's needsApproval), for its invoke. */
  private readonly handoff = new Map<string, JournaledOutcome>();

  constructor(
    private readonly engine: SagaEngine,
    /** The saga run. */
    readonly runId: string,
  ) {}

  /**
   * Proposes the pivot (what is staged plus the commit plan) for a reviewer. While it is pending,
   * every logged call is held (an interruption); once approved, the plan's calls run in the commit
   * phase, each once. Re-proposing the same plan returns the same pivot.
   */
  requestPivot(request: PivotRequest): Promise<PivotRecord> {
    const next = this.queue.then(async () => (await this.engine.resume(this.runId)).requestPivot(request));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Commits an approved plan: its items in plan order, each once whoever else tries (the agent, a
   * fresh process, a worker), then completes the run. The items are found by the pivot and their place
   * in the plan, so no journal or replay of earlier calls is needed: a framework whose checkpoint was
   * lost commits from the run id alone.
   */
  commitPlan(pivotId: string): Promise<CommitPlanResult> {
    const next = this.queue.then(async () => (await this.engine.resume(this.runId)).commitPlan(pivotId));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Waits until the pivot is decided or `timeoutMs` passes. */
  async awaitPivot(pivotId: string, options: { timeoutMs: number; pollMs?: number }): Promise<PivotRecord> {
    return (await this.engine.resume(this.runId)).awaitPivot(pivotId, options);
  }

  /** The outcome a call with this framework id got moments ago in this process, once. */
  take(callId: string): JournaledOutcome | undefined {
    const outcome = this.handoff.get(callId);
    this.handoff.delete(callId);
    return outcome;
  }

  /**
   * Calls `tool` through the saga log from the checkpoint whose journal is `journal`, and records
   * in it a call that moved the cursor. Fatal errors (a crash, a determinism error, a closed run)
   * are thrown; expected outcomes come back as values.
   */
  call(journal: RunJournal, tool: string, args: unknown, callId: string | null): Promise<JournaledOutcome> {
    // One at a time, in the order asked: a framework runs one turn's calls concurrently, and two
    // catch-ups racing would each build their own RunContext and disagree on the step order.
    const next = this.queue.then(() =>
      this.callNow(journal, tool, args, callId).catch((e: unknown) => {
        this.context = null; // whatever stopped the call, the next one starts from the log and the journal
        throw e;
      }),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async callNow(journal: RunJournal, tool: string, args: unknown, callId: string | null): Promise<JournaledOutcome> {
    const context = await this.catchUp(journal);
    if (callId !== null && journal.calls.some((e) => e.callId === callId)) {
      // The checkpoint already holds this call (a state saved after it): its recorded outcome.
      const recorded = this.recorded.get(callId);
      if (!recorded) throw new Error(`Sagaboard adapter: call ${callId} is journaled but its outcome was not replayed.`);
      return recorded;
    }
    const outcome = await classify(tool, () => context.call(tool, args));
    const stepIdx = outcome.kind === "ok" ? outcome.outcome.stepIdx : outcome.kind === "failed" ? outcome.error.stepIdx : null;
    if (stepIdx !== null) {
      const entry: JournalEntry = { tool, args: toJson(args), stepIdx, callId };
      journal.calls.push(entry);
      this.consumed.push(entry);
      if (callId !== null) this.recorded.set(callId, outcome);
    }
    if (callId !== null) {
      this.handoff.set(callId, outcome);
      if (outcome.kind === "held") journal.held[callId] = outcome.held;
      else delete journal.held[callId];
    }
    return outcome;
  }

  /** A RunContext whose cursor stands right after the journal's calls. */
  private async catchUp(journal: RunJournal): Promise<RunContext> {
    const aligned = this.context !== null && this.consumed.length <= journal.calls.length && this.consumed.every((e, i) => sameEntry(e, journal.calls[i]));
    if (!aligned || !this.context) {
      // The checkpoint is older than what this context consumed (a node re-run, a restored state):
      // a fresh context walks the log from step 0 again.
      this.context = await this.engine.resume(this.runId);
      this.consumed = [];
    }
    for (const entry of journal.calls.slice(this.consumed.length)) {
      const outcome = await classify(entry.tool, () => this.context!.call(entry.tool, entry.args));
      const landed = outcome.kind === "ok" ? outcome.outcome : outcome.kind === "failed" ? outcome.error : null;
      const replayed = outcome.kind === "failed" || (outcome.kind === "ok" && outcome.outcome.replayed);
      if (!landed || !replayed || landed.stepIdx !== entry.stepIdx) {
        this.context = null;
        throw new SagaError(
          "DETERMINISM",
          `The framework's state says step ${entry.stepIdx} was ${entry.tool}, but the saga log of run ${this.runId} answered ${describe(outcome)}; ` +
            "restore a state saved by this run (the log is the record; the state only says how far the framework got).",
        );
      }
      this.consumed.push(entry);
      if (entry.callId !== null) this.recorded.set(entry.callId, outcome);
    }
    return this.context;
  }
}

function sameEntry(a: JournalEntry, b: JournalEntry | undefined): boolean {
  return b !== undefined && a.stepIdx === b.stepIdx && a.tool === b.tool && a.callId === b.callId;
}

function describe(outcome: JournaledOutcome): string {
  switch (outcome.kind) {
    case "ok":
      return `${outcome.outcome.replayed ? "a replay" : "a new call"} at step ${outcome.outcome.stepIdx ?? "(pure)"}`;
    case "held":
      return `a hold (${outcome.held.reason})`;
    default:
      return outcome.error.message;
  }
}

async function classify(tool: string, call: () => Promise<CallOutcome>): Promise<JournaledOutcome> {
  try {
    const outcome = await call();
    if (outcome.status === "ok") return { kind: "ok", outcome };
    const { reason, message, escalationId, pivotId } = outcome;
    return { kind: "held", held: { tool, reason, message, escalationId, pivotId } };
  } catch (e) {
    if (e instanceof ToolCallFailed) return { kind: "failed", error: e };
    if (e instanceof ToolOutcomeUnknown) return { kind: "unknown", error: e };
    if (e instanceof SagaError && MODEL_ACTIONABLE.includes(e.code)) return { kind: "refused", error: e };
    throw e;
  }
}

/** JSON as the log stores it (drops undefined, turns dates into strings). */
function toJson(value: unknown): Json {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json);
}

/** What the model reads for an outcome that is not a result: what happened, and what to do. */
export function outcomeText(outcome: Exclude<JournaledOutcome, { kind: "ok" }>): string {
  switch (outcome.kind) {
    case "held":
      return `Not done: ${outcome.held.message}${outcome.held.escalationId ? ` (Sagaboard escalation ${outcome.held.escalationId})` : ""}`;
    case "failed":
      return `Failed, nothing happened: ${outcome.error.message}`;
    case "unknown":
    case "refused":
      return outcome.error.message;
  }
}

// =============================================================================================
// Tool specs: what Sagaboard needs to know of a framework tool besides its schema and function.

/** The saga side of a tool: its class and how its effect is found and answered. */
export interface SagaToolPolicy<A> {
  /** What the tool does to the world; registration fails without it. */
  class: ToolClass;
  /** Finds the effect of `stepKey` in the external system, or null. Required unless PURE. */
  lookup?(stepKey: string, args: A): Promise<{ externalRef: string | null; result: Json } | null>;
  /** Required for REVERSIBLE and COMPENSATABLE tools: the compensator and its arguments. */
  compensation?: CompensationSpec<A>;
  /** Required for IRREVERSIBLE tools: the correction message drafted at dispatch. */
  correction?(args: A): CorrectionDraft | null;
  /** Who can see the effect. */
  audience?(args: A): string[];
  /** Who handles this tool's escalations. */
  owner?: string;
  /** The external system's id for the effect, read from the tool's result (default: none). */
  externalRef?(result: Json): string | null;
}

/** Where a framework's own call context travels to the tool function the engine runs. */
const frameworkCall = new AsyncLocalStorage<{ frameworkArgs: unknown[]; saga?: ToolCallContext }>();

/**
 * The saga step the running tool function belongs to: send `stepKey` to the provider (idempotency
 * header, metadata, label) so a timeout or crash can be reconciled by looking it up.
 */
export function currentSagaStep(): ToolCallContext {
  const step = frameworkCall.getStore()?.saga;
  if (!step) {
    throw new SagaError("INVALID_ARGS", "currentSagaStep() was called outside a Sagaboard tool call; call it inside the tool's execute function.");
  }
  return step;
}

/** Runs `fn` with the framework's call arguments (its run context, call details) available to the tool function. */
export function withFrameworkCall<T>(frameworkArgs: unknown[], fn: () => Promise<T>): Promise<T> {
  return frameworkCall.run({ frameworkArgs }, fn);
}

/**
 * The engine's definition of a framework tool: the engine calls `execute` itself (after the intent
 * is committed), with the framework's own call arguments when the call came through the framework.
 */
export function sagaDefinition<S extends z.ZodType>(input: {
  name: string;
  description?: string;
  args: S;
  execute: (args: z.output<S>, ...frameworkArgs: never[]) => unknown;
  policy: SagaToolPolicy<z.output<S>>;
}): ToolDefinition<S> {
  const { policy } = input;
  return defineTool({
    name: input.name,
    class: policy.class,
    description: input.description,
    args: input.args,
    call: async (args, ctx) => {
      const outer = frameworkCall.getStore();
      const frameworkArgs = (outer?.frameworkArgs ?? []) as never[];
      const raw = await frameworkCall.run({ frameworkArgs: outer?.frameworkArgs ?? [], saga: ctx }, async () => input.execute(args, ...frameworkArgs));
      const result = toJson(raw);
      return { externalRef: policy.externalRef ? policy.externalRef(result) : null, result };
    },
    lookup: policy.lookup,
    compensation: policy.compensation,
    correction: policy.correction,
    audience: policy.audience,
    owner: policy.owner,
  });
}

/**
 * What both framework adapters' run objects (SagaAgentRun, SagaGraphRun) offer besides their tools:
 * the run's id, and the pivot asked, awaited and committed through the run's journal.
 */
export class JournaledSagaRun {
  /** The run as this thread drives it. */
  protected readonly run: JournaledRun;

  constructor(engine: SagaEngine, runId: string) {
    this.run = new JournaledRun(engine, runId);
  }

  /** The saga run. */
  get runId(): string {
    return this.run.runId;
  }

  /** Proposes the pivot for a reviewer: while it is pending every logged call is held; once approved, the plan's calls run, each once. */
  requestPivot(request: PivotRequest): Promise<PivotRecord> {
    return this.run.requestPivot(request);
  }

  /** Waits until the pivot is decided or `timeoutMs` passes. */
  awaitPivot(pivotId: string, options: { timeoutMs: number; pollMs?: number }): Promise<PivotRecord> {
    return this.run.awaitPivot(pivotId, options);
  }

  /** Commits an approved plan (its items in order, each once whoever else tries), then completes the run. */
  commitPlan(pivotId: string): Promise<CommitPlanResult> {
    return this.run.commitPlan(pivotId);
  }
}
