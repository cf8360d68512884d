"use client";

// The pivot screen composes its parts, each in ./pivot/: the head, the facts, the plan table, what
// changed in the plan, the decision panel and its keys, the saving of an edit, the staged effects. The
// deliberate steps (the confirmation, the editor, the record of edits) are in ./pivot-decision.tsx.

import Link from "@/components/link";
import { useCallback, useRef, useState } from "react";
import { ZPivotDecisionResult, ZPivotScreen, type TPivotDecisionResult, type TPivotScreen } from "@/lib/desks/pivots/views";
import type { PivotRejectionCode } from "@/packages/client/src/saga/vocabulary";
import { errorMessage, postParsed, useLive } from "./live";
import { ApprovalConfirmation, EditHistory, PlanItemEditor, mustConfirm } from "./pivot-decision";
import { DecisionNotRecorded, ApprovalsSoFar, DecisionPanel } from "./pivot/decision-panel";
import { PivotFacts } from "./pivot/pivot-facts";
import { PivotHead } from "./pivot/pivot-head";
import { usePivotKeys } from "./pivot/pivot-keys";
import { PlanChangedRefusal, PlanRevisedNotice } from "./pivot/plan-changes";
import { editRecorded, editRefusal, postPlanItemEdit } from "./pivot/plan-item-edit";
import { PlanTable } from "./pivot/plan-table";
import { StagedEffects } from "./pivot/staged-effects";
import styles from "./reviewer.module.css";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";

/**
 * The pivot screen: one look decides. The plan shown (and the hash a decision is bound to) is the
 * one this page loaded (or the reviewer's own edit of it); polling keeps statuses and countdowns
 * current and says when the plan was revised or decided elsewhere, but never swaps the plan under
 * the reviewer's eyes. A plan that holds something nobody can take back asks for a second step.
 */
