"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState } from "react";
import { ClassBadge, CompactJson, Countdown, Mono, StatusBadge, Time } from "@/components/saga-display";
import { diffPlans } from "@/lib/dashboard/plan-diff";
import type { TPivotDecisionResult, TPivotScreen, TPlanItemView, TStagedEffect } from "@/lib/dashboard/views";
import { errorMessage, LiveMarker, postJson, useLive } from "./live";
import { RANK_LABELS, systemLabel } from "./labels";

const HASH_PREFIX = 12;

function RadiusBadge({ rank }: { rank: number | null }) {
  if (rank === null) return <span className="muted">unknown</span>;
  return <span className={`radius radius-${rank}`}>{RANK_LABELS[rank] ?? "?"}</span>;
}

function Audience({ audience, rank }: { audience: string[] | null; rank: number | null }) {
  return (
    <div className="cell-stack">
      <RadiusBadge rank={rank} />
      <span className="cell-label">{audience === null ? "tool unknown here" : audience.length > 0 ? audience.join(", ") : "nobody"}</span>
    </div>
  );
}

/** The commit plan: what approving lets the agent do. */
function PlanTable({ plan }: { plan: TPlanItemView[] }) {
  return (
    <div className="table-wrap wide-json">
      <table>
        <thead>
          <tr>
            <th className="num">#</th>
            <th>Call</th>
            <th>System</th>
            <th>Arguments (exactly these)</th>
            <th>Who sees it</th>
            <th>If it must be undone</th>
            <th>Policy version</th>
          </tr>
        </thead>
        <tbody>
          {plan.map((item) => (
            <tr key={item.idx} className={item.toolClass === "IRREVERSIBLE" ? "row-irreversible" : undefined}>
              <td className="num">{item.idx + 1}</td>
              <td className="nowrap">
                <div className="cell-stack">
                  <code>{item.tool}</code>
                  <ClassBadge toolClass={item.toolClass} />
                </div>
              </td>
              <td>{systemLabel(item.system)}</td>
              <td>
                <CompactJson value={item.args} />
              </td>
              <td>
                <Audience audience={item.audience} rank={item.audienceRank} />
              </td>
              <td>
                {item.toolClass === "IRREVERSIBLE" ? (
                  <span className="irreversible-text">No undo: only a correction message, sent by a person</span>
                ) : item.answeredBy ? (
                  <code>{item.answeredBy}</code>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td className="nowrap">
                {item.policyChanged ? (
                  <span className="policy-changed" title="An admin changed this tool's policy after the plan was made; approval will be refused.">
                    v{item.planPolicyVersion} → now v{item.currentPolicyVersion}
                  </span>
                ) : (
                  <span title="The plan names the tool's current policy version.">v{item.planPolicyVersion} (current)</span>
                )}
              </td>
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
      <td className="num">{e.stepIdx}</td>
      <td className="nowrap">
        <div className="cell-stack">
          <code>{e.tool}</code>
          <ClassBadge toolClass={e.toolClass} />
        </div>
      </td>
      <td>
        <StatusBadge status={e.status} />
      </td>
      <td>
        <div className="cell-stack">
          <Mono text={e.externalRef} />
          <span className="cell-label" title={e.stepKey}>
            key {e.stepKey.slice(0, 8)}…
          </span>
        </div>
      </td>
      <td>
        <CompactJson value={e.args} />
      </td>
      <td>
        <Audience audience={e.audience} rank={e.audienceRank} />
      </td>
      <td>
        {e.release ? (
          <div className="cell-stack">
            <code>{e.release.tool}</code>
            {e.release.args !== null && typeof e.release.args === "object" && Object.keys(e.release.args).length > 0 && <CompactJson value={e.release.args} />}
            {e.compensationState !== "NONE" && <StatusBadge status={e.compensationState} />}
          </div>
        ) : (
          <span className="irreversible-text">nothing can release it</span>
        )}
      </td>
      <td className="nowrap">
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
      <table>
        <thead>
          <tr>
            <th className="num">Step</th>
            <th>Call</th>
            <th>Status</th>
            <th>External ref</th>
            <th>Arguments</th>
            <th>Who sees it</th>
            <th>Released by</th>
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
              <CompactJson value={line.item.args} />
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
 * one this page loaded; polling keeps statuses and countdowns current and says when the plan was
 * revised or decided elsewhere, but never swaps the plan under the reviewer's eyes.
 */
export function PivotScreen({ initial }: { initial: TPivotScreen }) {
  const router = useRouter();
  const pivotId = initial.pivot.id;
  const { data: live, error, refetch } = useLive<TPivotScreen>(["pivot", pivotId], `/api/dashboard/pivots/${encodeURIComponent(pivotId)}`, initial);
  const loaded = initial;
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState<"approve" | "reject" | null>(null);
  const [result, setResult] = useState<TPivotDecisionResult | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const reasonRef = useRef<HTMLTextAreaElement>(null);

  const pending = live.pivot.status === "PENDING";
  const canDecide = live.abilities.canDecide && pending && live.run.status === "AWAITING_PIVOT";
  const revised = pending && live.pivot.planHash !== loaded.pivot.planHash;

  const decide = useCallback(
    async (approve: boolean) => {
      if (busy) return;
      if (!approve && !reason.trim()) {
        setFailure("Write a reason first: it goes back to the agent.");
        reasonRef.current?.focus();
        return;
      }
      setBusy(approve ? "approve" : "reject");
      setFailure(null);
      try {
        const url = `/api/dashboard/pivots/${encodeURIComponent(pivotId)}/${approve ? "approve" : "reject"}`;
        const outcome = await postJson<TPivotDecisionResult>(url, approve ? { planHash: loaded.pivot.planHash } : { planHash: loaded.pivot.planHash, reason });
        setResult(outcome);
        await refetch();
      } catch (e) {
        setFailure(errorMessage(e));
      } finally {
        setBusy(null);
      }
    },
    [busy, reason, pivotId, loaded.pivot.planHash, refetch],
  );

  useEffect(() => {
    if (!canDecide) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
      if (event.key === "a") {
        event.preventDefault();
        void decide(true);
      } else if (event.key === "r") {
        event.preventDefault();
        reasonRef.current?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [canDecide, decide]);

  const irreversible = loaded.plan.filter((i) => i.toolClass === "IRREVERSIBLE");
  const customerItems = loaded.plan.filter((i) => i.audienceRank === 2);
  const openStaged = live.staged.filter((e) => !e.settled);

  return (
    <>
      <Link href={`/runs/${encodeURIComponent(live.run.id)}`} className="back-link">
        ← Run: {live.run.title}
      </Link>
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

      {result?.ok === false && result.reason === "plan_changed" && (
        <section className="banner bad" role="alert">
          <h2>Not approved: the plan changed since this page loaded</h2>
          <p>
            {result.policyChanges.length > 0
              ? `An admin changed the policy of ${result.policyChanges.map((c) => `${c.tool} (v${c.planVersion} → v${c.currentVersion})`).join(", ")} after the plan was made, so this approval would be stale.`
              : "The agent revised its proposal. Nothing was approved. Review what changed, then load the new plan and decide again."}
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
          <h2>The agent revised this plan after you opened it</h2>
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
                  {irreversible.length} irreversible: {irreversible.map((i) => i.tool).join(", ")}
                </span>
              ) : (
                <span className="muted small">nothing irreversible</span>
              )}
            </div>
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
            <div className="fact">
              <span className="fact-label">Staged, releasable</span>
              <span className="fact-value">
                {openStaged.length} of {live.staged.length}
              </span>
              {live.releasableUntil ? (
                <span className="muted small">
                  first expires <Countdown until={live.releasableUntil} now={live.now} />
                </span>
              ) : (
                <span className="muted small">no expiry known</span>
              )}
            </div>
            <div className="fact">
              <span className="fact-label">Customer-facing</span>
              <span className="fact-value">{customerItems.length + live.staged.filter((e) => e.audienceRank === 2).length}</span>
              <span className="muted small">
                {customerItems.length} in the plan, {live.staged.filter((e) => e.audienceRank === 2).length} staged
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
              What approving lets the agent do<span className="count">{loaded.plan.length}</span>
            </h2>
            <p className="muted small section-note">
              Only these calls, with exactly these arguments and policy versions, may run after approval; each runs once. Irreversible calls are marked in magenta.
            </p>
            <PlanTable plan={loaded.plan} />
          </section>
        </div>

        <section className="decide-panel" aria-label="Decision">
          {!pending ? (
            <div className={live.pivot.status === "APPROVED" ? "decided approved" : "decided rejected"}>
              <strong>{live.pivot.status === "APPROVED" ? "Approved" : "Rejected"}</strong> by {live.pivot.decidedBy ?? "someone"} at <Time at={live.pivot.decidedAt} /> UTC
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
                  Approving lets {irreversible.length === 1 ? "an irreversible call" : `${irreversible.length} irreversible calls`} run. Nothing takes{" "}
                  {irreversible.length === 1 ? "it" : "them"} back.
                </p>
              )}
              <button type="button" className="button approve" onClick={() => void decide(true)} disabled={busy !== null}>
                {busy === "approve" ? "Approving…" : "Approve"} <kbd>a</kbd>
              </button>
              <form
                className="reject-form"
                onSubmit={(event) => {
                  event.preventDefault();
                  void decide(false);
                }}
              >
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
                Keyboard: <kbd>a</kbd> approves · <kbd>r</kbd> goes to the reason · <kbd>Ctrl</kbd>+<kbd>Enter</kbd> rejects · <kbd>Esc</kbd> leaves the box
              </p>
            </>
          )}
          {failure && (
            <p className="form-error" role="alert">
              {failure}
            </p>
          )}
        </section>
      </div>

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
                  <span className="muted small"> ({group.audience.join(", ") || "nobody"})</span>
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
