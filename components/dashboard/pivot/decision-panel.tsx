"use client";

// The pivot screen's decision: the panel where a reviewer approves, or rejects with a code and a reason
// the agent reads (or, once decided, who decided what and why), and what the page says when a
// decision was not recorded because someone decided first or the run stopped waiting.

import { runStatusInWords } from "@/lib/desks/dashboard/run-status-words";
import type { Ref } from "react";
import { StatusBadge, Time } from "@/components/saga-display";
import type { TPivotDecisionResult, TPivotScreen, TPlanItemView } from "@/lib/desks/pivots/views";
import { PIVOT_REJECTION_CODES, type PivotRejectionCode } from "@/packages/client/src/saga/vocabulary";
import { REJECTION_CODE_LABELS } from "@/components/dashboard/labels";
import { FormError } from "@/components/section";
import styles from "@/components/dashboard/reviewer.module.css";

/** What the decision panel is given: the live screen, the reviewer's draft of a rejection, and what the buttons do. */
export interface DecisionPanelProps {
  /** The screen as polled: the pivot's status and decision, the run's status, what the reviewer may do. */
  screen: TPivotScreen;
  /** The plan's calls nobody can take back: approving names them and asks to confirm. */
  irreversible: TPlanItemView[];
  /** Which decision is being sent, if one is. */
  busy: "approve" | "reject" | null;
  /** The reason for the agent, as typed. */
  reason: string;
  /** The reason changed. */
  onReason: (reason: string) => void;
  /** What the agent is told to do on a rejection. */
  reasonCode: PivotRejectionCode;
  /** The code changed. */
  onReasonCode: (code: PivotRejectionCode) => void;
  /** The reason box, for the `r` key. */
  reasonRef: Ref<HTMLTextAreaElement>;
  /** Why the last decision could not be sent, or null. */
  failure: string | null;
  /** Approve (the screen asks to confirm first when something cannot be taken back). */
  onApprove: () => void;
  /** Reject with the code and reason. */
  onReject: () => void;
}

/** The decision panel: approve or reject (a reviewer, while the run waits), or how the pivot was decided. */
export function DecisionPanel({ screen, irreversible, busy, reason, onReason, reasonCode, onReasonCode, reasonRef, failure, onApprove, onReject }: DecisionPanelProps) {
  const pending = screen.pivot.status === "PENDING";
  return (
    <section id="decision" className={`decide-panel ${styles.decidePanel}`} aria-label="Decision" tabIndex={-1}>
      {!pending ? (
        <div className={screen.pivot.status === "APPROVED" ? "decided approved" : "decided rejected"}>
          <strong>{screen.pivot.status === "APPROVED" ? "Approved" : "Rejected"}</strong> by {screen.pivot.decidedBy ?? "someone"} at <Time at={screen.pivot.decidedAt} /> UTC
          {screen.pivot.reasonCode && screen.pivot.reasonCode !== "OTHER" ? (
            <>
              <p className="body-text">The agent was told: {REJECTION_CODE_LABELS[screen.pivot.reasonCode] ?? screen.pivot.reasonCode}.</p>
              {screen.pivot.reason && <p className="body-text">Reason: {screen.pivot.reason}</p>}
            </>
          ) : (
            screen.pivot.reason && <p className="body-text" data-testid="agent-was-told">The agent was told, in your words: “{screen.pivot.reason}”</p>
          )}
        </div>
      ) : screen.run.status !== "AWAITING_PIVOT" ? (
        <p className="muted">
          The run is <StatusBadge status={screen.run.status} /> and no longer waits for this pivot; there is nothing to decide.
        </p>
      ) : !screen.abilities.canDecide ? (
        <p className="muted">You can read this pivot. Deciding it needs the reviewer role.</p>
      ) : (
        <>
          {irreversible.length > 0 && (
            <p className="warn-line">
              Approving lets {irreversible.length === 1 ? "a call that cannot be taken back" : `${irreversible.length} calls that cannot be taken back`} run:{" "}
              {irreversible.map((i) => i.tool).join(", ")}. You will be asked to confirm.
            </p>
          )}
          <button type="button" className="button approve" onClick={onApprove} disabled={busy !== null}>
            {busy === "approve" ? "Approving…" : irreversible.length > 0 ? "Approve…" : "Approve"} <kbd>a</kbd>
          </button>
          <form
            className="reject-form"
            onSubmit={(event) => {
              event.preventDefault();
              onReject();
            }}
          >
            <label htmlFor="reject-code">What should the agent do?</label>
            <select id="reject-code" value={reasonCode} onChange={(event) => onReasonCode(event.target.value as PivotRejectionCode)}>
              {PIVOT_REJECTION_CODES.map((code) => (
                <option key={code} value={code}>
                  {REJECTION_CODE_LABELS[code] ?? code}
                </option>
              ))}
            </select>
            <label htmlFor="reject-reason">Reason for the agent (required to reject)</label>
            <textarea
              id="reject-reason"
              ref={reasonRef}
              value={reason}
              rows={3}
              onChange={(event) => onReason(event.target.value)}
              onKeyDown={(event) => {
                if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
                  event.preventDefault();
                  onReject();
                }
                if (event.key === "Escape") event.currentTarget.blur();
              }}
              placeholder="e.g. Do not capture: the customer asked for store credit instead."
            />
            <button type="submit" className="button reject" disabled={busy !== null || !reason.trim()}>
              {busy === "reject" ? "Rejecting…" : "Reject"} <kbd>r</kbd>
            </button>
          </form>
          <p className="kbd-hint">
            Keyboard: <kbd>a</kbd> approves{irreversible.length > 0 ? " (then Enter confirms)" : ""} · <kbd>r</kbd> goes to the reason · <kbd>Ctrl</kbd>+<kbd>Enter</kbd> rejects · <kbd>Esc</kbd> leaves the box
          </p>
        </>
      )}
      <FormError message={failure} />
    </section>
  );
}

