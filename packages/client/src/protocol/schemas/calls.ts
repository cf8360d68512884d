/** Wire schemas of the call commands (packages/client/src/protocol/contracts/calls.ts). */
import * as z from "zod";
import type { BeginCallAnswer, CallOutcomeReport, ReconcileReport, StepCompensateAction, UnwindAction } from "../../saga/messages";
import { ApprovalReason } from "../../saga/vocabulary";
import type { StepRecord } from "../../saga/store";
import { ZCompensationPlan, ZCorrectionDraft, ZJson, ZStepWire, toWire } from "./saga";

export const ZApprovalReason = z.enum(Object.values(ApprovalReason) as [ApprovalReason, ...ApprovalReason[]]).meta({ id: "ApprovalReason" });

/** What to send the provider with the call, so a retry is deduplicated and reconcile can find it. */
export const ZSendWire = z
  .object({
    idempotencyKey: z.string().describe("Send it as the provider's idempotency key (Stripe's Idempotency-Key header, an external id)."),
    header: z.string().describe("The header to carry it in when the provider takes one."),
    metadata: z.record(z.string(), z.string()).describe("Attach as metadata / labels / tags, so the effect can be looked up by key."),
  })
  .meta({ id: "SendToProvider" });

/** Where the caller's next call goes: the one number a client keeps. */
const NextCursor = z
  .number()
  .int()
  .describe(
    "The cursor to send with the next call. After `call`, it holds once you report `confirmed` or `failed` (the outcome's answer repeats it); after an `unknown` outcome, call the same tool again at `cursor`.",
  );

/** The previous call's step as its outcome sent with this request left it. */
export const ZPreviousRecorded = z
  .object({ step: ZStepWire })
  .optional()
  .describe("Present when the request carried `previous`: that step as recorded (CONFIRMED, FAILED or UNKNOWN; a repeat gets the row as it stands).");

export const ZCallAnswerWire = z
  .discriminatedUnion("answer", [
    z.object({
      answer: z.literal("call").describe("The intent is recorded: make the call now, with `send`, then report the outcome."),
      cursor: z.number().int().describe("Where the caller stands after this answer: past the step for replay and failed; at it for call, reconcile and held."),
      nextCursor: NextCursor,
      previous: ZPreviousRecorded,
      step: ZStepWire,
      send: ZSendWire,
    }),
    z.object({
      answer: z.literal("replay").describe("The step already happened: use the recorded result, do not call."),
      cursor: z.number().int().describe("Where the caller stands after this answer: past the step for replay and failed; at it for call, reconcile and held."),
      nextCursor: NextCursor,
      previous: ZPreviousRecorded,
      step: ZStepWire,
    }),
    z.object({
      answer: z.literal("failed").describe("The provider refused this step earlier: the recorded failure stands, do not call."),
      cursor: z.number().int().describe("Where the caller stands after this answer: past the step for replay and failed; at it for call, reconcile and held."),
      nextCursor: NextCursor,
      previous: ZPreviousRecorded,
      step: ZStepWire,
    }),
    z.object({
      answer: z.literal("reconcile").describe("An earlier attempt's outcome is unknown: look the key up in the provider, then report found/absent."),
      cursor: z.number().int().describe("Where the caller stands after this answer: past the step for replay and failed; at it for call, reconcile and held."),
      nextCursor: NextCursor,
      previous: ZPreviousRecorded,
      step: ZStepWire,
      lookup: z.object({ stepKey: z.string(), tool: z.string(), args: ZJson, recheckAfterMs: z.number().int() }),
    }),
    z.object({
      answer: z.literal("held").describe("A person decides first: wait for the pivot or the held call's escalation, then call again."),
      cursor: z.number().int().describe("Where the caller stands after this answer: past the step for replay and failed; at it for call, reconcile and held."),
      nextCursor: NextCursor,
      previous: ZPreviousRecorded,
      reason: ZApprovalReason,
      message: z.string(),
      escalationId: z.string().nullable(),
      pivotId: z.string().nullable(),
    }),
  ])
  .meta({ id: "CallAnswer" });

