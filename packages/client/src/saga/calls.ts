/**
 * The decisions of a tool call, made once for every caller: the in-process engine (`RunContext`)
 * and the server's command API (`lib/server/agent-api/begin-call.ts`) both call these functions, so the
 * gate, the pivot, retries under the same key, replay and closed runs are decided in one place.
 *
 * A call is three commands (see ARCHITECTURE.md, "The call commands"):
 * 1. `beginCall`: the caller says which tool with which arguments (and the compensation, correction
 *    and audience it proposes); the log answers `call` (an INTENDED row is committed: make the call
 *    under its key), `replay` (the recorded result), `failed` (the recorded refusal), `reconcile`
 *    (an earlier attempt's outcome is unknown: look the key up first) or `held` (a person decides).
 *    Refusals (closed run, another tool's step unresolved, a different tool at a recorded index) are
 *    thrown as `SagaError`s with their codes.
 * 2. `recordOutcome`: what the provider answered (`confirmed`, `failed`, `unknown`), for a step in flight.
 * 3. `recordReconcile`: what looking the key up found (`found`, `absent` after the lag re-check,
 *    `lookup_failed`).
 * The caller owns only a cursor: the index it has reached since it (re)started, which every answer
 * returns advanced. Keys, the argument hash, the phase and the approval are derived here.
 */
import { EscalationSource, tellStepRecorded } from "./observer";
import { raiseEscalation } from "./raise-escalation";
import type { EngineDeps } from "./deps";
import type { BeginCallAnswer, CallOutcomeReport, PlanItemAddress, ReconcileReport } from "./messages";
import { SagaError } from "./errors";
import { assertRunSettled } from "./run-settled";
import { checkGate, checkPlanItem, needsApprovalBeforePivot } from "./gate";
import type { GateTool } from "./tool-table";
import { argsHash, compensationKey, stepKey } from "./keys";
import {
  actorLabel,
  IntentGuardFailed,
  type Actor,
  type IntentGuard,
  type PivotRecord,
  type RunRecord,
  type StepFence,
  type StepRecord,
} from "./store";
import type { CompensationPlan, CorrectionDraft, Json } from "./tools";
import { EscalationKind, Phase, PivotStatus, RunStatus, StepStatus, ToolClass, UNSETTLED_STATUSES } from "./vocabulary";

/** What decides a call needs of the store. */
export type CallDeps = Pick<EngineDeps, "store" | "ids" | "observer">;

/** Run states that take no more tool calls. */
export const CLOSED_RUN_STATUSES: readonly RunStatus[] = [RunStatus.COMPLETED, RunStatus.UNWINDING, RunStatus.UNWOUND, RunStatus.NEEDS_ATTENTION];

/** A tool as the deciding side knows it: a registered definition, or the server's tool-table row. */
export interface CallTool extends GateTool {
  /** The compensator its compensation must name (REVERSIBLE and COMPENSATABLE tools). */
  compensator: string | null;
}

/** What the caller proposes beside the call; the tool's class decides what is kept. */
export interface CallProposal {
  /** The compensation, pre-written (REVERSIBLE / COMPENSATABLE); null when none could be built. */
  compensation: CompensationPlan | null;
  /** The correction an irreversible effect would need. */
  correction: CorrectionDraft | null;
  /** Who sees the effect. */
  audience: string[];
}

/** One `beginCall`. */
export interface BeginCallInput {
  /** The run. */
  runId: string;
  /** The caller's position: 0 after a (re)start, then what the previous answer returned. */
  cursor: number;
  /** The tool. */
  tool: CallTool;
  /** The arguments, already parsed against the tool's schema. */
  args: Json;
  /** Compensation, correction and audience. */
  proposal: CallProposal;
  /** Who calls. */
  actor: Actor;
  /** Checks the insert proves in its own transaction besides the run's (the server's: its agent, the tool row, the token). */
  guard?: Pick<IntentGuard, "runAgent" | "toolPolicy" | "activeToken">;
  /** Set false when the caller knows the log has rows at the cursor (a replay): skip the unread insert. */
  tryAppend?: boolean;
  /** Extra audit data (`via: "api"`). */
  auditData?: Record<string, Json>;
}

function needsCompensation(tool: CallTool): boolean {
  return tool.class === ToolClass.REVERSIBLE || tool.class === ToolClass.COMPENSATABLE;
}

