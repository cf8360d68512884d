"use client";

import { audienceWords } from "@/components/audience-words";
import Link from "next/link";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { ClassBadge, Fact, LabelledValues, Mono, StatusBadge, Time, formatDuration } from "@/components/saga-display";
import { ZClaimResult, ZEscalationDetail, ZRealSystemCheckState, ZResolveResult, type TClaimResult, type TEscalationDetail, type TRealSystemCheck, type TRealSystemCheckState, type TResolveResult } from "@/lib/desks/dashboard/views";
import { PIVOT_REJECTION_CODES, type PivotRejectionCode } from "@/lib/saga/vocabulary";
import { errorMessage, getParsed, LiveMarker, postParsed, useLive } from "./live";
import { KIND_HINTS, kindLabel, REJECTION_CODE_LABELS, systemLabel } from "./labels";
import { ApprovalConfirmation, type ConfirmItem } from "./pivot-decision";
import styles from "./reviewer.module.css";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { BackLink, FormError } from "@/components/section";

type Detail = TEscalationDetail;

/** Who asked to pull an effect back after its window closed, and why: what the decision turns on. */
function RevokeRequest({ detail }: { detail: Detail["escalation"]["detail"] }) {
  const d = detail !== null && typeof detail === "object" && !Array.isArray(detail) ? detail : {};
  const text = (v: unknown) => (typeof v === "string" && v.trim() ? v : null);
  const askedBy = text(d.askedBy);
  const reason = text(d.reason);
  const windowEndsAt = text(d.windowEndsAt);
  return (
    <dl className="facts-list" data-testid="revoke-request">
      <Fact label="Asked by">{askedBy ?? <span className="muted">not recorded</span>}</Fact>
      <Fact label="Why">{reason ?? <span className="muted">no reason given</span>}</Fact>
      <Fact label="Window closed">{windowEndsAt ? <Time at={windowEndsAt} /> : "the tool has no revocation window"}</Fact>
    </dl>
  );
}

/** What happened: the held call, or the step with its external ref and what is still out there. */
function Context({ detail }: { detail: Detail }) {
  const { heldCall, step, escalation } = detail;
  return (
    <section className="panel" aria-labelledby="context">
      <h2 id="context">What happened</h2>
      {escalation.kind === "REVOKE_OUT_OF_WINDOW" && <RevokeRequest detail={escalation.detail} />}
      {heldCall && (
        <dl className="facts-list">
          <Fact label="Held call">
            <code>{heldCall.tool}</code> {heldCall.toolClass && <ClassBadge toolClass={heldCall.toolClass} />}
          </Fact>
          <Fact label="Arguments">
            <LabelledValues value={heldCall.args} />
          </Fact>
          <Fact label="Why it was held">{heldCall.message ?? heldCall.reason ?? "—"}</Fact>
          <Fact label="If approved">It runs once, when the agent calls it again with exactly these arguments.</Fact>
        </dl>
      )}
      {step && (
        <dl className="facts-list">
          <Fact label="Step">
            #{step.stepIdx} <code>{step.tool}</code> <ClassBadge toolClass={step.toolClass} />{" "}
            {step.manualRepair ? (
              <span className="badge status-good" data-testid="repaired-by-hand">
                REPAIRED BY HAND
              </span>
            ) : (
              <StatusBadge status={step.status} />
            )}
          </Fact>
          {step.manualRepair && (
            <Fact label="Repaired by hand">
              {step.manualRepair.repairedBy} recorded at <Time at={step.manualRepair.repairedAt} /> UTC
              {step.manualRepair.repairRef ? (
                <>
                  , reference <Mono text={step.manualRepair.repairRef} />
                </>
              ) : (
                ", no reference given"
              )}
              : {step.manualRepair.note}
              <div className="muted small">The pre-written compensation had failed ({step.status.replaceAll("_", " ").toLowerCase()}); the log keeps that, and this repair answers it.</div>
            </Fact>
          )}
          <Fact label="Step key">
            <Mono text={step.stepKey} />
          </Fact>
          <Fact label="External ref">
            <Mono text={step.externalRef} />
          </Fact>
          <Fact label="Arguments">
            <LabelledValues value={step.args} />
          </Fact>
          <Fact label="Who could see it">{audienceWords(step.audience)}</Fact>
          {step.error !== null && (
            <Fact label="Error">
              <LabelledValues value={step.error} />
            </Fact>
          )}
          <Fact label="Compensation">
            {step.compensation ? (
              <>
                Sagaboard calls <code>{step.compensation.tool}</code>
                {step.compensation.args !== null && typeof step.compensation.args === "object" && Object.keys(step.compensation.args).length > 0 && <LabelledValues value={step.compensation.args} currencyOf={step.args} />}
              </>
            ) : (
              <span className="muted">none (irreversible, or none could be built)</span>
            )}
          </Fact>
          {step.compensationState !== "NONE" && (
            <Fact label="Compensation state">
              <StatusBadge status={step.compensationState} /> {step.compensationRef && <Mono text={step.compensationRef} />}
            </Fact>
          )}
          {step.compensationError !== null && <UndoFailure error={step.compensationError} repaired={step.manualRepair !== null} />}
          <Fact label="Logged">
            <Time at={step.createdAt} /> · updated <Time at={step.updatedAt} />
          </Fact>
        </dl>
      )}
      <details className="raw">
        <summary>Everything the escalation recorded</summary>
        <LabelledValues value={escalation.detail} rawLabel="Raw JSON" />
      </details>
    </section>
  );
}

