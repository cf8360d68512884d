/**
 * What a worker does with each kind of task: unwind a run, reconcile or compensate a step, look one
 * up for a person, send an approved correction, commit an approved plan. Each goes through the saga
 * engine, so running a task again (after a lost lease) repeats nothing the log already holds. The
 * loop that claims tasks, keeps their leases and settles them is packages/client/src/agent/worker.ts.
 */
import type { Actor, StepRecord } from "../saga/store";
import type { Json } from "../saga/tools";
import type { UnwindOptions } from "../saga/unwind";
import type { ReconcileReport, UnwindReport } from "../saga/messages";
import type { RunContext } from "../saga/run-context";
import { reconcileBody } from "../protocol/schemas/calls";
import type { TLookupResultInput } from "../protocol/tasks/lookup-task";
import { ZSendCorrectionPayload } from "../protocol/tasks/send-correction-payload";
import { WorkerTaskKind } from "../protocol/tasks/vocabulary";
import { ZCommitPlanPayload, ZCompensatePayload, ZUnwindPayload, type ClaimedTask } from "../protocol/tasks/task";

/**
 * What the worker needs of the engine. `SagaEngine` provides it; the caller builds the engine (over
 * the server's commands with the client's `HttpSagaStore` in a team's worker, or over
 * `PrismaSagaStore` in the server's own process) with this process's tool connectors.
 */
export interface WorkerEngine {
  /** Unwinds a run (leaving `skipStepIds` as they are); calling it again resumes a crashed unwind. */
  unwind(runId: string, actor: Actor, reason: string, options?: UnwindOptions): Promise<UnwindReport>;
  /** Reconciles one step against the real system. */
  reconcile(stepId: string, actor?: Actor): Promise<StepRecord>;
  /** Continues a run from its log (correction sends: the approved calls run once, replays read the log). */
  resume?(runId: string): Promise<Pick<RunContext, "run" | "call" | "complete" | "commitPlan">>;
  /** Looks one step's key up for a person (a LOOKUP task); changes nothing. */
  lookUp?(stepId: string): Promise<{ step: StepRecord; report: ReconcileReport }>;
  /** Pulls back one step (a revoke): its compensation, confirmed by reading back, or its correction draft. */
  compensateStep(stepId: string, actor: Actor, draftedBy?: string | null): Promise<StepRecord>;
}

/** A task this worker refuses for good (malformed payload, unsupported kind). */
export class TaskRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "TaskRefused";
  }
}

function toJson(value: unknown): Json {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json);
}

/** What a task asks for, in a phrase for the worker's log. */
export function describeTask(task: ClaimedTask): string {
  switch (task.kind) {
    case WorkerTaskKind.UNWIND:
      return `unwind run ${task.runId}`;
    case WorkerTaskKind.RECONCILE:
      return `reconcile step ${task.stepId ?? "(none)"} of run ${task.runId}`;
    case WorkerTaskKind.COMPENSATE:
      return `compensate step ${task.stepId ?? "(none)"} of run ${task.runId}`;
    case WorkerTaskKind.SEND_CORRECTION:
      return `send the approved correction of run ${task.runId}`;
    case WorkerTaskKind.LOOKUP:
      return `look step ${task.stepId ?? "(none)"} of run ${task.runId} up for a person`;
    case WorkerTaskKind.COMMIT_PLAN:
      return `commit the approved plan of run ${task.runId}`;
  }
}

/** Runs one claimed task through the engine and says what it did (the task's result); throws TaskRefused for a task it cannot run. */
export async function runTask(engine: WorkerEngine, actor: Actor, task: ClaimedTask): Promise<Json> {
  switch (task.kind) {
    case WorkerTaskKind.UNWIND: {
      const payload = ZUnwindPayload.safeParse(task.payload);
      if (!payload.success) throw new TaskRefused("INVALID_PAYLOAD", "an UNWIND task needs payload.reason (a non-empty string)");
      return toJson(await engine.unwind(task.runId, actor, payload.data.reason, { skipStepIds: payload.data.skipStepIds, draftedBy: payload.data.draftedBy ?? null }));
    }
    case WorkerTaskKind.RECONCILE: {
      if (!task.stepId) throw new TaskRefused("INVALID_PAYLOAD", "a RECONCILE task needs a stepId");
      const step = await engine.reconcile(task.stepId, actor);
      return { stepId: step.id, stepIdx: step.stepIdx, tool: step.tool, status: step.status, externalRef: step.externalRef };
    }
    case WorkerTaskKind.SEND_CORRECTION:
      return sendCorrection(engine, task);
    case WorkerTaskKind.COMMIT_PLAN:
      return commitPlan(engine, task);
    case WorkerTaskKind.LOOKUP: {
      if (!task.stepId) throw new TaskRefused("INVALID_PAYLOAD", "a LOOKUP task needs a stepId");
      if (!engine.lookUp) throw new TaskRefused("NOT_SUPPORTED", "this worker's engine cannot look steps up; run the worker with a SagaEngine");
      const { step, report } = await engine.lookUp(task.stepId);
      const result: TLookupResultInput = { stepId: step.id, lookup: reconcileBody(report) };
      return toJson(result);
    }
    case WorkerTaskKind.COMPENSATE: {
      const payload = ZCompensatePayload.safeParse(task.payload);
      if (!task.stepId || !payload.success) throw new TaskRefused("INVALID_PAYLOAD", "a COMPENSATE task needs a stepId and payload.reason (a non-empty string)");
      const step = await engine.compensateStep(task.stepId, actor, payload.data.draftedBy ?? null);
      return { stepId: step.id, stepIdx: step.stepIdx, tool: step.tool, status: step.status, compensationState: step.compensationState, compensationRef: step.compensationRef };
    }
  }
}

