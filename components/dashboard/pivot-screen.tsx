"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState } from "react";
import { ClassBadge, Countdown, LabelledValues, Mono, StatusBadge, Time } from "@/components/saga-display";
import { diffPlans } from "@/lib/desks/pivots/plan-diff";
import { ZEditPlanItemResult, ZPivotDecisionResult, ZPivotScreen, type TPivotDecisionResult, type TPivotScreen, type TPlanItemView, type TStagedEffect } from "@/lib/desks/dashboard/views";
import { PIVOT_REJECTION_CODES, type PivotRejectionCode } from "@/lib/saga/vocabulary";
import { errorMessage, LiveMarker, postParsed, useLive } from "./live";
import { audienceInWords, RANK_LABELS, REJECTION_CODE_LABELS, systemLabel } from "./labels";
import { ApprovalConfirmation, EditHistory, PlanItemEditor, mustConfirm } from "./pivot-decision";
import styles from "./reviewer.module.css";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { BackLink, FormError } from "@/components/section";

const HASH_PREFIX = 12;

function RadiusBadge({ rank }: { rank: number | null }) {
  if (rank === null) return <span className="muted">unknown</span>;
  return <span className={`radius radius-${rank}`}>{RANK_LABELS[rank] ?? "?"}</span>;
}

function Audience({ audience, rank, source = "tool" }: { audience: string[] | null; rank: number | null; source?: TPlanItemView["audienceSource"] }) {
  return (
    <div className="cell-stack">
      <RadiusBadge rank={rank} />
      <span className="cell-label">{audienceInWords(audience, source)}</span>
    </div>
  );
}

/** The commit plan: what approving lets the agent do (and, for a reviewer, an Edit button per item). */
/** How one plan item stands after the approval: the step that carries it, or not begun. */
function CommitCell({ step }: { step: TPivotScreen["committed"][number] | undefined }) {
  if (!step) return <span className="muted small">not run yet</span>;
  return (
    <span className="small">
      ran: <StatusBadge status={step.status} /> <span className="muted">step {step.stepIdx}</span>
    </span>
  );
}

/**
 * The arguments of the staged effect a plan item refers to by its external id (a capture naming the
 * authorisation's payment intent), so an amount in the item reads in that effect's currency.
 */
function referredArgs(item: TPlanItemView, staged: TStagedEffect[]): unknown {
  if (item.args === null || typeof item.args !== "object" || Array.isArray(item.args)) return undefined;
  const refs = new Set(Object.values(item.args).filter((v): v is string => typeof v === "string"));
  return staged.find((e) => e.externalRef !== null && refs.has(e.externalRef))?.args;
}