/** What the intent row stores of a proposal, by the tool's class. */
function intentFields(input: BeginCallInput, idx: number) {
  const { tool, proposal, runId } = input;
  const compensating = needsCompensation(tool);
  const compensation = compensating && proposal.compensation?.tool === tool.compensator ? proposal.compensation : null;
  return {
    stepKey: stepKey(runId, idx, tool.name),
    compensation,
    compensationKey: compensating ? compensationKey(runId, idx, tool.name) : null,
    correction: proposal.correction,
    audience: proposal.audience,
    buildable: !compensating || compensation !== null,
  };
}

/** Refuses a compensation that names another compensator than the tool's: the caller's definition is out of date. */
function checkProposal(input: Pick<BeginCallInput, "tool" | "proposal">): void {
  const { tool, proposal } = input;
  if (needsCompensation(tool) && proposal.compensation && proposal.compensation.tool !== tool.compensator) {
    throw new SagaError("INVALID_ARGS", `compensation.tool: ${tool.name} is answered by "${tool.compensator ?? "nothing"}", not "${proposal.compensation.tool}".`, [
      { path: "compensation.tool", message: `must be ${tool.compensator ?? "absent"}` },
    ]);
  }
  if (tool.class === ToolClass.PURE) {
    throw new SagaError("INVALID_ARGS", `tool: ${tool.name} is PURE: pure calls are not logged; call it directly.`, [{ path: "tool", message: "pure tool" }]);
  }
}

/**
 * The common call with no read at all: plain staging (a releasable tool with its compensation) as one
 * insert at the cursor whose guard proves in its own transaction what the careful path would read
 * (the run RUNNING, no pivot, the step next and nothing unsettled, plus the caller's `guard`). Null
 * when the call is not plain staging or the guard did not hold: nothing was written; decide on a read.
 */
export async function appendCall(deps: CallDeps, input: BeginCallInput): Promise<BeginCallAnswer | null> {
  checkProposal(input);
  if (input.cursor < 0 || needsApprovalBeforePivot(input.tool, intentFields(input, input.cursor).buildable)) return null;
  try {
    const guard: IntentGuard = { runStatus: [RunStatus.RUNNING], appendOnly: true, noPivot: true, ...input.guard };
    const inserted = await insert(deps, input, input.cursor, argsHash(input.args), { phase: Phase.STAGING, approvalId: null, planItemIdx: null }, guard);
    return inserted.created ? { kind: "call", step: inserted.step, cursor: input.cursor } : null;
  } catch (e) {
    if (e instanceof IntentGuardFailed || (e instanceof SagaError && e.code === "RUN_NOT_FOUND")) return null;
    throw e;
  }
}

/**
 * Decides one call and commits its intent when it may run: the unread insert first (`appendCall`)
 * unless the caller knows it is replaying, then a decision on a fresh read of the run, its log and
 * its pivots.
 */
export async function beginCall(deps: CallDeps, input: BeginCallInput): Promise<BeginCallAnswer> {
  checkProposal(input);
  if (input.tryAppend !== false) {
    const appended = await appendCall(deps, input);
    if (appended) return appended;
  }
  const hash = argsHash(input.args);
  for (let attempt = 1; ; attempt++) {
    const answer = await beginOnRead(deps, input, hash);
    if (answer) return answer;
    if (attempt >= 5) throw new SagaError("CONFLICT", `Run ${input.runId} kept changing while ${input.tool.name} was being recorded; call it again.`);
  }
}