/** Why an undo failed, in a sentence, and what it left out there, as labelled values (money as money). */
function UndoFailure({ error, repaired }: { error: NonNullable<Detail["step"]>["compensationError"]; repaired: boolean }) {
  const e = error !== null && typeof error === "object" && !Array.isArray(error) ? error : null;
  const said = e && typeof e.message === "string" ? e.message : e && typeof e.reason === "string" ? e.reason : null;
  const remaining = e && "remaining" in e ? e.remaining : undefined;
  return (
    <>
      <Fact label="Why the undo failed">
        {said ?? "The compensation could not be confirmed."}
        {remaining === undefined && <LabelledValues value={error} />}
      </Fact>
      {remaining !== undefined && (
        <Fact label={repaired ? "Was out there" : "Still out there"}>
          <LabelledValues value={remaining} />
        </Fact>
      )}
    </>
  );
}

/** A check that went to a worker: still waiting for it, or what it could not do. */
function CheckProgress({ state }: { state: TRealSystemCheckState }) {
  if (state.state === "waiting") {
    return (
      <p className="check asked" role="status">
        No connector for <code>{state.tool}</code> runs on this server, so a worker that holds it was asked to look the key up in {systemLabel(state.system)} at <Time at={state.askedAt} /> UTC.{" "}
        {state.claimedBy ? `${state.claimedBy} is looking it up now.` : "No worker holding it has picked it up yet."} The answer shows here when it comes; if no such worker runs, check{" "}
        {systemLabel(state.system)} by hand and record what you found below.
      </p>
    );
  }
  if (state.state === "failed") {
    return (
      <p className="form-error" role="alert">
        The worker could not look it up in {systemLabel(state.system)}: {state.error}. Check {systemLabel(state.system)} by hand, then record what you found.
      </p>
    );
  }
  return null;
}

function CheckResult({ check }: { check: TRealSystemCheck }) {
  return (
    <div className={check.found ? "check found" : check.error ? "check failed" : "check absent"} role="status">
      <strong>
        {check.found
          ? `Found in ${systemLabel(check.system)}: the effect exists.`
          : check.error
            ? `${systemLabel(check.system)} did not answer: ${check.error}`
            : `Not found in ${systemLabel(check.system)} after ${check.lookups} lookups.`}
      </strong>
      <dl className="facts-list compact">
        <Fact label="Looked up">
          key <Mono text={check.stepKey} /> with <code>{check.tool}</code>&apos;s lookup
        </Fact>
        {check.externalRef && (
          <Fact label="External ref">
            <Mono text={check.externalRef} />
          </Fact>
        )}
        {check.result !== null && (
          <Fact label="It returned">
            <LabelledValues value={check.result} />
          </Fact>
        )}
        <Fact label="Checked">
          <Time at={check.checkedAt} /> UTC by {check.checkedBy} · nothing was changed
        </Fact>
      </dl>
    </div>
  );
}

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
  if (check.found) return `Lookup of key ${check.stepKey} in ${check.system} at ${at} found ${check.externalRef ?? "the effect"} (${describe(check.result)}).`;
  if (check.error) return "";
  return `Lookup of key ${check.stepKey} in ${check.system} at ${at} found nothing (${check.lookups} lookups, search lag allowed for).`;
}