export function PivotScreen({ initial }: { initial: TPivotScreen }) {
  const pivotId = initial.pivot.id;
  const [loaded, setLoaded] = useState(initial);
  const { data: live, error, refetch } = useLive<TPivotScreen>(["pivot", pivotId], dashboardUrl(DashboardPath.getPivotScreen, { pivotId }), initial, ZPivotScreen);
  const [reason, setReason] = useState("");
  // No instruction until the reviewer picks one: a reason typed and sent with Ctrl+Enter reaches the
  // agent as typed ("read the reason"), never under an instruction nobody chose.
  const [reasonCode, setReasonCode] = useState<PivotRejectionCode>("OTHER");
  const [busy, setBusy] = useState<"approve" | "reject" | null>(null);
  const [result, setResult] = useState<TPivotDecisionResult | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [editing, setEditing] = useState<number | null>(null);
  const [editNote, setEditNote] = useState<string | null>(null);
  const reasonRef = useRef<HTMLTextAreaElement>(null);

  const pending = live.pivot.status === "PENDING";
  const approved = live.pivot.status === "APPROVED";
  const canDecide = live.abilities.canDecide && pending && live.run.status === "AWAITING_PIVOT";
  const revised = pending && live.pivot.planHash !== loaded.pivot.planHash;
  const irreversible = mustConfirm(loaded.plan);

  const decide = useCallback(
    async (approve: boolean) => {
      if (busy) return;
      if (!approve && !reason.trim()) {
        setFailure("Write a reason first: it goes back to the agent.");
        reasonRef.current?.focus();
        return;
      }
      setConfirming(false);
      setBusy(approve ? "approve" : "reject");
      setFailure(null);
      try {
        const url = dashboardUrl(approve ? DashboardPath.approvePivot : DashboardPath.rejectPivot, { pivotId });
        const body = approve ? { planHash: loaded.pivot.planHash } : { planHash: loaded.pivot.planHash, reason, reasonCode };
        setResult(await postParsed(url, ZPivotDecisionResult, body));
        await refetch();
      } catch (e) {
        setFailure(errorMessage(e));
      } finally {
        setBusy(null);
      }
    },
    [busy, reason, reasonCode, pivotId, loaded.pivot.planHash, refetch],
  );

  /** Approve: at once for a plan that can be undone, after a confirmation that names what cannot. */
  const approve = useCallback(() => {
    if (irreversible.length > 0) setConfirming(true);
    else void decide(true);
  }, [irreversible.length, decide]);

  usePivotKeys({ enabled: canDecide && !confirming && editing === null, approve, reasonRef });

  async function saveEdit(idx: number, args: unknown, note: string): Promise<string | null> {
    try {
      const outcome = await postPlanItemEdit(pivotId, loaded.pivot.planHash, idx, args, note);
      if (!outcome.ok) return editRefusal(outcome);
      setLoaded(outcome.screen);
      setEditing(null);
      setResult(null);
      setEditNote(editRecorded(idx, outcome.edit));
      await refetch();
      return null;
    } catch (e) {
      return errorMessage(e);
    }
  }

  const editingItem = editing === null ? undefined : loaded.plan[editing];

  return (
    <>
      <PivotHead pivotId={pivotId} loaded={loaded} live={live} error={error} />

      {canDecide && (
        <a href="#decision" className={styles.jumpToDecision}>
          Go to the decision ↓
        </a>
      )}

      {editNote && (
        <p className="banner info" role="status">
          {editNote}
        </p>
      )}
      {result?.ok === false && result.reason === "plan_changed" && <PlanChangedRefusal refusal={result} loaded={loaded} />}
      {result?.ok === false && result.reason !== "plan_changed" && <DecisionNotRecorded refusal={result} />}
      <ApprovalsSoFar screen={live} />
      {revised && !(result?.ok === false && result.reason === "plan_changed") && <PlanRevisedNotice loaded={loaded} live={live} />}

      <div className="decision-grid">
        <div className="decision-main">
          <PivotFacts loaded={loaded} live={live} irreversible={irreversible} />

          <section className="plan-section" aria-labelledby="plan">
            <h2 id="plan">
              {approved ? "What the approval lets the agent do" : pending ? "What approving lets the agent do" : "What the agent asked to do"}
              <span className="count">{loaded.plan.length}</span>
            </h2>
            <p className="muted small section-note">
              {approved
                ? "Only these calls, with exactly these arguments and policy versions, run after the approval; each runs once. Under each call: how it stands now."
                : pending
                  ? "Only these calls, with exactly these arguments and policy versions, may run after approval; each runs once. Irreversible calls are marked in magenta."
                  : "The pivot was rejected: none of these calls may run."}
              {canDecide && " You may edit an item's arguments (wording, a smaller amount) before approving: the agent then makes the edited call, and only that one."}
            </p>
            <PlanTable plan={loaded.plan} staged={live.staged} onEdit={canDecide && !revised ? (idx) => setEditing(idx) : null} committed={approved ? live.committed : null} />
            {editingItem && (
              <PlanItemEditor
                key={`${editingItem.idx}-${loaded.pivot.planHash}`}
                item={editingItem}
                onCancel={() => setEditing(null)}
                onSave={(args, note) => saveEdit(editingItem.idx, args, note)}
              />
            )}
            <EditHistory edits={loaded.pivot.edits} />
          </section>
        </div>

        <DecisionPanel
          screen={live}
          irreversible={irreversible}
          busy={busy}
          reason={reason}
          onReason={setReason}
          reasonCode={reasonCode}
          onReasonCode={setReasonCode}
          reasonRef={reasonRef}
          failure={failure}
          onApprove={approve}
          onReject={() => void decide(false)}
        />

        {/* Under both on a wide screen, before the decision on a phone (globals.css .decision-staged). */}
        <div className="decision-staged">
          <StagedEffects screen={live} />
        </div>
      </div>

      <ApprovalConfirmation open={confirming} items={irreversible} busy={busy === "approve"} onConfirm={() => void decide(true)} onCancel={() => setConfirming(false)} />

      {live.otherPivots.length > 0 && (
        <p className="muted small section">
          Other pivots of this run:{" "}
          {live.otherPivots.map((p, i) => (
            <span key={p.id}>
              {i > 0 && ", "}
              <Link href={`/pivots/${encodeURIComponent(p.id)}`}>{p.id}</Link> ({p.status.toLowerCase()})
            </span>
          ))}
        </p>
      )}
    </>
  );
}