/** The careful path: read the run, walk the log from the cursor, decide. Null: the run changed under us; read again. */
async function beginOnRead(deps: CallDeps, input: BeginCallInput, hash: string): Promise<BeginCallAnswer | null> {
  const { store } = deps;
  const run = await store.getRun(input.runId);
  if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${input.runId} does not exist; check the id, or start a new run.`);
  if (input.guard?.runAgent !== undefined && run.agent !== input.guard.runAgent) {
    throw new SagaError("RUN_NOT_FOUND", `Run ${input.runId} does not exist for this agent.`);
  }
  const steps = await store.listSteps(input.runId);
  if (input.cursor < 0 || input.cursor > steps.length) {
    throw new SagaError("INVALID_ARGS", `cursor: ${input.cursor} is outside run ${input.runId}'s log of ${steps.length} steps; send 0 after a restart, then the cursor each answer returns.`, [
      { path: "cursor", message: `must be between 0 and ${steps.length}` },
    ]);
  }
  if (CLOSED_RUN_STATUSES.includes(run.status)) throw closedRun(run);
  // A cursor past a step whose outcome is unknown skipped it: that step must be called (reconciled) first.
  const skipped = steps.find((s) => s.stepIdx < input.cursor && UNSETTLED_STATUSES.includes(s.status));
  if (skipped) {
    throw new SagaError("STEP_UNRESOLVED", `Step ${skipped.stepIdx} (${skipped.tool}) has an unknown outcome; call ${skipped.tool} again at cursor ${skipped.stepIdx} so it is reconciled first.`, [
      { path: "cursor", message: `step ${skipped.stepIdx} before it is unsettled` },
    ]);
  }
  const pivots = await store.listPivots(input.runId);
  const name = input.tool.name;
  for (let idx = input.cursor; ; idx++) {
    const row = steps.find((s) => s.stepIdx === idx);
    if (!row) return newStep(deps, input, hash, { run, steps, pivots, idx });
    if (row.tool !== name) {
      if (UNSETTLED_STATUSES.includes(row.status)) {
        throw new SagaError(
          "STEP_UNRESOLVED",
          `Step ${row.stepIdx} (${row.tool}) has an unknown outcome; call ${row.tool} again so it is reconciled before calling ${name}.`,
        );
      }
      if (row.status === StepStatus.NOT_EXECUTED) continue; // a step that never happened may be abandoned for another tool
      throw new SagaError(
        "DETERMINISM",
        `Step ${row.stepIdx} was recorded as ${row.tool} but ${name} was called. ` +
          "Resume must replay the same tool calls in the same order; check that the agent is deterministic up to its last recorded step, or start a new run. " +
          "To commit an approved plan after a restart, use commitPlan (planItem instead of cursor): it needs no replay.",
      );
    }
    return existingStep(deps, input, hash, row, steps);
  }
}

/** One `beginPlanItem`: a call of an approved plan's item, wherever the caller thinks its cursor is. */
export interface BeginPlanItemInput extends Omit<BeginCallInput, "cursor" | "tryAppend"> {
  /** The item this call commits. */
  planItem: PlanItemAddress;
}

/**
 * Begins the call of one item of an approved plan. The item's identity is the pivot and its place in
 * the plan, not a cursor: its step is the one the log holds for (pivot, index), so whoever commits
 * second (the agent again, a fresh process that never replayed the earlier steps, a worker) is
 * answered from that row (replay, failed, reconcile, or a retry under the same key after a confirmed
 * absence) and only an item with no step yet gets a new intent, appended after the last step. A step
 * left unsettled anywhere in the run is answered first (`reconcile`, with that step), so the plan
 * never runs past an effect nobody knows about. Refusals: PIVOT_NOT_APPROVED, PLAN_ALREADY_COMMITTED,
 * PLAN_ITEM_MISMATCH, PLAN_ORDER (an earlier item is not done), RUN_CLOSED.
 */
export async function beginPlanItem(deps: CallDeps, input: BeginPlanItemInput): Promise<BeginCallAnswer> {
  checkProposal(input);
  const hash = argsHash(input.args);
  for (let attempt = 1; ; attempt++) {
    const answer = await planItemOnRead(deps, input, hash);
    if (answer) return answer;
    if (attempt >= 5) throw new SagaError("CONFLICT", `Run ${input.runId} kept changing while plan item ${input.planItem.index} was being recorded; call it again.`);
  }
}

/** The approved pivot a commit names, or the refusal that says why it cannot be committed. */
function approvedPivot(run: RunRecord, pivots: readonly PivotRecord[], pivotId: string): PivotRecord {
  const pivot = pivots.find((p) => p.id === pivotId);
  if (!pivot) throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${pivotId} is not a pivot of run ${run.id}; commit the run's own approved pivot.`);
  if (pivot.status === PivotStatus.PENDING) {
    throw new SagaError("PIVOT_NOT_APPROVED", `Pivot ${pivotId} still waits for a reviewer; wait for its decision (GET /api/v1/pivots/${pivotId}?waitMs=25000), then commit it.`);
  }
  if (pivot.status !== PivotStatus.APPROVED) {
    throw new SagaError("PIVOT_NOT_APPROVED", `Pivot ${pivotId} was ${pivot.status.toLowerCase()}${pivot.reason ? `: ${pivot.reason}` : ""}; nothing of its plan may run. Propose a revised plan or unwind the run.`);
  }
  if (pivots.at(-1)?.id !== pivot.id) {
    throw new SagaError("PIVOT_NOT_APPROVED", `Pivot ${pivotId} was superseded by pivot ${pivots.at(-1)!.id}; commit that one.`);
  }
  return pivot;
}