function resolveMessage(result: TResolveResult): string | null {
  if (result.ok) return null;
  if (result.reason === "resolved") return `Already resolved by ${result.resolvedBy ?? "someone"}; your resolution was not recorded.`;
  return result.heldBy ? `Only ${result.heldBy}, who holds this item, can resolve it.` : "Claim the item first: only the person holding it can resolve it.";
}

/** The resolution form of the escalation's kind (shown to the claimer only). */
function ResolutionForm({ detail, check, onDone }: { detail: Detail; check: TRealSystemCheck | null; onDone: (message: string | null) => void }) {
  const kind = detail.escalation.kind;
  const [approve, setApprove] = useState<boolean | null>(null);
  const [reasonCode, setReasonCode] = useState<PivotRejectionCode>("REVISE_ARGUMENTS");
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

/** Fields of a resolution that only repeat who decided (said once, above it). */
const WHO_FIELDS = ["resolvedBy", "settledBy", "decidedBy", "repairedBy"];

/** What was decided, field by field (who decided is said once, above it); the raw form one click away. */
function Resolution({ value }: { value: TEscalationDetail["escalation"]["resolution"] }) {
  if (value === null) return null;
  const shown = typeof value === "object" && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).filter(([k]) => !WHO_FIELDS.includes(k))) : value;
  const code = typeof value === "object" && value !== null && !Array.isArray(value) && typeof value.reasonCode === "string" ? value.reasonCode : null;
  return (
    <div className="resolution">
      {code && <p className="body-text">The agent was told: {REJECTION_CODE_LABELS[code] ?? code}.</p>}
      <LabelledValues value={shown} />
    </div>
  );
}