const OUTCOMES = [
  z.object({
    outcome: z.literal("confirmed"),
    externalRef: z.string().max(300).nullable(),
    result: ZJson,
    attempts: z.number().int().min(1).max(100).default(1),
  }),
  z.object({
    outcome: z.literal("failed").describe("The provider said no (a 4xx): nothing happened."),
    reason: z.string().min(1).max(100),
    message: z.string().max(2000),
    retryable: z.boolean().default(false),
    attempts: z.number().int().min(1).max(100).default(1),
  }),
  z.object({
    outcome: z.literal("unknown").describe("Timeout, reset, 5xx: it may or may not have happened."),
    message: z.string().max(2000),
    attempts: z.number().int().min(1).max(100).default(1),
  }),
] as const;

export const ZOutcomeBody = z.discriminatedUnion("outcome", OUTCOMES).meta({ id: "Outcome" });

const PreviousStepId = z.string().min(1).max(80).describe("The step in flight whose outcome this is: the `step.id` of the previous call's `call` answer.");

/**
 * An outcome sent with the next command instead of on its own (POST /steps/{id}/outcome): the same
 * fields plus the step's id. The server records it first, as its own commit, then does the command.
 */
export const ZPreviousOutcome = z
  .discriminatedUnion("outcome", [OUTCOMES[0].extend({ stepId: PreviousStepId }), OUTCOMES[1].extend({ stepId: PreviousStepId }), OUTCOMES[2].extend({ stepId: PreviousStepId })])
  .describe(
    "The outcome of the previous call, reported with this request so a step costs one round trip. Recorded first, exactly as POST /steps/{stepId}/outcome would (a repeat is answered from the log); " +
      "when it is refused (STEP_NOT_IN_FLIGHT, OUTCOME_CONFLICT) nothing of this request is done and the error names `previous`.",
  )
  .meta({ id: "PreviousOutcome" });

/** The body of POST /runs/{id}/complete: nothing, or the last call's outcome. */
export const ZCompleteRunBody = z.object({ previous: ZPreviousOutcome.optional() }).meta({ id: "CompleteRun" });

export const ZBeginCallBody = z
  .object({
    tool: z.string().min(1).max(64),
    args: ZJson,
    cursor: z
      .number()
      .int()
      .min(0)
      .max(100_000)
      .optional()
      .describe("0 after a (re)start, then the `nextCursor` of the previous answer. Required unless `planItem` names the call."),
    planItem: z
      .object({
        pivotId: z.string().min(1).max(80).describe("The approved pivot."),
        index: z.number().int().min(0).max(10_000).describe("The item's place in the pivot's plan, from 0."),
      })
      .strict()
      .optional()
      .describe(
        "Commit one item of an approved plan instead of calling at a cursor: the step is found by the pivot and the item's place, so a fresh process commits without replaying earlier steps. " +
          "`tool` and `args` must be the item's as approved. Send items in plan order, then complete the run.",
      ),
    compensation: ZCompensationPlan.nullable().optional().describe("The compensator's call, pre-written (REVERSIBLE / COMPENSATABLE tools)."),
    correction: ZCorrectionDraft.nullable().optional().describe("The correction an irreversible effect would need (default: the tool table's template)."),
    audience: z.array(z.string().min(1).max(40)).max(20).optional().describe("Who sees the effect (default: the tool table's audience)."),
    previous: ZPreviousOutcome.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.cursor === undefined && body.planItem === undefined) ctx.addIssue({ code: "custom", path: ["cursor"], message: "send the cursor (0 after a restart), or planItem to commit an approved plan's item" });
    if (body.cursor !== undefined && body.planItem !== undefined) ctx.addIssue({ code: "custom", path: ["planItem"], message: "send either cursor or planItem, not both: a plan item is found by its pivot, not by the cursor" });
  })
  .meta({ id: "BeginCall" });


export const ZReconcileBody = z
  .discriminatedUnion("found", [
    z.object({ found: z.literal(true), externalRef: z.string().max(300).nullable(), result: ZJson, lookups: z.number().int().min(1).max(10).default(1) }),
    z.object({
      found: z.literal(false).describe("Absent twice, `recheckAfterMs` apart (search indexes lag): it never happened, and a retry reuses the key."),
      lookups: z.number().int().min(2).max(10),
    }),
    z.object({ found: z.null().describe("The lookup itself kept failing: a person decides (OUTCOME_UNKNOWN escalation)."), message: z.string().max(2000), attempts: z.number().int().min(1).max(100) }),
  ])
  .meta({ id: "ReconcileResult" });