async function planItemOnRead(deps: CallDeps, input: BeginPlanItemInput, hash: string): Promise<BeginCallAnswer | null> {
  const { store } = deps;
  const { pivotId, index } = input.planItem;
  const run = await store.getRun(input.runId);
  if (!run || (input.guard?.runAgent !== undefined && run.agent !== input.guard.runAgent)) {
    throw new SagaError("RUN_NOT_FOUND", `Run ${input.runId} does not exist${run ? " for this agent" : ""}; check the id.`);
  }
  const pivots = await store.listPivots(input.runId);
  const pivot = approvedPivot(run, pivots, pivotId);
  const item = pivot.plan[index];
  if (!item) {
    throw new SagaError("INVALID_ARGS", `planItem.index: pivot ${pivotId}'s plan has ${pivot.plan.length} items (0 to ${pivot.plan.length - 1}), not ${index}.`, [
      { path: "planItem.index", message: `must be between 0 and ${pivot.plan.length - 1}` },
    ]);
  }
  if (item.tool !== input.tool.name || item.argsHash !== hash) {
    throw new SagaError(
      "PLAN_ITEM_MISMATCH",
      `Plan item ${index} of pivot ${pivotId} is ${item.tool} with the arguments the reviewer approved; ` +
        (item.tool !== input.tool.name ? `${input.tool.name} was sent.` : "other arguments were sent. Send the plan's arguments exactly (GET the pivot)."),
      [{ path: item.tool !== input.tool.name ? "tool" : "args", message: `must be plan item ${index} as approved` }],
    );
  }
  if (run.status === RunStatus.COMPLETED) {
    throw new SagaError("PLAN_ALREADY_COMMITTED", `Pivot ${pivotId}'s plan was committed and run ${run.id} is COMPLETED; there is nothing left to do.`);
  }
  if (CLOSED_RUN_STATUSES.includes(run.status)) throw closedRun(run);
  const steps = await store.listSteps(input.runId);
  const own = steps.filter((s) => s.approvalId === pivot.id && s.planItemIdx === index).at(-1);
  if (own) return existingStep(deps, { ...input, cursor: own.stepIdx }, hash, own, steps);
  // Nothing runs past an effect nobody knows about: whoever commits settles it first, by its key.
  const unsettled = steps.find((s) => UNSETTLED_STATUSES.includes(s.status));
  if (unsettled) return { kind: "reconcile", step: unsettled, cursor: unsettled.stepIdx };
  for (let earlier = 0; earlier < index; earlier++) {
    const done = steps.some((s) => s.approvalId === pivot.id && s.planItemIdx === earlier && (s.status === StepStatus.CONFIRMED || s.status === StepStatus.COMPENSATED));
    if (!done) {
      throw new SagaError("PLAN_ORDER", `Plan item ${earlier} of pivot ${pivotId} is not done, so item ${index} may not run yet; commit the plan in order (a failed item waits for a person).`, [
        { path: "planItem.index", message: `item ${earlier} first` },
      ]);
    }
  }
  const idx = (steps.at(-1)?.stepIdx ?? -1) + 1;
  const fields = intentFields({ ...input, cursor: idx }, idx);
  const decision = await checkPlanItem(deps, {
    runId: input.runId,
    def: input.tool,
    args: input.args,
    argsHash: hash,
    compensationBuildable: fields.buildable,
    pivots,
    steps,
    actor: input.actor,
    pivot,
    planItemIdx: index,
  });
  if (!decision.allowed) return { kind: "held", reason: decision.reason, message: decision.message, escalationId: decision.escalationId, pivotId: decision.pivotId, cursor: idx };
  const guard: IntentGuard = { runStatus: [run.status], runUpdatedAt: run.updatedAt, appendOnly: true, ...input.guard };
  try {
    const { created, step } = await insert(deps, { ...input, cursor: idx }, idx, hash, decision, guard);
    // Another writer took this index first (perhaps for this very item): decide again on a fresh read.
    return created ? { kind: "call", step, cursor: idx } : null;
  } catch (e) {
    if (e instanceof IntentGuardFailed) return null;
    throw e;
  }
}

