/**
 * The agent side's ports: what a run as an agent drives it (`RunContext`), a worker's unwinds and
 * the engine's reads ask of whoever decides. In process the engine decides on its own store (the
 * functions of calls.ts and request-pivot.ts behind a local port); over HTTP the server decides with
 * the same functions and the client (`HttpSagaStore`, packages/client/src/agent/client) sends the commands. Nothing here
 * writes a row: the store interface (store.ts) is implemented by the stores alone.
 */
import type { BeginCallAnswer, CallOutcomeReport, CompensationReport, PlanItemAddress, ReconcileReport, StepCompensateAction, UnwindAction } from "./messages";
import type { Actor, AuditInput, NewRun, PivotRecord, RunRecord, StepRecord } from "./store";
import type { CompensationPlan, CorrectionDraft, Json } from "./tools";

/** Asking for the pivot (request-pivot.ts decides; the plan's versions and classes are the deciding side's). */
export interface PivotPort {
  /** Proposes the pivot, or revises the pending one; the same plan again returns the same pivot. */
  request(input: { runId: string; summary: string; plan: ReadonlyArray<{ tool: string; args: Json }>; deadline: Date | null; actor: Actor }): Promise<PivotRecord>;
}

/** What one run as an agent drives it needs of the deciding side. */
export interface AgentPort {
  /** The call commands. */
  readonly calls: CallPort;
  /** The pivot request. */
  readonly pivots: PivotPort;
  /** The pivot, or null. */
  getPivot(pivotId: string): Promise<PivotRecord | null>;
  /** The pivot, waiting up to `waitMs` while it is PENDING (a long poll); without it the pivot is polled. */
  waitForPivot?(pivotId: string, waitMs: number): Promise<PivotRecord | null>;
}

/**
 * A server that decides for this process (the engine over HTTP): the commands, the unwind commands
 * and the reads an engine needs to start, resume and inspect runs.
 */
export interface SagaServer extends AgentPort {
  /** Starts a run (the server records who: the token's agent). */
  createRun(run: NewRun, audit: AuditInput): Promise<RunRecord>;
  /** The run, or null. */
  getRun(runId: string): Promise<RunRecord | null>;
  /** One step, or null. */
  getStep(stepId: string): Promise<StepRecord | null>;
  /** The run's saga log, by stepIdx. */
  listSteps(runId: string): Promise<StepRecord[]>;
  /** The run's pivots, oldest first. */
  listPivots(runId: string): Promise<PivotRecord[]>;
  /** The unwind commands: the server walks the log, this process does what needs its connectors. */
  readonly unwinds: UnwindPort;
}

/** True for a deciding server rather than a store the engine decides on. */
export function isSagaServer(x: object): x is SagaServer {
  return "calls" in x && "unwinds" in x && "pivots" in x;
}

/** The unwind commands: the next action of a run's unwind or of one step's pull-back, and a compensation's report. */
export interface UnwindPort {
  /** The next action of the run's unwind (`done` with the report when nothing needs a connector). */
  next(input: { runId: string; reason: string; skipStepIds?: readonly string[] | undefined; draftedBy: string | null; actor: Actor }): Promise<UnwindAction>;
  /** The next action of pulling back one step (a revoke). */
  nextForStep(input: { stepId: string; draftedBy: string | null; actor: Actor }): Promise<StepCompensateAction>;
  /** Records what the connector read back after sending (or re-checking) a compensation. */
  compensated(input: { step: StepRecord; report: CompensationReport; actor: Actor }): Promise<StepRecord>;
}

/**
 * The three commands of a tool call plus finishing a run (see calls.ts). In process they are the
 * functions of calls.ts on a store; over HTTP the server runs those same functions.
 */
export interface CallPort {
  /** Decides a call: call (intent committed), replay, failed, reconcile first, or held. */
  begin(input: {
    runId: string;
    cursor: number;
    tool: string;
    args: Json;
    proposal: { compensation: CompensationPlan | null; correction: CorrectionDraft | null; audience: string[] };
    tryAppend: boolean;
    actor: Actor;
    /** Set when the call commits an item of an approved plan: the step is found by (pivot, index), not by the cursor. */
    planItem?: PlanItemAddress;
  }): Promise<BeginCallAnswer>;
  /** Records what the provider answered for a step in flight. */
  outcome(input: { step: StepRecord; outcome: CallOutcomeReport; attempts: number; actor: Actor }): Promise<StepRecord>;
  /** Records what looking an unsettled step's key up found. */
  reconciled(input: { step: StepRecord; report: ReconcileReport; actor: Actor }): Promise<StepRecord>;
  /** Finishes the run; refused while a step is unsettled. */
  complete(input: { runId: string; actor: Actor }): Promise<RunRecord>;
}
