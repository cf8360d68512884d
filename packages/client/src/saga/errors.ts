/**
 * Errors a caller can act on. One class with a closed union of codes; every code has an HTTP status
 * (the map fails to compile when a code lacks one), and every message says what to do.
 */

/** The closed set of error codes. */
export const SagaErrorCode = {
  /** The tool is not registered. */
  UNKNOWN_TOOL: "UNKNOWN_TOOL",
  /** The arguments failed the tool's schema. */
  INVALID_ARGS: "INVALID_ARGS",
  /** A tool definition is incomplete (class, lookup or compensation missing). */
  INVALID_TOOL_DEFINITION: "INVALID_TOOL_DEFINITION",
  /** The run does not exist. */
  RUN_NOT_FOUND: "RUN_NOT_FOUND",
  /** The step does not exist. */
  STEP_NOT_FOUND: "STEP_NOT_FOUND",
  /** The pivot does not exist. */
  PIVOT_NOT_FOUND: "PIVOT_NOT_FOUND",
  /** The escalation does not exist. */
  ESCALATION_NOT_FOUND: "ESCALATION_NOT_FOUND",
  /** A different tool was called while the current step's outcome is unknown. */
  STEP_UNRESOLVED: "STEP_UNRESOLVED",
  /** Replay called a different tool at a recorded index. */
  DETERMINISM: "DETERMINISM",
  /** The run no longer accepts calls (unwinding, unwound, completed). */
  RUN_CLOSED: "RUN_CLOSED",
  /** The pivot was already decided, or the plan changed since the reviewer loaded it. */
  PIVOT_CONFLICT: "PIVOT_CONFLICT",
  /** Another writer changed the row first (fenced update matched nothing). */
  CONFLICT: "CONFLICT",
  /** The escalation is held by someone else, or already resolved. */
  ESCALATION_CONFLICT: "ESCALATION_CONFLICT",
  /** An admin disabled the tool in the tool table: no new calls are recorded. */
  TOOL_DISABLED: "TOOL_DISABLED",
  /** An outcome was reported for a step that is not in flight (not INTENDED): begin the call again. */
  STEP_NOT_IN_FLIGHT: "STEP_NOT_IN_FLIGHT",
  /** The run cannot be finished yet: a step is unsettled, or a confirmed effect is neither compensated nor escalated. */
  RUN_NOT_SETTLED: "RUN_NOT_SETTLED",
  /** The pivot named for a commit is not approved (pending, rejected, or superseded by a newer proposal). */
  PIVOT_NOT_APPROVED: "PIVOT_NOT_APPROVED",
  /** The approved plan was committed already: the run is COMPLETED. */
  PLAN_ALREADY_COMMITTED: "PLAN_ALREADY_COMMITTED",
  /** A call addressed to a plan item is not that item (another tool, or other arguments than approved). */
  PLAN_ITEM_MISMATCH: "PLAN_ITEM_MISMATCH",
  /** A plan item was called before an earlier item of the plan was done. */
  PLAN_ORDER: "PLAN_ORDER",
  /** An outcome report contradicts the outcome already recorded for the step (another externalRef, another status). */
  OUTCOME_CONFLICT: "OUTCOME_CONFLICT",
} as const;
export type SagaErrorCode = (typeof SagaErrorCode)[keyof typeof SagaErrorCode];

/** HTTP status for each code; `satisfies` makes a missing code a compile error. */
export const SAGA_ERROR_HTTP_STATUS = {
  UNKNOWN_TOOL: 404,
  INVALID_ARGS: 400,
  INVALID_TOOL_DEFINITION: 400,
  RUN_NOT_FOUND: 404,
  STEP_NOT_FOUND: 404,
  PIVOT_NOT_FOUND: 404,
  ESCALATION_NOT_FOUND: 404,
  STEP_UNRESOLVED: 409,
  DETERMINISM: 409,
  RUN_CLOSED: 409,
  PIVOT_CONFLICT: 409,
  CONFLICT: 409,
  ESCALATION_CONFLICT: 409,
  TOOL_DISABLED: 403,
  STEP_NOT_IN_FLIGHT: 409,
  RUN_NOT_SETTLED: 409,
  PIVOT_NOT_APPROVED: 409,
  PLAN_ALREADY_COMMITTED: 409,
  PLAN_ITEM_MISMATCH: 409,
  PLAN_ORDER: 409,
  OUTCOME_CONFLICT: 409,
} as const satisfies Record<SagaErrorCode, number>;

/** One problem with one field of an input. */
export interface FieldIssue {
  /** Dotted path of the offending field (`args.amount`), empty for the whole value. */
  path: string;
  /** What is wrong with it. */
  message: string;
}

/** An error the caller can act on. */
export class SagaError extends Error {
  constructor(
    readonly code: SagaErrorCode,
    message: string,
    /** Fields that were wrong, when the error is about input. */
    readonly issues: FieldIssue[] = [],
  ) {
    super(message);
    this.name = "SagaError";
  }

  /** The HTTP status that answers this error. */
  get httpStatus(): number {
    return SAGA_ERROR_HTTP_STATUS[this.code];
  }
}

/**
 * The tool's outcome is not known (timeout, reset, gateway error). The agent must not retry with new
 * arguments: the next call at this step reconciles against the real system first.
 */
export class ToolOutcomeUnknown extends Error {
  constructor(
    readonly tool: string,
    readonly stepIdx: number,
    readonly stepKey: string,
    override readonly cause?: unknown,
  ) {
    super(
      `The outcome of ${tool} (step ${stepIdx}) is unknown: it may or may not have happened. ` +
        `Do not change the arguments; calling ${tool} again reconciles with the real system first.`,
    );
    this.name = "ToolOutcomeUnknown";
  }
}

/**
 * Thrown by a tool when the provider said no and nothing happened (a 4xx). `retryable` marks refusals
 * that may pass later with the same key (rate limits), which the engine retries with backoff.
 */
export class ToolRejected extends Error {
  constructor(
    message: string,
    /** The provider's machine-readable reason. */
    readonly reason: string,
    /** True when the same call with the same key may succeed later. */
    readonly retryable = false,
  ) {
    super(message);
    this.name = "ToolRejected";
  }
}

/** The provider refused the call; the step is FAILED and recorded with this error. */
export class ToolCallFailed extends Error {
  constructor(
    readonly tool: string,
    readonly stepIdx: number,
    readonly reason: string,
    message: string,
  ) {
    super(`${tool} (step ${stepIdx}) was refused by the provider: ${message}`);
    this.name = "ToolCallFailed";
  }
}

/**
 * Thrown by a store whose server re-checked the gate and refused the intent (its tool table or the
 * run's pivots differ from what this process saw). The engine answers it as an `approval_required`
 * outcome, exactly as if its own gate had held the call.
 */
export class ApprovalRequiredError extends Error {
  constructor(
    message: string,
    /** The gate's reason (IRREVERSIBLE, NOT_IN_PLAN, POLICY_CHANGED, ...). */
    readonly reason: string,
    /** The escalation that holds the call, if one was raised. */
    readonly escalationId: string | null,
    /** The pivot concerned, if any. */
    readonly pivotId: string | null,
  ) {
    super(message);
    this.name = "ApprovalRequiredError";
  }
}
