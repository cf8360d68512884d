/**
 * Reason codes as the sentences people read: what a reviewer told the agent with a rejection
 * (PivotRejectionCode) and why a call was held (ApprovalReason). One place, read by the pivot screen,
 * the escalation desk and the audit log's labelled values, so no screen shows DO_NOT_PROCEED.
 */
import type { ApprovalReason, PivotRejectionCode } from "@/packages/client/src/saga/vocabulary";

/** What a reviewer tells the agent to do with each rejection code, in words. */
export const REJECTION_CODE_LABELS: Record<PivotRejectionCode, string> = {
  REVISE_ARGUMENTS: "Change an argument and propose again",
  WRONG_ACTION: "Do something else: plan again",
  NEEDS_INFORMATION: "Wait for information, then propose again",
  POLICY_VIOLATION: "Against policy: do not retry, unwind",
  DO_NOT_PROCEED: "Stop: unwind what was staged",
  OTHER: "No instruction: read the reason",
};

/** Why a call was held (or refused at the gate), in words. */
export const APPROVAL_REASON_WORDS: Record<ApprovalReason, string> = {
  IRREVERSIBLE: "it cannot be taken back and no approved pivot covers it",
  COMPENSATION_UNBUILDABLE: "no undo can be built for these arguments",
  PIVOT_PENDING: "a pivot of its run waits for a decision",
  NOT_IN_PLAN: "it is not in the approved plan",
  POLICY_CHANGED: "its tool's policy changed since the approval",
  REJECTED: "a reviewer rejected it",
  APPROVAL_USED: "its approval was already used",
  UNREVIEWED: "its tool has not been reviewed by an admin yet",
  ALWAYS_APPROVE: "the tool table says every call needs a person",
};