/** What the log says of a recorded step of this tool. */
async function existingStep(deps: CallDeps, input: BeginCallInput, hash: string, row: StepRecord, steps: readonly StepRecord[]): Promise<BeginCallAnswer | null> {
  if (UNSETTLED_STATUSES.includes(row.status)) return { kind: "reconcile", step: row, cursor: row.stepIdx };
  if (row.status === StepStatus.NOT_EXECUTED) return retryStep(deps, input, hash, row, steps);
  if (row.status === StepStatus.FAILED) return { kind: "failed", step: row, cursor: row.stepIdx + 1 };
  return { kind: "replay", step: row, cursor: row.stepIdx + 1 };
}

async function newStep(
  deps: CallDeps,
  input: BeginCallInput,
  hash: string,
  view: { run: RunRecord; steps: StepRecord[]; pivots: PivotRecord[]; idx: number },
): Promise<BeginCallAnswer | null> {
  const fields = intentFields(input, view.idx);
  const decision = await checkGate(deps, {
    runId: input.runId,
    def: input.tool,
    args: input.args,
    argsHash: hash,
    compensationBuildable: fields.buildable,
    pivots: view.pivots,
    steps: view.steps,
    actor: input.actor,
  });
  if (!decision.allowed) return { kind: "held", reason: decision.reason, message: decision.message, escalationId: decision.escalationId, pivotId: decision.pivotId, cursor: view.idx };
  const guard: IntentGuard = { runStatus: [view.run.status], runUpdatedAt: view.run.updatedAt, appendOnly: true, ...input.guard };
  try {
    const { created, step } = await insert(deps, input, view.idx, hash, decision, guard);
    if (created) return { kind: "call", step, cursor: view.idx };
    if (step.tool !== input.tool.name) {
      throw new SagaError("DETERMINISM", `Step ${view.idx} was recorded as ${step.tool} by another writer while ${input.tool.name} was called.`);
    }
    return existingStep(deps, input, hash, step, view.steps);
  } catch (e) {
    if (e instanceof IntentGuardFailed) return null;
    throw e;
  }
}

function insert(
  deps: CallDeps,
  input: BeginCallInput,
  idx: number,
  hash: string,
  decision: { phase: Phase; approvalId: string | null; planItemIdx: number | null },
  guard: IntentGuard,
) {
  const fields = intentFields(input, idx);
  return deps.store.insertIntent(
    {
      id: deps.ids.next("stp"),
      runId: input.runId,
      stepIdx: idx,
      tool: input.tool.name,
      toolClass: input.tool.class,
      stepKey: fields.stepKey,
      args: input.args,
      argsHash: hash,
      phase: decision.phase,
      policyVersion: input.tool.policyVersion ?? 1,
      approvalId: decision.approvalId,
      planItemIdx: decision.planItemIdx,
      compensation: fields.compensation,
      compensationKey: fields.compensationKey,
      correction: fields.correction,
      audience: fields.audience,
    },
    { type: "step.intended", actor: input.actor, data: { stepIdx: idx, tool: input.tool.name, stepKey: fields.stepKey, phase: decision.phase, ...input.auditData } },
    guard,
  );
}

/** Retries a NOT_EXECUTED step under its own key; the reworded arguments replace the old ones. */
async function retryStep(deps: CallDeps, input: BeginCallInput, hash: string, row: StepRecord, steps: readonly StepRecord[]): Promise<BeginCallAnswer | null> {
  const fields = intentFields(input, row.stepIdx);
  const decision =
    row.approvalId && row.argsHash === hash
      ? { allowed: true as const, phase: row.phase, approvalId: row.approvalId, planItemIdx: row.planItemIdx }
      : await checkGate(deps, {
          runId: input.runId,
          def: input.tool,
          args: input.args,
          argsHash: hash,
          compensationBuildable: fields.buildable,
          pivots: await deps.store.listPivots(input.runId),
          steps: steps.filter((s) => s.id !== row.id),
          actor: input.actor,
        });
  if (!decision.allowed) return { kind: "held", reason: decision.reason, message: decision.message, escalationId: decision.escalationId, pivotId: decision.pivotId, cursor: row.stepIdx };
  const step = await deps.store.updateStep(
    row.id,
    { status: [StepStatus.NOT_EXECUTED] },
    {
      status: StepStatus.INTENDED,
      args: input.args,
      argsHash: hash,
      phase: decision.phase,
      approvalId: decision.approvalId,
      planItemIdx: decision.planItemIdx,
      compensation: fields.compensation,
      correction: fields.correction,
      audience: fields.audience,
      error: null,
    },
    { type: "step.retry_intended", actor: input.actor, data: { stepIdx: row.stepIdx, stepKey: row.stepKey, ...input.auditData } },
  );
  if (!step) return null; // another writer moved the row: decide again on a fresh read
  return { kind: "call", step, cursor: row.stepIdx };
}