function PlanTable({ plan, staged, onEdit, committed }: { plan: TPlanItemView[]; staged: TStagedEffect[]; onEdit: ((idx: number) => void) | null; committed: TPivotScreen["committed"] | null }) {
  return (
    <div className="table-wrap wide-json">
      <table className="stack-on-phone">
        <thead>
          <tr>
            <th className="num">#</th>
            <th>Call</th>
            <th>System</th>
            <th>Arguments (exactly these)</th>
            <th>Who sees it</th>
            <th>If it must be undone</th>
            <th>Policy version</th>
            {onEdit && <th aria-label="Edit" />}
          </tr>
        </thead>
        <tbody>
          {plan.map((item) => (
            <tr key={item.idx} className={item.toolClass === "IRREVERSIBLE" ? "row-irreversible" : undefined} data-testid={`plan-item-${item.idx}`}>
              <td className="num" data-label="#">{item.idx + 1}</td>
              <td className="nowrap" data-label="Call">
                <div className="cell-stack">
                  <code>{item.tool}</code>
                  <ClassBadge toolClass={item.toolClass} />
                  {committed && <CommitCell step={committed.find((c) => c.idx === item.idx)} />}
                </div>
              </td>
              <td data-label="System">{systemLabel(item.system)}</td>
              <td data-label="Arguments">
                <LabelledValues value={item.args} currencyOf={referredArgs(item, staged)} />
              </td>
              <td data-label="Who sees it">
                <Audience audience={item.audience} rank={item.audienceRank} source={item.audienceSource} />
              </td>
              <td data-label="If undone">
                {item.toolClass === "IRREVERSIBLE" ? (
                  <span className="irreversible-text">No undo: only a correction message, sent by a person</span>
                ) : item.answeredBy ? (
                  <code>{item.answeredBy}</code>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td className="nowrap" data-label="Policy">
                {item.policyChanged ? (
                  <span className="policy-changed" title="An admin changed this tool's policy after the plan was made; approval will be refused.">
                    v{item.planPolicyVersion} → now v{item.currentPolicyVersion}
                  </span>
                ) : (
                  <span title="The plan names the tool's current policy version.">v{item.planPolicyVersion} (current)</span>
                )}
              </td>
              {onEdit && (
                <td data-label="Edit">
                  {item.editable ? (
                    <button type="button" className="button small" onClick={() => onEdit(item.idx)} aria-label={`Edit the arguments of call ${item.idx + 1} (${item.tool})`}>
                      Edit
                    </button>
                  ) : (
                    <span className="muted small">not editable here</span>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Everything staged so far, grouped by external system. */
function StagedTable({ screen }: { screen: TPivotScreen }) {
  const byId = new Map(screen.staged.map((e) => [e.stepId, e]));
  const row = (e: TStagedEffect) => (
    <tr key={e.stepId} className={e.settled ? "row-settled" : undefined}>
      <td className="num" data-label="Step">{e.stepIdx}</td>
      <td className="nowrap" data-label="Call">
        <div className="cell-stack">
          <code>{e.tool}</code>
          <ClassBadge toolClass={e.toolClass} />
        </div>
      </td>
      <td data-label="Status">
        <StatusBadge status={e.status} />
      </td>
      <td data-label="External ref">
        <div className="cell-stack">
          <Mono text={e.externalRef} />
          <span className="cell-label" title={e.stepKey}>
            key {e.stepKey.slice(0, 8)}…
          </span>
        </div>
      </td>
      <td data-label="Arguments">
        <LabelledValues value={e.args} />
      </td>
      <td data-label="Who sees it">
        <Audience audience={e.audience} rank={e.audienceRank} />
      </td>
      <td data-label="To release it">
        {e.release ? (
          <div className="cell-stack">
            <span>
              Sagaboard calls <code>{e.release.tool}</code>
            </span>
            {e.release.args !== null && typeof e.release.args === "object" && Object.keys(e.release.args).length > 0 && <LabelledValues value={e.release.args} currencyOf={e.args} />}
            {e.compensationState !== "NONE" && <StatusBadge status={e.compensationState} />}
          </div>
        ) : (
          <span className="irreversible-text">nothing can release it</span>
        )}
      </td>
      <td className="nowrap" data-label="Releasable until">
        {e.settled ? (
          <span className="muted">nothing left to release</span>
        ) : (
          <div className="cell-stack">
            <Time at={e.releasableUntil} />
            <Countdown until={e.releasableUntil} now={screen.now} />
            <span className="cell-label">
              {e.revocationWindowSec === null
                ? "no revocation window"
                : `${Math.round(e.revocationWindowSec / 3600)}h window${e.windowSource === "registry_default" ? " (class default)" : ""}`}
              {screen.pivot.deadline && e.releasableUntil === screen.pivot.deadline ? ", capped by the deadline" : ""}
            </span>
          </div>
        )}
      </td>
    </tr>
  );
  return (
    <div className="table-wrap">
      <table className="stack-on-phone">
        <thead>
          <tr>
            <th className="num">Step</th>
            <th>Call</th>
            <th>Status</th>
            <th>External ref</th>
            <th>Arguments</th>
            <th>Who sees it</th>
            <th>To release it</th>
            <th>Releasable until (UTC)</th>
          </tr>
        </thead>
        {screen.bySystem.map((group) => (
          <tbody key={group.system}>
            <tr className="group-row">
              <th colSpan={8} scope="rowgroup">
                {systemLabel(group.system)} <span className="muted">· {group.stepIds.length} {group.stepIds.length === 1 ? "effect" : "effects"}</span>
              </th>
            </tr>
            {group.stepIds.map((id) => {
              const effect = byId.get(id);
              return effect ? row(effect) : null;
            })}
          </tbody>
        ))}
      </table>
    </div>
  );
}

/** Old plan against current plan, after a refused approval or a revision seen by polling. */
function PlanDiff({ loaded, current }: { loaded: TPlanItemView[]; current: TPlanItemView[] }) {
  const lines = diffPlans(loaded, current);
  return (
    <table className="diff">
      <thead>
        <tr>
          <th>Change</th>
          <th>Call</th>
          <th>Arguments</th>
          <th>Policy</th>
        </tr>
      </thead>
      <tbody>
        {lines.map((line, i) => (
          <tr key={i} className={`diff-${line.change}`}>
            <td className="nowrap">
              {line.change === "added" ? "+ added" : line.change === "removed" ? "− removed" : line.change === "policy_changed" ? "~ policy changed" : "unchanged"}
            </td>
            <td className="nowrap">
              <code>{line.item.tool}</code> <ClassBadge toolClass={line.item.toolClass} />
            </td>
            <td>
              <LabelledValues value={line.item.args} />
            </td>
            <td className="nowrap">
              {line.change === "policy_changed"
                ? `v${line.loadedPolicyVersion ?? line.item.planPolicyVersion} → v${line.item.currentPolicyVersion}`
                : `v${line.item.planPolicyVersion}`}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/**
 * The pivot screen: one look decides. The plan shown (and the hash a decision is bound to) is the
 * one this page loaded (or the reviewer's own edit of it); polling keeps statuses and countdowns
 * current and says when the plan was revised or decided elsewhere, but never swaps the plan under
 * the reviewer's eyes. A plan that holds something nobody can take back asks for a second step.
 */
export function PivotScreen({ initial }: { initial: TPivotScreen }) {
  const router = useRouter();
  const pivotId = initial.pivot.id;
  const [loaded, setLoaded] = useState(initial);
  const { data: live, error, refetch } = useLive<TPivotScreen>(["pivot", pivotId], dashboardUrl(DashboardPath.getPivotScreen, { pivotId }), initial, ZPivotScreen);
  const [reason, setReason] = useState("");
  const [reasonCode, setReasonCode] = useState<PivotRejectionCode>("REVISE_ARGUMENTS");
  const [busy, setBusy] = useState<"approve" | "reject" | null>(null);
  const [result, setResult] = useState<TPivotDecisionResult | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [editing, setEditing] = useState<number | null>(null);
  const [editNote, setEditNote] = useState<string | null>(null);
  const reasonRef = useRef<HTMLTextAreaElement>(null);

  const pending = live.pivot.status === "PENDING";
  const approved = live.pivot.status === "APPROVED";
  const ran = live.committed.filter((c) => c.status === "CONFIRMED").length;
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

  useEffect(() => {
    if (!canDecide || confirming || editing !== null) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
      if (event.key === "a") {
        event.preventDefault();
        approve();
      } else if (event.key === "r") {
        event.preventDefault();
        reasonRef.current?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [canDecide, confirming, editing, approve]);

  async function saveEdit(idx: number, args: unknown, note: string): Promise<string | null> {
    try {
      const outcome = await postParsed(dashboardUrl(DashboardPath.editPlanItem, { pivotId }), ZEditPlanItemResult, { planHash: loaded.pivot.planHash, itemIdx: idx, args, note: note.trim() || null });
      if (!outcome.ok) {
        if (outcome.reason === "argument_locked") return outcome.message ?? `You may not change ${outcome.arguments.join(", ")}.`;
        return outcome.reason === "unchanged"
          ? "Nothing changed: these are the arguments the plan already has."
          : outcome.reason === "already_decided"
            ? `${outcome.decidedBy ?? "Someone"} decided this pivot meanwhile; nothing was edited.`
            : outcome.reason === "run_not_waiting"
              ? "The run no longer waits for this pivot; nothing was edited."
              : "The plan changed since this page loaded; load the current plan and edit that.";
      }
      setLoaded(outcome.screen);
      setEditing(null);
      setResult(null);
      setEditNote(`Call ${idx + 1} (${outcome.edit.tool}) now has your arguments; the plan hash is ${outcome.edit.planHashAfter.slice(0, HASH_PREFIX)}. Approve to let the agent make the edited call.`);
      await refetch();
      return null;
    } catch (e) {
      return errorMessage(e);
    }
  }

  const customerItems = loaded.plan.filter((i) => i.audienceRank === 2);
  const unknownAudience = loaded.plan.filter((i) => i.audienceSource === "unknown").length;
  const customerStaged = live.staged.filter((e) => e.audienceRank === 2).length;
  const openStaged = live.staged.filter((e) => !e.settled);
  const editingItem = editing === null ? undefined : loaded.plan[editing];

  return (
    <>
      <BackLink href={`/runs/${encodeURIComponent(live.run.id)}`}>Run: {live.run.title}</BackLink>
      <div className="page-head">
        <div>
          <div className="title-line">
            <h1>Pivot of “{live.run.title}”</h1>
            <StatusBadge status={live.pivot.status} />
            <LiveMarker error={error} />
          </div>
          <dl className="run-meta">
            <div>
              <dt>Agent</dt>
              <dd>{live.run.agent}</dd>
            </div>
            <div>
              <dt>On behalf of</dt>
              <dd>{live.run.onBehalfOf ?? <span className="muted">—</span>}</dd>
            </div>
            <div>
              <dt>Requested</dt>
              <dd>
                <Time at={loaded.pivot.createdAt} />
              </dd>
            </div>
            <div>
              <dt>Plan hash</dt>
              <dd>
                <Mono text={loaded.pivot.planHash.slice(0, HASH_PREFIX)} title={loaded.pivot.planHash} />
              </dd>
            </div>
            <div>
              <dt>Pivot</dt>
              <dd>
                <Mono text={pivotId} />
              </dd>
            </div>
          </dl>
        </div>
      </div>

      <blockquote className="pivot-summary">
        <span className="cell-label">The agent proposes</span>
        {loaded.pivot.summary}
      </blockquote>

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
      {result?.ok === false && result.reason === "plan_changed" && (
        <section className="banner bad" role="alert">
          <h2>Not approved: the plan changed since this page loaded</h2>
          <p>
            {result.policyChanges.length > 0
              ? `An admin changed the policy of ${result.policyChanges.map((c) => `${c.tool} (v${c.planVersion} → v${c.currentVersion})`).join(", ")} after the plan was made, so this approval would be stale.`
              : "The plan was revised (by the agent, or edited by another reviewer). Nothing was approved. Review what changed, then load the new plan and decide again."}
          </p>
          {result.current.summary !== loaded.pivot.summary && (
            <p>
              The agent now proposes: <em>{result.current.summary}</em>
            </p>
          )}
          <PlanDiff loaded={loaded.plan} current={result.current.plan} />
          <button type="button" className="button" onClick={() => router.refresh()}>
            Load the current plan
          </button>
        </section>
      )}
      {result?.ok === false && result.reason === "already_decided" && (
        <p className="banner info" role="status">
          {result.pivot.decidedBy ?? "Someone"} already {result.pivot.status.toLowerCase()} this pivot; your decision was not recorded.
        </p>
      )}
      {result?.ok === false && result.reason === "run_not_waiting" && (
        <p className="banner info" role="status">
          The run is {result.runStatus.toLowerCase().replaceAll("_", " ")} and no longer waits for this pivot; nothing was decided.
        </p>
      )}
      {revised && !(result?.ok === false && result.reason === "plan_changed") && (
        <section className="banner warn" role="status">
          <h2>This plan was revised after you opened it</h2>
          <p>The plan below is the one you loaded; approving it now would be refused. Review what changed:</p>
          {live.pivot.summary !== loaded.pivot.summary && (
            <p>
              The agent now proposes: <em>{live.pivot.summary}</em>
            </p>
          )}
          <PlanDiff loaded={loaded.plan} current={live.plan} />
          <button type="button" className="button" onClick={() => router.refresh()}>
            Load the new plan
          </button>
        </section>
      )}

      <div className="decision-grid">
        <div className="decision-main">
          <div className="facts">
            <div className="fact">
              <span className="fact-label">Commit plan</span>
              <span className="fact-value">
                {loaded.plan.length} {loaded.plan.length === 1 ? "call" : "calls"}
              </span>
              {irreversible.length > 0 ? (
                <span className="irreversible-text">
                  {irreversible.length} cannot be taken back: {irreversible.map((i) => i.tool).join(", ")}
                </span>
              ) : (
                <span className="muted small">each can be undone</span>
              )}
            </div>
            {approved ? (
              <div className="fact" data-testid="commit-progress">
                <span className="fact-label">Commit</span>
                <span className="fact-value">
                  {ran} of {loaded.plan.length} ran
                </span>
                <span className="muted small">{live.run.status === "COMPLETED" ? "the run is complete" : ran < loaded.plan.length ? "the agent commits the plan item by item" : `the run is ${live.run.status.toLowerCase().replaceAll("_", " ")}`}</span>
              </div>
            ) : !pending ? (
              <div className="fact">
                <span className="fact-label">Decision</span>
                <span className="fact-value">rejected</span>
                <span className="muted small">no call of the plan may run</span>
              </div>
            ) : (
              <div className="fact">
                <span className="fact-label">Deadline</span>
                {loaded.pivot.deadline ? (
                  <>
                    <span className="fact-value">
                      <Countdown until={loaded.pivot.deadline} now={live.now} />
                    </span>
                    <span className="muted small">
                      <Time at={loaded.pivot.deadline} /> UTC
                    </span>
                  </>
                ) : (
                  <span className="fact-value muted">none given</span>
                )}
              </div>
            )}
            <div className="fact">
              <span className="fact-label">Staged, releasable</span>
              <span className="fact-value">
                {openStaged.length} of {live.staged.length}
              </span>
              {!pending ? (
                <span className="muted small">{approved ? "kept: the plan was approved" : "released as the run unwinds"}</span>
              ) : live.releasableUntil ? (
                <span className="muted small">
                  first expires <Countdown until={live.releasableUntil} now={live.now} />
                </span>
              ) : (
                <span className="muted small">no expiry known</span>
              )}
            </div>
            <div className="fact" data-testid="customer-facing">
              <span className="fact-label">Customer-facing</span>
              <span className="fact-value">{customerItems.length + customerStaged}</span>
              <span className="muted small">
                {customerItems.length} in the plan{unknownAudience > 0 ? ` (${unknownAudience} with an unknown audience, counted as customer-facing)` : ""}, {customerStaged} staged
              </span>
            </div>
            <div className={loaded.policyChanged || live.policyChanged ? "fact fact-bad" : "fact"}>
              <span className="fact-label">Tool policies</span>
              <span className="fact-value">{loaded.policyChanged || live.policyChanged ? "changed" : "current"}</span>
              <span className="muted small">{loaded.policyChanged || live.policyChanged ? "an admin edited a tool since the plan was made" : "as when the plan was made"}</span>
            </div>
          </div>

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

        <section id="decision" className={`decide-panel ${styles.decidePanel}`} aria-label="Decision" tabIndex={-1}>
          {!pending ? (
            <div className={live.pivot.status === "APPROVED" ? "decided approved" : "decided rejected"}>
              <strong>{live.pivot.status === "APPROVED" ? "Approved" : "Rejected"}</strong> by {live.pivot.decidedBy ?? "someone"} at <Time at={live.pivot.decidedAt} /> UTC
              {live.pivot.reasonCode && <p className="body-text">The agent was told: {REJECTION_CODE_LABELS[live.pivot.reasonCode] ?? live.pivot.reasonCode}.</p>}
              {live.pivot.reason && <p className="body-text">Reason: {live.pivot.reason}</p>}
            </div>
          ) : live.run.status !== "AWAITING_PIVOT" ? (
            <p className="muted">
              The run is <StatusBadge status={live.run.status} /> and no longer waits for this pivot; there is nothing to decide.
            </p>
          ) : !live.abilities.canDecide ? (
            <p className="muted">You can read this pivot. Deciding it needs the reviewer role.</p>
          ) : (
            <>
              {irreversible.length > 0 && (
                <p className="warn-line">
                  Approving lets {irreversible.length === 1 ? "a call that cannot be taken back" : `${irreversible.length} calls that cannot be taken back`} run:{" "}
                  {irreversible.map((i) => i.tool).join(", ")}. You will be asked to confirm.
                </p>
              )}
              <button type="button" className="button approve" onClick={approve} disabled={busy !== null}>
                {busy === "approve" ? "Approving…" : irreversible.length > 0 ? "Approve…" : "Approve"} <kbd>a</kbd>
              </button>
              <form
                className="reject-form"
                onSubmit={(event) => {
                  event.preventDefault();
                  void decide(false);
                }}
              >
                <label htmlFor="reject-code">What should the agent do?</label>
                <select id="reject-code" value={reasonCode} onChange={(event) => setReasonCode(event.target.value as PivotRejectionCode)}>
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
                  onChange={(event) => setReason(event.target.value)}
                  onKeyDown={(event) => {
                    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
                      event.preventDefault();
                      void decide(false);
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
      </div>

      <ApprovalConfirmation open={confirming} items={irreversible} busy={busy === "approve"} onConfirm={() => void decide(true)} onCancel={() => setConfirming(false)} />

      <section className="section" aria-labelledby="staged">
        <h2 id="staged">
          What is staged so far<span className="count">{live.staged.length}</span>
        </h2>
        {live.staged.length === 0 ? (
          <p className="empty-inline">Nothing was staged before this pivot.</p>
        ) : (
          <>
            <div className="radius-summary" aria-label="Blast radius">
              <span className="cell-label">Blast radius</span>
              {live.byAudience.map((group) => (
                <span key={group.rank} className="radius-group">
                  <RadiusBadge rank={group.rank} /> {group.stepIds.length} {group.stepIds.length === 1 ? "effect" : "effects"}
                  <span className="muted small"> ({group.audience.map((a) => (a === "unknown" ? "audience unknown, counted as customer-facing" : a)).join(", ")})</span>
                </span>
              ))}
              <span className="muted small">
                across {live.bySystem.length} {live.bySystem.length === 1 ? "system" : "systems"}
              </span>
            </div>
            <StagedTable screen={live} />
          </>
        )}
      </section>

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