/** A call's answer on the wire: what to send the provider with a `call`, what to look up for a `reconcile`. */
export function callAnswerWire(result: BeginCallAnswer & { previous?: StepRecord }): z.input<typeof ZCallAnswerWire> {
  const { previous: previousStep, ...answer } = result;
  const previous = previousStep ? { previous: { step: toWire(previousStep) } } : {};
  if (answer.kind === "held") {
    const { kind, ...held } = answer;
    return { answer: kind, ...held, nextCursor: answer.cursor, ...previous };
  }
  const base = { cursor: answer.cursor, nextCursor: nextCursorOf(answer), step: toWire(answer.step), ...previous };
  if (answer.kind === "call") {
    const key = answer.step.stepKey;
    return { answer: "call", ...base, send: { idempotencyKey: key, header: "Idempotency-Key", metadata: { sagaboard_run: answer.step.runId, sagaboard_step_key: key } } };
  }
  if (answer.kind === "reconcile") {
    return { answer: "reconcile", ...base, lookup: { stepKey: answer.step.stepKey, tool: answer.step.tool, args: answer.step.args, recheckAfterMs: RECHECK_AFTER_MS } };
  }
  return { answer: answer.kind, ...base };
}

/** The cursor after this answer: past a settled step (or one about to be settled by the caller's report), at an unsettled one. */
function nextCursorOf(answer: Exclude<BeginCallAnswer, { kind: "held" }>): number {
  return answer.kind === "reconcile" ? answer.step.stepIdx : answer.step.stepIdx + 1;
}

/** The cursor after an outcome report: past the step once it is settled, at it while its outcome is unknown. */
export function nextCursorAfter(step: { stepIdx: number; status: string }): number {
  return step.status === "INTENDED" || step.status === "UNKNOWN" ? step.stepIdx : step.stepIdx + 1;
}

/** How long an agent pauses between the two lookups of a reconcile (search indexes lag). */
export const RECHECK_AFTER_MS = 2000;

/** The reconcile body as the saga's report. */
export function reconcileReport(body: z.output<typeof ZReconcileBody>): ReconcileReport {
  if (body.found === true) return { kind: "found", externalRef: body.externalRef, result: body.result, lookups: body.lookups };
  if (body.found === false) return { kind: "absent", lookups: body.lookups, recheckAfterMs: RECHECK_AFTER_MS };
  return { kind: "lookup_failed", message: body.message, attempts: body.attempts };
}

/** The saga's reconcile report as the body (the inverse of `reconcileReport`): what a client or worker sends. */
export function reconcileBody(report: ReconcileReport): z.input<typeof ZReconcileBody> {
  if (report.kind === "found") return { found: true, externalRef: report.externalRef, result: report.result, lookups: report.lookups };
  if (report.kind === "absent") return { found: false, lookups: report.lookups };
  return { found: null, message: report.message, attempts: report.attempts };
}

/** The saga's outcome report as the body (the inverse of `outcomeReport`), with the attempts made. */
export function outcomeBody(outcome: CallOutcomeReport, attempts: number): z.input<typeof ZOutcomeBody> {
  if (outcome.kind === "confirmed") return { outcome: "confirmed", externalRef: outcome.externalRef, result: outcome.result, attempts };
  if (outcome.kind === "failed") return { outcome: "failed", reason: outcome.reason, message: outcome.message, retryable: outcome.retryable, attempts };
  return { outcome: "unknown", message: outcome.message, attempts };
}

/** The outcome body as the saga's report, plus the attempts made. */
export function outcomeReport(body: z.output<typeof ZOutcomeBody>): CallOutcomeReport & { attempts: number } {
  if (body.outcome === "confirmed") return { kind: "confirmed", externalRef: body.externalRef, result: body.result, attempts: body.attempts };
  if (body.outcome === "failed") return { kind: "failed", reason: body.reason, message: body.message, retryable: body.retryable, attempts: body.attempts };
  return { kind: "unknown", message: body.message, attempts: body.attempts };
}

/** `previous` of a call or a completion as the saga's report of that step. */
export function previousOutcome<T extends { previous?: z.output<typeof ZPreviousOutcome> }>(body: T | undefined): (CallOutcomeReport & { attempts: number; stepId: string }) | undefined {
  const previous = body?.previous;
  return previous ? { ...outcomeReport(previous), stepId: previous.stepId } : undefined;
}

