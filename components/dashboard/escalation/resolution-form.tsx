"use client";

// Resolving an escalation: the form of its kind (approve or reject a held call, settle an unknown
// outcome, record a repair, decide a stuck run, say what was done instead of a late revoke), shown to
// the person holding the item, with the evidence a check of the real system found written in for them.

import { useState, type FormEvent } from "react";
import { ZResolveResult, type TEscalationDetail, type TRealSystemCheck, type TResolveResult } from "@/lib/desks/escalations/views";
import { PIVOT_REJECTION_CODES, type PivotRejectionCode } from "@/packages/client/src/saga/vocabulary";
import { errorMessage, postParsed } from "@/components/dashboard/live";
import { REJECTION_CODE_LABELS } from "@/components/dashboard/labels";
import { ApprovalConfirmation, type ConfirmItem } from "@/components/dashboard/pivot-decision";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { FormError } from "@/components/section";
import { systemInWords } from "@/lib/server/tools/tool-systems";

/** `ticketId SUP-12, status open` for an object; JSON otherwise. */
function describe(value: unknown): string {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    return Object.entries(value)
      .map(([k, v]) => `${k} ${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join(", ");
  }
  return JSON.stringify(value);
}

/** A sentence of evidence from a check, for the settle form. */
function evidenceFrom(check: TRealSystemCheck): string {
  const at = `${check.checkedAt.slice(0, 19).replace("T", " ")} UTC by ${check.checkedBy}`;
  if (check.found) return `Lookup of key ${check.stepKey} in ${systemInWords(check.system, check.tool)} at ${at} found ${check.externalRef ?? "the effect"} (${describe(check.result)}).`;
  if (check.error) return "";
  return `Lookup of key ${check.stepKey} in ${systemInWords(check.system, check.tool)} at ${at} found nothing (${check.lookups} lookups, search lag allowed for).`;
}

/** What the form says when the server did not record a resolution; null when it did. */
function resolveMessage(result: TResolveResult): string | null {
  if (result.ok) return null;
  if (result.reason === "resolved") return `Already resolved by ${result.resolvedBy ?? "someone"}; your resolution was not recorded.`;
  return result.heldBy ? `Only ${result.heldBy}, who holds this item, can resolve it.` : "Claim the item first: only the person holding it can resolve it.";
}

/** The resolution form of the escalation's kind (shown to the claimer only). */
export function ResolutionForm({ detail, check, onDone }: { detail: TEscalationDetail; check: TRealSystemCheck | null; onDone: (message: string | null) => void }) {
  const kind = detail.escalation.kind;
  const [approve, setApprove] = useState<boolean | null>(null);
  const [reasonCode, setReasonCode] = useState<PivotRejectionCode>("OTHER");
  const [note, setNote] = useState("");
  const [outcome, setOutcome] = useState<"CONFIRMED" | "NOT_EXECUTED" | null>(null);
  const [evidence, setEvidence] = useState("");
  const [externalRef, setExternalRef] = useState("");
  const [repairRef, setRepairRef] = useState("");
  const [decision, setDecision] = useState<"completed_manually" | "abandoned" | "commit_by_worker" | "unwind" | null>(null);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [usedCheck, setUsedCheck] = useState<string | null>(null);

  // Pre-fill the settle form from a new check (once per check), leaving what the person typed otherwise.
  if (check && usedCheck !== check.checkedAt && kind === "OUTCOME_UNKNOWN") {
    setUsedCheck(check.checkedAt);
    if (!check.error) {
      setOutcome(check.found ? "CONFIRMED" : "NOT_EXECUTED");
      setEvidence(evidenceFrom(check));
      setExternalRef(check.externalRef ?? "");
    }
  }

  const body = (() => {
    switch (kind) {
      case "APPROVAL_REQUIRED":
        return approve === null ? null : { kind, approve, ...(note.trim() ? { note } : {}), ...(approve ? {} : { reasonCode }) };
      case "OUTCOME_UNKNOWN":
        return outcome === null ? null : { kind, outcome, evidence, externalRef: outcome === "CONFIRMED" && externalRef.trim() ? externalRef.trim() : null };
      case "COMPENSATION_FAILED":
        return { kind, note, repairRef: repairRef.trim() || null };
      case "STUCK_AFTER_PIVOT":
        return decision === null ? null : { kind, decision, note };
      case "REVOKE_OUT_OF_WINDOW":
        return { kind, note };
    }
  })();
  const ready =
    body !== null &&
    (kind === "APPROVAL_REQUIRED" ? approve === true || note.trim() !== "" : kind === "OUTCOME_UNKNOWN" ? evidence.trim() !== "" : note.trim() !== "");

  // Letting a held call run that nobody can take back asks once more, naming the call and who sees it.
  const held = detail.heldCall;
  const confirmItems: ConfirmItem[] =
    kind === "APPROVAL_REQUIRED" && approve === true && held && held.toolClass !== "REVERSIBLE" && held.toolClass !== "COMPENSATABLE"
      ? [{ idx: 0, tool: held.tool, args: held.args, audience: held.audience, audienceSource: held.audienceSource }]
      : [];
  const [confirming, setConfirming] = useState(false);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!body || !ready) return;
    if (confirmItems.length > 0) setConfirming(true);
    else void send();
  }

  async function send() {
    if (!body || !ready) return;
    setBusy(true);
    setFailure(null);
    try {
      const result: TResolveResult = await postParsed(dashboardUrl(DashboardPath.resolveEscalation, { escalationId: detail.escalation.id }), ZResolveResult, body);
      const message = resolveMessage(result);
      if (message) setFailure(message);
      onDone(message);
    } catch (e) {
      setFailure(errorMessage(e));
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  }

  return (
    <form className="resolve-form" onSubmit={submit}>
      <ApprovalConfirmation open={confirming} items={confirmItems} busy={busy} onConfirm={() => void send()} onCancel={() => setConfirming(false)} />
      {kind === "APPROVAL_REQUIRED" && (
        <fieldset>
          <legend>Decision</legend>
          <label className="choice">
            <input type="radio" name="approve" checked={approve === true} onChange={() => setApprove(true)} /> Approve: let this exact call run once
          </label>
          <label className="choice">
            <input type="radio" name="approve" checked={approve === false} onChange={() => setApprove(false)} /> Reject: the agent is told it may not make it
          </label>
          {approve === false && (
            <>
              <label htmlFor="reject-code">What should the agent do?</label>
              <select id="reject-code" value={reasonCode} onChange={(e) => setReasonCode(e.target.value as PivotRejectionCode)}>
                {PIVOT_REJECTION_CODES.map((c) => (
                  <option key={c} value={c}>
                    {REJECTION_CODE_LABELS[c] ?? c}
                  </option>
                ))}
              </select>
            </>
          )}
          <label htmlFor="note">Note {approve === false ? "(required: the agent is told)" : "(optional)"}</label>
          <textarea id="note" rows={3} value={note} onChange={(e) => setNote(e.target.value)} />
        </fieldset>
      )}
      {kind === "OUTCOME_UNKNOWN" && (
        <fieldset>
          <legend>What the real system shows</legend>
          <label className="choice">
            <input type="radio" name="outcome" checked={outcome === "CONFIRMED"} onChange={() => setOutcome("CONFIRMED")} /> It happened: the step counts as done
          </label>
          <label className="choice">
            <input type="radio" name="outcome" checked={outcome === "NOT_EXECUTED"} onChange={() => setOutcome("NOT_EXECUTED")} /> It did not happen: the agent may retry under the same key
          </label>
          {outcome === "CONFIRMED" && (
            <>
              <label htmlFor="external-ref">External ref of the effect</label>
              <input id="external-ref" value={externalRef} onChange={(e) => setExternalRef(e.target.value)} placeholder="e.g. TCK-12, pi_…" />
            </>
          )}
          <label htmlFor="evidence">Evidence (required): what you saw, and where</label>
          <textarea id="evidence" rows={4} value={evidence} onChange={(e) => setEvidence(e.target.value)} />
        </fieldset>
      )}
      {kind === "COMPENSATION_FAILED" && (
        <fieldset>
          <legend>Manual repair</legend>
          <label htmlFor="note">What you did to answer the effect (required)</label>
          <textarea id="note" rows={4} value={note} onChange={(e) => setNote(e.target.value)} placeholder="e.g. Refunded 7.00 EUR by hand in the payments console." />
          <label htmlFor="repair-ref">External ref of the repair (optional)</label>
          <input id="repair-ref" value={repairRef} onChange={(e) => setRepairRef(e.target.value)} placeholder="e.g. re_…" />
        </fieldset>
      )}
      {kind === "STUCK_AFTER_PIVOT" && detail.escalation.step === null && (
        <fieldset>
          <legend>Decision</legend>
          <p className="muted small">A reviewer approved this run&apos;s plan and its agent has not made a call since. Nothing of the plan runs until someone commits it.</p>
          <label className="choice">
            <input type="radio" name="decision" checked={decision === "commit_by_worker"} onChange={() => setDecision("commit_by_worker")} /> Let a worker commit the approved plan: each
            approved call runs once (calls already made are read from the log), then the run completes
          </label>
          <label className="choice">
            <input type="radio" name="decision" checked={decision === "unwind"} onChange={() => setDecision("unwind")} /> Unwind instead: a worker undoes what the run staged, newest
            first, and nothing of the plan runs
          </label>
          <label className="choice">
            <input type="radio" name="decision" checked={decision === "completed_manually"} onChange={() => setDecision("completed_manually")} /> Done by hand: I made the approved calls
            myself
          </label>
          <label htmlFor="note">Why (required)</label>
          <textarea id="note" rows={3} value={note} onChange={(e) => setNote(e.target.value)} />
        </fieldset>
      )}
      {kind === "STUCK_AFTER_PIVOT" && detail.escalation.step !== null && (
        <fieldset>
          <legend>Decision</legend>
          <label className="choice">
            <input type="radio" name="decision" checked={decision === "unwind"} onChange={() => setDecision("unwind")} /> Unwind the run: a worker undoes what it did, newest first
          </label>
          <label className="choice">
            <input type="radio" name="decision" checked={decision === "completed_manually"} onChange={() => setDecision("completed_manually")} /> Done by hand: I did what the step should have done
          </label>
          <label className="choice">
            <input type="radio" name="decision" checked={decision === "abandoned"} onChange={() => setDecision("abandoned")} /> Abandon: the step will not be done
          </label>
          <label htmlFor="note">Why, and what was done (required)</label>
          <textarea id="note" rows={3} value={note} onChange={(e) => setNote(e.target.value)} />
        </fieldset>
      )}
      {kind === "REVOKE_OUT_OF_WINDOW" && (
        <fieldset>
          <legend>Outside the revocation window</legend>
          <label htmlFor="note">What was done instead (required)</label>
          <textarea id="note" rows={3} value={note} onChange={(e) => setNote(e.target.value)} />
        </fieldset>
      )}
      <button type="submit" className="button primary" disabled={busy || !ready}>
        {busy ? "Recording…" : kind === "OUTCOME_UNKNOWN" ? "Record outcome" : kind === "COMPENSATION_FAILED" ? "Record repair" : confirmItems.length > 0 ? "Resolve…" : "Resolve"}
      </button>
      <p className="muted small">Recorded in the saga log and the audit log under your name.</p>
      <FormError message={failure} />
    </form>
  );
}