/** One `recordOutcome`. */
export interface RecordOutcomeInput {
  /** The step in flight (its id, and its index when the caller knows it, for the audit event). */
  stepId: string;
  stepIdx?: number;
  /** What happened. */
  outcome: CallOutcomeReport;
  /** Attempts made under the key so far, this call's retries after "try later" included. */
  attempts: number;
  /** Who reports. */
  actor: Actor;
  /** The server's checks in the update's own WHERE (the run is the agent's, the tool in scope, the token live). */
  fence?: Pick<StepFence, "tools" | "runAgent" | "activeToken">;
  /** The tool's owner, for the escalation a failure after the pivot raises (default: the tool table's, or none). */
  owner?: (tool: string) => string | null;
  /** Extra audit data. */
  auditData?: Record<string, Json>;
}

/**
 * Records an outcome on an INTENDED row, as one fenced update (no read on the way: a tool's outcome
 * is the common write). When the row is no longer INTENDED, a repeat of the same report gets the row
 * back, and anything else is refused with STEP_NOT_IN_FLIGHT: someone settled it first (reconcile in
 * another process) and the log wins. A failure after the pivot raises STUCK_AFTER_PIVOT: the
 * approved plan cannot finish without a person.
 */
export async function recordOutcome(deps: CallDeps, input: RecordOutcomeInput): Promise<StepRecord> {
  const { stepId, outcome, actor, attempts } = input;
  const fence: StepFence = { status: [StepStatus.INTENDED], ...input.fence };
  const data = { ...(input.stepIdx === undefined ? {} : { stepIdx: input.stepIdx }), ...input.auditData };
  let updated: StepRecord | null;
  if (outcome.kind === "confirmed") {
    updated = await deps.store.updateStep(
      stepId,
      fence,
      { status: StepStatus.CONFIRMED, externalRef: outcome.externalRef, result: outcome.result, error: null, attempts },
      { type: "step.confirmed", actor, data: { ...data, externalRef: outcome.externalRef } },
    );
  } else if (outcome.kind === "unknown") {
    updated = await deps.store.updateStep(
      stepId,
      fence,
      { status: StepStatus.UNKNOWN, error: { reason: "outcome_unknown", message: outcome.message }, attempts },
      { type: "step.unknown", actor, data: { ...data, message: outcome.message } },
    );
  } else {
    const error = { reason: outcome.reason, message: outcome.message, attempts, retryable: outcome.retryable };
    updated = await deps.store.updateStep(stepId, fence, { status: StepStatus.FAILED, error, attempts }, { type: "step.failed", actor, data: { ...data, ...error } });
    if (updated && updated.phase !== Phase.STAGING) {
      await raiseEscalation(deps, {
        runId: updated.runId,
        stepId: updated.id,
        kind: EscalationKind.STUCK_AFTER_PIVOT,
        title: `${updated.tool} (step ${updated.stepIdx}) failed after the pivot: ${outcome.message}`,
        detail: { tool: updated.tool, args: updated.args, stepKey: updated.stepKey, error },
        owner: input.owner?.(updated.tool) ?? null,
        dedupeKey: `stuck:${updated.id}`,
        actor,
        facts: { stepIdx: updated.stepIdx },
        source: EscalationSource.failed_after_pivot,
      });
    }
  }
  if (updated) {
    await tellStepRecorded(deps, "execute_tool", updated, updated.createdAt);
    return updated;
  }
  const current = await deps.store.getStep(stepId);
  if (!current) throw new SagaError("STEP_NOT_FOUND", `Step ${stepId} does not exist.`);
  // The fence's other checks (the agent's run, the tool in scope) did not hold.
  if (current.status === StepStatus.INTENDED) throw new SagaError("STEP_NOT_FOUND", `Step ${stepId} does not exist for this agent.`);
  if (sameOutcome(current, outcome)) return current; // a repeated report (its first answer was lost)
  if (contradicts(current, outcome)) {
    // The provider said one thing and this report says another: the recorded outcome stands, loudly.
    throw new SagaError(
      "OUTCOME_CONFLICT",
      `Step ${current.stepIdx} (${current.tool}) is recorded ${current.status}${current.externalRef ? ` as ${current.externalRef}` : ""}; ` +
        `this report says ${describeReport(outcome)}. The recorded outcome stands: check the provider under key ${current.stepKey} and raise it with a person if the record is wrong.`,
      [{ path: outcome.kind === "confirmed" ? "externalRef" : "outcome", message: `contradicts the recorded ${current.status}` }],
    );
  }
  // Someone settled the row meanwhile (reconcile in another process), or it was never in flight: the
  // log wins. The caller begins the call again at the same cursor and is told what the log says.
  throw new SagaError(
    "STEP_NOT_IN_FLIGHT",
    `Step ${current.stepIdx} (${current.tool}) is ${current.status}, not INTENDED, so a ${outcome.kind} outcome cannot be recorded; begin the call again to see what the log says.`,
    [{ path: "outcome", message: `the step is ${current.status}, not in flight` }],
  );
}