/** The next thing a worker does for an unwind (POST /runs/{runId}/unwind/next). */
const ReconcileActionWire = z.object({
  action: z.literal("reconcile").describe("Look the step's key up, then report it on /steps/{stepId}/reconcile."),
  step: ZStepWire,
  lookup: z.object({ stepKey: z.string(), tool: z.string(), args: ZJson, recheckAfterMs: z.number().int() }),
});

const CompensateActionWire = z.object({
  action: z.literal("compensate").describe("Send the compensation under its key, read the real system back, report on /steps/{stepId}/compensation."),
  step: ZStepWire,
  compensation: ZCompensationPlan,
  compensationKey: z.string(),
  verifyFirst: z.boolean().describe("It was requested before (a crash): read the real system back before sending it again."),
  target: z.object({ stepKey: z.string(), externalRef: z.string().nullable(), tool: z.string(), args: ZJson }),
});

export const ZUnwindActionWire = z
  .discriminatedUnion("action", [
    ReconcileActionWire,
    CompensateActionWire,
    z.object({
      action: z.literal("done").describe("Nothing needs a connector any more; the run is UNWOUND or NEEDS_ATTENTION."),
      status: z.string(),
      compensated: z.array(z.number().int()),
      compensationFailed: z.array(z.number().int()),
      corrections: z.array(z.number().int()),
      unresolved: z.array(z.number().int()).describe("Steps whose outcome is still unknown (a person was asked)."),
      skipped: z.array(z.number().int()).describe("Steps with nothing to undo, answered by hand, or left as they are (skipStepIds)."),
    }),
  ])
  .meta({ id: "UnwindAction" });

/** The next thing a worker does to pull back one step (POST /steps/{stepId}/compensate/next). */
export const ZStepCompensateActionWire = z
  .discriminatedUnion("action", [
    ReconcileActionWire,
    CompensateActionWire,
    z.object({
      action: z.literal("done").describe("Nothing needs a connector any more: the step as it ends (COMPENSATED, COMPENSATION_FAILED and escalated, or answered by a correction draft)."),
      step: ZStepWire,
    }),
  ])
  .meta({ id: "StepCompensateAction" });

export const ZCompensationReportBody = z
  .discriminatedUnion("done", [
    z.object({ done: z.literal(true).describe("Read back: the compensation is in effect."), compensationRef: z.string().max(300).nullable().default(null), how: z.string().max(100).default("read back") }),
    z.object({
      done: z.literal(false).describe("Refused, or still not in effect after the retries: recorded with what is still out there, and escalated."),
      reason: z.string().min(1).max(100),
      message: z.string().max(2000),
      remaining: ZJson.nullable().default(null),
    }),
  ])
  .meta({ id: "CompensationReport" });

/** An action only a connector can do, on the wire. */
function connectorActionWire(action: Exclude<UnwindAction, { kind: "done" }>): z.input<typeof ReconcileActionWire> | z.input<typeof CompensateActionWire> {
  const step = toWire(action.step);
  if (action.kind === "reconcile") {
    return { action: "reconcile", step, lookup: { stepKey: action.step.stepKey, tool: action.step.tool, args: action.step.args, recheckAfterMs: RECHECK_AFTER_MS } };
  }
  const { stepKey, externalRef, tool, args } = action.step;
  return { action: "compensate", step, compensation: action.compensation, compensationKey: action.compensationKey, verifyFirst: action.verifyFirst, target: { stepKey, externalRef, tool, args } };
}

/** An unwind action on the wire. */
export function unwindActionWire(action: UnwindAction): z.input<typeof ZUnwindActionWire> {
  if (action.kind !== "done") return connectorActionWire(action);
  const { status, compensated, compensationFailed, corrections, unresolved, skipped } = action.report;
  return { action: "done", status, compensated, compensationFailed, corrections, unresolved, skipped };
}

/** A step's compensate action on the wire. */
export function stepCompensateActionWire(action: StepCompensateAction): z.input<typeof ZStepCompensateActionWire> {
  return action.kind === "done" ? { action: "done", step: toWire(action.step) } : connectorActionWire(action);
}