/** Who approved this plan so far, when it needs two people (the tool table says so for one of its tools). */
export function ApprovalsSoFar({ screen }: { screen: TPivotScreen }) {
  const { needed, given, twoApproverTools } = screen.approvals;
  if (needed < 2 || screen.pivot.status !== "PENDING") return null;
  return (
    <div className="banner info" role="status" data-testid="approvals-so-far">
      <span>
        <strong>Two approvers:</strong> {twoApproverTools.join(", ")} {twoApproverTools.length === 1 ? "needs" : "need"} two different people&rsquo;s approvals of this plan.{" "}
        {given.length === 0 ? (
          "Nobody has approved it yet."
        ) : (
          <>
            Approved by {given.map((g, i) => (
              <span key={g.by}>
                {i > 0 ? ", " : ""}
                <strong>{g.by}</strong> ({g.via}, <Time at={g.at} /> UTC)
              </span>
            ))}{" "}
            ({given.length} of {needed}): the next approval, by someone else, decides.
          </>
        )}
      </span>
    </div>
  );
}

/** A decision that was not recorded: someone decided the pivot first, or the run no longer waits for it. */
export function DecisionNotRecorded({ refusal }: { refusal: Extract<TPivotDecisionResult, { reason: "already_decided" | "run_not_waiting" | "second_approver_needed" | "same_approver" }> }) {
  if ("approvals" in refusal && refusal.reason === "second_approver_needed") {
    return (
      <p className="banner info" role="status" data-testid="first-approval">
        Your approval is recorded ({refusal.approvals.given.length} of {refusal.approvals.needed}). The plan holds {refusal.approvals.twoApproverTools.join(", ")}, which needs a second
        approval by another reviewer; nothing runs until then.
      </p>
    );
  }
  if ("approvals" in refusal) {
    return (
      <p className="banner bad" role="alert" data-testid="same-approver">
        You already approved this plan; the second approval must come from another reviewer. Nothing was recorded.
      </p>
    );
  }
  return refusal.reason === "already_decided" ? (
    <p className="banner info" role="status">
      {refusal.pivot.decidedBy ?? "Someone"} already {refusal.pivot.status.toLowerCase()} this pivot; your decision was not recorded.
    </p>
  ) : (
    <p className="banner info" role="status">
      The run is {runStatusInWords(refusal.runStatus)} and no longer waits for this pivot; nothing was decided.
    </p>
  );
}