/** A repeat of the report that settled the step: same status, and for a confirmation the same effect. */
function sameOutcome(step: StepRecord, outcome: CallOutcomeReport): boolean {
  if (outcome.kind === "confirmed") return step.status === StepStatus.CONFIRMED && (step.externalRef ?? null) === (outcome.externalRef ?? null);
  if (outcome.kind === "failed") return step.status === StepStatus.FAILED;
  return step.status === StepStatus.UNKNOWN;
}

/**
 * A report that says something else happened than the log records: a confirmation of another effect
 * (another externalRef), a confirmation of a step recorded as refused, or a refusal of one recorded as
 * confirmed. A late report after someone else settled an unknown step is not a contradiction (the
 * reconcile knew more), so those keep STEP_NOT_IN_FLIGHT.
 */
function contradicts(step: StepRecord, outcome: CallOutcomeReport): boolean {
  if (outcome.kind === "confirmed") return step.status === StepStatus.FAILED || (step.status === StepStatus.CONFIRMED && (step.externalRef ?? null) !== (outcome.externalRef ?? null));
  if (outcome.kind === "failed") return step.status === StepStatus.CONFIRMED;
  return false;
}

function describeReport(outcome: CallOutcomeReport): string {
  if (outcome.kind === "confirmed") return `confirmed${outcome.externalRef ? ` as ${outcome.externalRef}` : " with no external ref"}`;
  if (outcome.kind === "failed") return `failed (${outcome.reason})`;
  return "unknown";
}

/** One `recordReconcile`. */
export interface RecordReconcileInput {
  /** The unsettled step. */
  step: StepRecord;
  /** What the lookup said. */
  report: ReconcileReport;
  /** Who reports. */
  actor: Actor;
  /** The tool's owner, for the escalation a failing lookup raises. */
  owner?: string | null;
  /** The server's checks in the update's own WHERE. */
  fence?: Pick<StepFence, "tools" | "runAgent" | "activeToken">;
  /** When the lookup began, for the reconcile's span (default: now). */
  startedAt?: Date;
}

/**
 * Settles an INTENDED or UNKNOWN row from a lookup: found -> CONFIRMED with the found ref; absent
 * (twice, the lag pause between) -> NOT_EXECUTED, the one status that permits a retry; the lookup
 * failing -> UNKNOWN and an OUTCOME_UNKNOWN escalation (a person decides). Settled rows come back as
 * they are.
 */
export async function recordReconcile(deps: CallDeps, input: RecordReconcileInput): Promise<StepRecord> {
  if (!UNSETTLED_STATUSES.includes(input.step.status)) return input.step;
  const startedAt = input.startedAt ?? new Date();
  const recorded = await settleFromLookup(deps, input);
  await tellStepRecorded(deps, "reconcile", recorded, startedAt);
  return recorded;
}

