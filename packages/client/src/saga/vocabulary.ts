/** The saga log's vocabularies: one doc line per value, one source for every layer. */

/** What a tool does to the world; every tool has exactly one. */
export const ToolClass = {
  /** No side effect (search, get, lookup): no saga row, retry freely. */
  PURE: "PURE",
  /** An effect nobody outside the run has seen (a draft): undone by a silent delete. */
  REVERSIBLE: "REVERSIBLE",
  /** A visible effect answered by a counter-action (refund, close); the original stays on record. */
  COMPENSATABLE: "COMPENSATABLE",
  /** Changes what people know (send email): no undo, only a human-gated correction. */
  IRREVERSIBLE: "IRREVERSIBLE",
} as const;
export type ToolClass = (typeof ToolClass)[keyof typeof ToolClass];
export const TOOL_CLASSES = Object.values(ToolClass);

/** Where a saga log row stands. */
export const StepStatus = {
  /** Committed before the call; the outcome is not known yet. */
  INTENDED: "INTENDED",
  /** The effect exists in the real system (the call said so, or reconcile found it). */
  CONFIRMED: "CONFIRMED",
  /** The provider said no: nothing happened. */
  FAILED: "FAILED",
  /** Timeout, reset, gateway error: the effect may or may not exist. */
  UNKNOWN: "UNKNOWN",
  /** Reconcile looked twice and the effect does not exist: the same key may be retried. */
  NOT_EXECUTED: "NOT_EXECUTED",
  /** The pre-written compensation ran and was confirmed by reading the real system back. */
  COMPENSATED: "COMPENSATED",
  /** The compensation could not be completed; an escalation says what is still out there. */
  COMPENSATION_FAILED: "COMPENSATION_FAILED",
} as const;
export type StepStatus = (typeof StepStatus)[keyof typeof StepStatus];
export const STEP_STATUSES = Object.values(StepStatus);

/** Rows whose outcome must be reconciled against the real system before anything else. */
export const UNSETTLED_STATUSES: readonly StepStatus[] = [StepStatus.INTENDED, StepStatus.UNKNOWN];

/** Where a row's compensation stands; requested is not confirmed. */
export const CompensationState = {
  /** Nothing has been attempted. */
  NONE: "NONE",
  /** The compensation was (or is about to be) sent under its own key; not yet read back. */
  REQUESTED: "REQUESTED",
  /** Reading the real system back showed the compensation in effect. */
  CONFIRMED: "CONFIRMED",
  /** The compensation was refused or could not be confirmed; escalated. */
  FAILED: "FAILED",
} as const;
export type CompensationState = (typeof CompensationState)[keyof typeof CompensationState];

/** Which part of the run a step was dispatched in. */
export const Phase = {
  /** Before the pivot is approved: only releasable effects may happen. */
  STAGING: "STAGING",
  /** After the pivot is approved: only approved plan items may run. */
  COMMIT: "COMMIT",
  /** A held call that a reviewer approved one by one from the escalation queue. */
  APPROVED_HOLD: "APPROVED_HOLD",
} as const;
export type Phase = (typeof Phase)[keyof typeof Phase];

/** Where a run stands. */
export const RunStatus = {
  /** Staging: the agent is working. */
  RUNNING: "RUNNING",
  /** A pivot was requested and waits for one human decision. */
  AWAITING_PIVOT: "AWAITING_PIVOT",
  /** The pivot was approved; the approved plan items are running. */
  COMMITTING: "COMMITTING",
  /** The agent finished the run. */
  COMPLETED: "COMPLETED",
  /** An unwind is in progress (or crashed and must be resumed). */
  UNWINDING: "UNWINDING",
  /** Every effect was compensated, released or answered. */
  UNWOUND: "UNWOUND",
  /** The unwind finished but people must act (failed compensation, unknown outcome, correction). */
  NEEDS_ATTENTION: "NEEDS_ATTENTION",
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];
export const RUN_STATUSES = Object.values(RunStatus);

/** Decision state of a pivot. */
export const PivotStatus = {
  /** Waiting for a reviewer. */
  PENDING: "PENDING",
  /** Approved: its plan items may run. */
  APPROVED: "APPROVED",
  /** Rejected with a reason that goes back to the agent. */
  REJECTED: "REJECTED",
} as const;
export type PivotStatus = (typeof PivotStatus)[keyof typeof PivotStatus];

/**
 * Why a reviewer rejected a pivot, from a closed list an agent can act on without reading prose
 * (the reason text says the rest). `REJECTION_NEXT_STEP` says what the agent is expected to do.
 */
export const PivotRejectionCode = {
  /** The calls are right but an argument is not (wording, amount): change it and propose again. */
  REVISE_ARGUMENTS: "REVISE_ARGUMENTS",
  /** A different action is wanted (store credit instead of a refund): plan again. */
  WRONG_ACTION: "WRONG_ACTION",
  /** Something the customer or a colleague must answer first: wait, then propose again. */
  NEEDS_INFORMATION: "NEEDS_INFORMATION",
  /** Against policy (over a limit, not allowed for this customer): do not retry it; unwind. */
  POLICY_VIOLATION: "POLICY_VIOLATION",
  /** The run should not go on at all: unwind what was staged. */
  DO_NOT_PROCEED: "DO_NOT_PROCEED",
  /** None of these: read the reason text. */
  OTHER: "OTHER",
} as const;
export type PivotRejectionCode = (typeof PivotRejectionCode)[keyof typeof PivotRejectionCode];
export const PIVOT_REJECTION_CODES = Object.values(PivotRejectionCode);