/** One escalation: what happened, and (for the person holding it) the resolution form of its kind. Live. */
export function EscalationWorkbench({ initial }: { initial: Detail }) {
  const id = initial.escalation.id;
  const { data, error, refetch } = useLive<Detail>(["escalation", id], dashboardUrl(DashboardPath.getEscalation, { escalationId: id }), initial, ZEscalationDetail);
  const { escalation, run, step, abilities } = data;
  const [claimNote, setClaimNote] = useState<string | null>(null);
  const [busy, setBusy] = useState<"claim" | "release" | "check" | null>(null);
  // The latest check: answered here at once, or by a worker (polled while it is waiting).
  const queryClient = useQueryClient();
  const checkKey = ["escalation-check", id];
  const checkUrl = dashboardUrl(DashboardPath.checkRealSystem, { escalationId: id });
  const { data: checkState } = useQuery({
    queryKey: checkKey,
    queryFn: () => getParsed(checkUrl, ZRealSystemCheckState),
    enabled: step !== null,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    refetchInterval: (query) => (query.state.data?.state === "waiting" ? 1000 : false),
  });
  const check = checkState?.state === "checked" ? checkState.check : null;
  const waiting = checkState?.state === "waiting";
  const [checkError, setCheckError] = useState<string | null>(null);
  // Buttons wait for the page to be interactive: a click on the server's first paint would do nothing.
  const [interactive, setInteractive] = useState(false);
  useEffect(() => setInteractive(true), []);

  async function claimOrRelease(action: "claim" | "release") {
    setBusy(action);
    setClaimNote(null);
    try {
      const result: TClaimResult = await postParsed(dashboardUrl(action === "claim" ? DashboardPath.claimEscalation : DashboardPath.releaseEscalation, { escalationId: id }), ZClaimResult);
      if (!result.ok) {
        setClaimNote(
          result.reason === "held"
            ? `Held by ${result.heldByName ? `${result.heldByName} (${result.heldBy})` : result.heldBy}; only they can work it.`
            : result.reason === "resolved"
              ? `Already resolved by ${result.resolvedBy ?? "someone"}.`
              : "You do not hold this item.",
        );
      }
      await refetch();
    } catch (e) {
      setClaimNote(errorMessage(e));
    } finally {
      setBusy(null);
    }
  }

  async function runCheck() {
    setBusy("check");
    setCheckError(null);
    try {
      queryClient.setQueryData(checkKey, await postParsed(checkUrl, ZRealSystemCheckState));
    } catch (e) {
      setCheckError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  }

  const resolved = escalation.status === "RESOLVED";
  const heldByOther = escalation.status === "CLAIMED" && !abilities.isClaimer;
  // Checking the real system comes first for the person working the item (it is the evidence).
  const checkBox = step && !resolved && abilities.canResolve ? (
    <div className={abilities.isClaimer ? "check-box first" : "check-box"}>
      <h3>Check the real system</h3>
      <p className="muted small">
        Looks step key {step.stepKey.slice(0, 8)}… up in {systemLabel(escalation.system ?? "other")} with <code>{step.tool}</code>&apos;s own lookup, where its connector runs. Changes nothing.
      </p>
      <button type="button" className="button" disabled={busy !== null || waiting} onClick={() => void runCheck()}>
        {busy === "check" ? "Checking…" : waiting ? "Waiting for a worker…" : check ? "Check again" : "Check the real system"}
      </button>
      <FormError message={checkError} />
      {checkState && <CheckProgress state={checkState} />}
      {check && <CheckResult check={check} />}
    </div>
    ) : null;

  return (
    <>
      <BackLink href="/escalations">Escalation queue</BackLink>
      <div className="page-head">
        <div>
          <div className="title-line">
            <span className={`kind kind-${escalation.kind.toLowerCase()}`}>{kindLabel(escalation.kind)}</span>
            <h1>{escalation.title}</h1>
            <StatusBadge status={escalation.status} />
            <LiveMarker error={error} />
          </div>
          <dl className="run-meta">
            <div>
              <dt>Run</dt>
              <dd>
                <Link href={`/runs/${encodeURIComponent(run.id)}`}>{run.title}</Link> <StatusBadge status={run.status} />
              </dd>
            </div>
            <div>
              <dt>On behalf of</dt>
              <dd>{run.onBehalfOf ?? <span className="muted">—</span>}</dd>
            </div>
            <div>
              <dt>Owner</dt>
              <dd>{escalation.owner ?? <span className="muted">unrouted</span>}</dd>
            </div>
            <div>
              <dt>{escalation.status === "RESOLVED" ? "Was open for" : "Age"}</dt>
              <dd title={escalation.createdAt}>{formatDuration(escalation.ageSeconds)}</dd>
            </div>
            <div>
              <dt>Id</dt>
              <dd>
                <Mono text={escalation.id} />
              </dd>
            </div>
          </dl>
          <p className="muted small kind-hint">{KIND_HINTS[escalation.kind]}</p>
          <a href="#resolution" className={styles.jumpToDecision}>
            Go to the resolution ↓
          </a>
        </div>
      </div>

      <div className="workbench">
        <Context detail={data} />

        <section className="panel resolve-panel" aria-labelledby="resolution">
          <h2 id="resolution">Resolution</h2>
          {resolved ? (
            <div className="decided approved">
              <p>
                <strong>Resolved</strong> by {escalation.resolvedBy ?? "someone"} at <Time at={escalation.resolvedAt} /> UTC
              </p>
              <Resolution value={escalation.resolution} />
              {(run.status === "UNWOUND" || run.status === "COMPLETED") && (
                <p className="body-text" data-testid="run-finished">
                  The run is {run.status.toLowerCase()}: nothing is left for people on it.
                </p>
              )}
              {run.status === "NEEDS_ATTENTION" && (
                <p className="body-text">
                  The run still needs people for other items: <Link href={`/runs/${encodeURIComponent(run.id)}`}>see what is left</Link>.
                </p>
              )}
            </div>
          ) : escalation.status === "OPEN" ? (
            abilities.canClaim ? (
              <>
                <p>Nobody holds this item. Claim it to resolve it; nobody else can while you hold it.</p>
                <button type="button" className="button primary" disabled={!interactive || busy !== null} onClick={() => void claimOrRelease("claim")}>
                  {busy === "claim" ? "Claiming…" : "Claim"}
                </button>
              </>
            ) : (
              <p className="muted">You can read this item. Working it needs the reviewer role, or a support role for items a support team owns (approving a held call stays with reviewers).</p>
            )
          ) : heldByOther ? (
            <p className="held-by">
              Held by <strong>{escalation.claimedBy}</strong> since <Time at={escalation.claimedAt} /> UTC. Only they can resolve it.
            </p>
          ) : (
            <>
              <p className="held-by mine">
                You hold this item (since <Time at={escalation.claimedAt} /> UTC).{" "}
                <button type="button" className="link-button" disabled={busy !== null} onClick={() => void claimOrRelease("release")}>
                  Release it
                </button>
              </p>
              {checkBox}
              <ResolutionForm detail={data} check={check} onDone={() => void refetch()} />
            </>
          )}
          <FormError message={claimNote} />
          {!abilities.isClaimer && checkBox}

        </section>
      </div>
    </>
  );
}