/**
 * Sends a correction a person approved: resumes its run and makes the pivot's approved `send_email`
 * calls in plan order. The gate lets each run once (COMMIT phase); a call already CONFIRMED is
 * replayed from the log; one left UNKNOWN by a timeout is reconciled by its key before anything is
 * sent, and stays unknown (the task is retried) rather than being resent blindly.
 */
async function sendCorrection(engine: WorkerEngine, task: ClaimedTask): Promise<Json> {
  const payload = ZSendCorrectionPayload.safeParse(task.payload);
  if (!payload.success) throw new TaskRefused("INVALID_PAYLOAD", "a SEND_CORRECTION task needs payload.correctionId and payload.messages (to, subject, body)");
  if (!engine.resume) throw new TaskRefused("NOT_SUPPORTED", "this worker's engine cannot resume runs; run the worker with a SagaEngine to send corrections");
  const run = await engine.resume(task.runId);
  if (run.run.status === "COMPLETED") return { correctionId: payload.data.correctionId, alreadySent: true };
  const sent: Json[] = [];
  for (const message of payload.data.messages) {
    const outcome = await run.call("send_email", message);
    if (outcome.status !== "ok") throw new TaskRefused("APPROVAL_REQUIRED", `the correction's send was not let through: ${outcome.message}`);
    sent.push({ to: message.to, stepIdx: outcome.stepIdx, stepKey: outcome.stepKey, messageId: outcome.externalRef, replayed: outcome.replayed });
  }
  await run.complete();
  return { correctionId: payload.data.correctionId, sent };
}

/**
 * Commits an approved plan whose agent went quiet: the same `commitPlan` an agent calls, so each
 * item runs once whoever else tries (the agent coming back, another worker after a lost lease):
 * done items are replayed from the log, an unsettled one is reconciled by its key first. A held
 * item (its policy changed since the approval) or a failed one fails the task for a person.
 */
async function commitPlan(engine: WorkerEngine, task: ClaimedTask): Promise<Json> {
  const payload = ZCommitPlanPayload.safeParse(task.payload);
  if (!payload.success) throw new TaskRefused("INVALID_PAYLOAD", "a COMMIT_PLAN task needs payload.pivotId (the approved pivot)");
  if (!engine.resume) throw new TaskRefused("NOT_SUPPORTED", "this worker's engine cannot resume runs; run the worker with a SagaEngine to commit plans");
  const run = await engine.resume(task.runId);
  const result = await run.commitPlan(payload.data.pivotId);
  if (result.status === "held") throw new TaskRefused("APPROVAL_REQUIRED", `plan item ${result.index} was held for a person: ${result.outcome.message}`);
  if (result.status === "already_committed") return { pivotId: result.pivotId, alreadyCommitted: true };
  return {
    pivotId: result.pivotId,
    runStatus: result.run.status,
    items: result.items.map((i) => ({ index: i.index, tool: i.tool, stepIdx: i.outcome.stepIdx, stepKey: i.outcome.stepKey, externalRef: i.outcome.externalRef, replayed: i.outcome.replayed })),
  };
}

/** What a task did, in a sentence for the worker's log. */
export function taskSummary(task: ClaimedTask, result: Json): string {
  if (task.kind === WorkerTaskKind.COMMIT_PLAN && result && typeof result === "object" && !Array.isArray(result)) {
    if (result.alreadyCommitted === true) return `the plan of pivot ${String(result.pivotId)} was already committed; nothing ran`;
    const items = Array.isArray(result.items) ? result.items : [];
    const ran = items.filter((i) => i && typeof i === "object" && !Array.isArray(i) && i.replayed === false).length;
    return `committed pivot ${String(result.pivotId)}: ${items.length} item(s), ${ran} run now, ${items.length - ran} already done; run ${task.runId} is ${String(result.runStatus)}`;
  }
  if (task.kind === WorkerTaskKind.UNWIND && result && typeof result === "object" && !Array.isArray(result)) {
    const r = result;
    const steps = (key: keyof UnwindReport, words: string) => {
      const v = r[key];
      return Array.isArray(v) && v.length > 0 ? `${words} ${v.join(", ")}` : null;
    };
    const parts = [
      steps("compensated", "compensated step(s)"),
      steps("compensationFailed", "compensation failed and escalated for step(s)"),
      steps("unresolved", "outcome still unknown (escalated) for step(s)"),
      steps("corrections", "correction drafted for step(s)"),
      steps("skipped", "nothing to undo for step(s)"),
    ].filter((p): p is string => p !== null);
    return `run ${task.runId} is ${String(r.status)} (${parts.length ? parts.join("; ") : "it had nothing to undo"})`;
  }
  if (task.kind === WorkerTaskKind.LOOKUP && result && typeof result === "object" && !Array.isArray(result)) {
    const lookup = result.lookup as { found?: unknown } | undefined;
    return `step ${task.stepId ?? "(none)"} ${lookup?.found === true ? "was found" : lookup?.found === false ? "was not found" : "could not be looked up"} in the real system`;
  }
  if (task.kind === WorkerTaskKind.RECONCILE && result && typeof result === "object" && !Array.isArray(result)) {
    return `step ${String(result.stepIdx)} (${String(result.tool)}) is ${String(result.status)}`;
  }
  return JSON.stringify(result);
}