/** What an agent is expected to do after a rejection with each code. */
export const REJECTION_NEXT_STEP = {
  REVISE_ARGUMENTS: "revise",
  WRONG_ACTION: "revise",
  NEEDS_INFORMATION: "wait",
  POLICY_VIOLATION: "unwind",
  DO_NOT_PROCEED: "unwind",
  OTHER: "read_reason",
} as const satisfies Record<PivotRejectionCode, "revise" | "wait" | "unwind" | "read_reason">;

/** The kinds of item a person must handle (the escalation queue). */
export const EscalationKind = {
  /** An irreversible (or uncompensatable) call outside an approved pivot, held for approval. */
  APPROVAL_REQUIRED: "APPROVAL_REQUIRED",
  /** A compensation failed; the item carries what is still out there. */
  COMPENSATION_FAILED: "COMPENSATION_FAILED",
  /** Reconcile could not settle a step; a person records the outcome with evidence. */
  OUTCOME_UNKNOWN: "OUTCOME_UNKNOWN",
  /** A post-pivot step cannot complete by safe retries. */
  STUCK_AFTER_PIVOT: "STUCK_AFTER_PIVOT",
  /** Someone wanted to undo an action whose revocation window has closed. */
  REVOKE_OUT_OF_WINDOW: "REVOKE_OUT_OF_WINDOW",
} as const;
export type EscalationKind = (typeof EscalationKind)[keyof typeof EscalationKind];

/** Lifecycle of an escalation item. */
export const EscalationStatus = {
  /** Waiting for a person. */
  OPEN: "OPEN",
  /** One person holds it. */
  CLAIMED: "CLAIMED",
  /** Resolved; the resolution is in the audit log. */
  RESOLVED: "RESOLVED",
} as const;
export type EscalationStatus = (typeof EscalationStatus)[keyof typeof EscalationStatus];

/** Lifecycle of a correction message draft. */
export const CorrectionStatus = {
  /** Pre-written, waiting for support staff. */
  DRAFT: "DRAFT",
  /** A person approved it; its send (a logged irreversible step of its own run) is with the worker. */
  SENDING: "SENDING",
  /** Approved and sent (itself a logged irreversible step). */
  SENT: "SENT",
  /** Not needed: the audience never saw the original, or staff decided so. */
  DISMISSED: "DISMISSED",
} as const;
export type CorrectionStatus = (typeof CorrectionStatus)[keyof typeof CorrectionStatus];

/**
 * Blast radius of an audience, lowest first: internal effects are answered first and often
 * silently, customers last and only through a person.
 */
export function audienceRank(audience: readonly string[]): number {
  if (audience.some((a) => a === "customer" || a === "public")) return 2;
  if (audience.some((a) => a === "partner")) return 1;
  return 0;
}

/** True when someone outside the company could have seen the effect. */
export function isExternalAudience(audience: readonly string[]): boolean {
  return audienceRank(audience) > 0;
}

/** Where a tool stands in review in the tool table. */
export const ToolStatus = {
  /** Declared by its team, not yet accepted by an admin: every call is held for a person. */
  UNREVIEWED: "UNREVIEWED",
  /** Accepted by an admin (or registered by a connector the server runs): calls follow the row. */
  REVIEWED: "REVIEWED",
  /** Turned off by an admin: every new intent is refused, naming who disabled it. */
  DISABLED: "DISABLED",
} as const;
export type ToolStatus = (typeof ToolStatus)[keyof typeof ToolStatus];
export const TOOL_STATUSES = Object.values(ToolStatus);

/** Why a call needs a person before it may run. */
export const ApprovalReason = {
  /** The tool is irreversible and no approval covers this call. */
  IRREVERSIBLE: "IRREVERSIBLE",
  /** No compensation can be built for these arguments, so it is treated like irreversible. */
  COMPENSATION_UNBUILDABLE: "COMPENSATION_UNBUILDABLE",
  /** A pivot is waiting for its decision: nothing more may be staged or committed meanwhile. */
  PIVOT_PENDING: "PIVOT_PENDING",
  /** After the pivot, the call matches no approved plan item (tool + args hash). */
  NOT_IN_PLAN: "NOT_IN_PLAN",
  /** The tool's policy changed since the approval: the approval is stale. */
  POLICY_CHANGED: "POLICY_CHANGED",
  /** A reviewer rejected this held call. */
  REJECTED: "REJECTED",
  /** The approval of this exact call was already used (or a pivot covered it): a repeat needs a new one. */
  APPROVAL_USED: "APPROVAL_USED",
  /** The tool was declared by its team and no admin has reviewed it yet: every call is held. */
  UNREVIEWED: "UNREVIEWED",
  /** The tool table says every call of this tool needs a person, whatever its class. */
  ALWAYS_APPROVE: "ALWAYS_APPROVE",
} as const;

export type ApprovalReason = (typeof ApprovalReason)[keyof typeof ApprovalReason];