async function settleFromLookup(deps: CallDeps, input: RecordReconcileInput): Promise<StepRecord> {
  const { step, report, actor } = input;
  const fence: StepFence = { status: UNSETTLED_STATUSES, ...input.fence };
  if (report.kind === "found") {
    const updated = await deps.store.updateStep(
      step.id,
      fence,
      { status: StepStatus.CONFIRMED, externalRef: report.externalRef, result: report.result, error: null },
      { type: "step.reconciled", actor, data: { outcome: StepStatus.CONFIRMED, externalRef: report.externalRef, lookups: report.lookups } },
    );
    if (updated) await closeUnknownEscalation(deps, updated, actor);
    return updated ?? (await reread(deps, step));
  }
  if (report.kind === "absent") {
    const updated = await deps.store.updateStep(
      step.id,
      fence,
      { status: StepStatus.NOT_EXECUTED, error: { reason: "not_found", message: `no effect found for key ${step.stepKey} after ${report.lookups} lookups` } },
      { type: "step.reconciled", actor, data: { outcome: StepStatus.NOT_EXECUTED, lookups: report.lookups, recheckAfterMs: report.recheckAfterMs } },
    );
    if (updated) await closeUnknownEscalation(deps, updated, actor);
    return updated ?? (await reread(deps, step));
  }
  // The real system could not be asked: nothing is known, so a person decides.
  const unknown =
    step.status === StepStatus.UNKNOWN
      ? step
      : ((await deps.store.updateStep(
          step.id,
          { status: [StepStatus.INTENDED], ...input.fence },
          { status: StepStatus.UNKNOWN, error: { reason: "lookup_failed", message: report.message } },
          { type: "step.unknown", actor, data: { reason: "lookup_failed", message: report.message } },
        )) ?? (await reread(deps, step)));
  await raiseEscalation(deps, {
    runId: step.runId,
    stepId: step.id,
    kind: EscalationKind.OUTCOME_UNKNOWN,
    title: `Did ${step.tool} (step ${step.stepIdx}) happen? The lookup failed ${report.attempts} times.`,
    detail: { stepKey: step.stepKey, tool: step.tool, args: step.args, lookupError: report.message },
    owner: input.owner ?? null,
    dedupeKey: `unknown:${step.id}`,
    actor,
    facts: { stepIdx: step.stepIdx },
    source: EscalationSource.lookup_failed,
  });
  return unknown;
}

async function reread(deps: CallDeps, step: StepRecord): Promise<StepRecord> {
  const current = await deps.store.getStep(step.id);
  if (!current) throw new SagaError("STEP_NOT_FOUND", `Step ${step.id} disappeared from the saga log.`);
  return current;
}

/** A step that reconcile settled no longer needs a person: its OUTCOME_UNKNOWN item is resolved. */
async function closeUnknownEscalation(deps: CallDeps, step: StepRecord, actor: Actor): Promise<void> {
  const open = await deps.store.findEscalationByDedupeKey(`unknown:${step.id}`);
  if (!open || open.status === "RESOLVED") return;
  const resolution = { outcome: step.status, settledBy: "reconcile", externalRef: step.externalRef };
  await deps.store.resolveEscalation(open.id, { resolvedBy: actorLabel(actor), resolution }, {
    type: "escalation.resolved",
    actor,
    data: { escalationId: open.id, kind: open.kind, resolution },
  });
}

/**
 * Marks a run finished. Refused while a step is unsettled (RUN_NOT_SETTLED: `assertRunSettled`, the
 * rule the agent API's status move keeps too) and while a pivot waits for its decision.
 */
export async function completeRun(deps: CallDeps, runId: string, actor: Actor, extra: { runAgent?: string } = {}): Promise<RunRecord> {
  const run = await deps.store.getRun(runId);
  if (!run || (extra.runAgent !== undefined && run.agent !== extra.runAgent)) throw new SagaError("RUN_NOT_FOUND", `Run ${runId} does not exist.`);
  if (run.status === RunStatus.COMPLETED) return run;
  await assertRunSettled(deps.store, runId, RunStatus.COMPLETED);
  const done = await deps.store.setRunStatus(runId, [RunStatus.RUNNING, RunStatus.COMMITTING], RunStatus.COMPLETED, { type: "run.completed", actor });
  if (done) return done;
  const current = (await deps.store.getRun(runId)) ?? run;
  if (current.status === RunStatus.AWAITING_PIVOT || (await deps.store.listPivots(runId)).at(-1)?.status === PivotStatus.PENDING) {
    throw new SagaError("PIVOT_CONFLICT", `Run ${runId} waits for a pivot decision; wait for it (or unwind) before completing.`);
  }
  throw closedRun(current);
}

export function closedRun(run: RunRecord): SagaError {
  if (run.status === RunStatus.UNWINDING) {
    return new SagaError(
      "RUN_CLOSED",
      `Run ${run.id} is being pulled back (a person pulled its revoke trigger, or it is being unwound): it takes no more tool calls. Stop here; what it did is being undone in reverse order.`,
    );
  }
  return new SagaError("RUN_CLOSED", `Run ${run.id} is ${run.status} and takes no more tool calls; start a new run.`);
}
