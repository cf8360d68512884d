"use client";

import type { ReactNode } from "react";
import Link from "@/components/link";
import { ClassBadge, FactList, formatDuration, LabelledValues, Mono, StatusBadge, Time } from "@/components/saga-display";
import { actorInWords, eventInWords } from "@/lib/desks/audit/event-words";
import { ZRunTimelineWire, type RunTimelineView } from "@/lib/desks/runs/views";
import { CountedSection, StackTable } from "@/components/section";
import { DetailHead, Meta, MetaList } from "@/components/detail-head";
import { useLive } from "./live";
import { kindLabel } from "./labels";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { ZManualRepairWire } from "@/packages/client/src/protocol/schemas/saga";

/** How many hex characters of a hash identify it to a person. */
const HASH_PREFIX = 12;

/** One run's timeline: steps, pivots, escalations, corrections and the audit log; live. */
export function RunTimelineLive({ initial, afterSteps }: { initial: RunTimelineView; /** Shown right under the steps (the revoke trigger). */ afterSteps?: ReactNode }) {
  const runId = initial.run.id;
  const { data, error } = useLive(["run", runId], dashboardUrl(DashboardPath.getRunTimeline, { runId }), initial, ZRunTimelineWire);
  const { run, steps, pivots, escalations, corrections, auditEvents, irreversibleBeforePivot, irreversibleSteps, progress } = data;
  const stepIdxById = new Map(steps.map((s) => [s.id, s.stepIdx]));
  const stepLabel = (stepId: string | null) => {
    if (!stepId) return <span className="muted">—</span>;
    const idx = stepIdxById.get(stepId);
    return idx === undefined ? <Mono text={stepId} /> : <span title={stepId}>#{idx}</span>;
  };
  const pendingPivot = pivots.find((p) => p.status === "PENDING");

  return (
    <>
      <DetailHead
        back={{ href: "/", label: "All runs" }}
        title={run.title}
        status={run.status}
        error={error}
        aside={
          <div className={irreversibleBeforePivot === 0 ? "metric ok" : "metric breach"} data-testid="irreversible-metric">
            <div className="metric-value">{irreversibleBeforePivot}</div>
            <div className="metric-label">irreversible calls made before anyone approved them</div>
            <div className="small">
              {irreversibleBeforePivot > 0
                ? "Must be 0: an irreversible call ran while staging, before anyone approved the pivot."
                : irreversibleSteps > 0
                  ? `This run holds ${irreversibleSteps} irreversible ${irreversibleSteps === 1 ? "step" : "steps"}, each made only after a person approved it.`
                  : "This run holds no irreversible step."}
            </div>
          </div>
        }
      >
        <MetaList>
          <Meta label="Run">
            <Mono text={run.id} />
          </Meta>
          <Meta label="Agent">{run.agent}</Meta>
          <Meta label="On behalf of">{run.onBehalfOf ?? <span className="muted">—</span>}</Meta>
          <Meta label="Created">
            <Time at={run.createdAt} />
          </Meta>
          <Meta label="Updated">
            <Time at={run.updatedAt} />
          </Meta>
        </MetaList>
      </DetailHead>

      <ProgressPanel progress={progress} agent={run.agent} />

      {pendingPivot && run.status === "AWAITING_PIVOT" && (
        <div className="callout">
          <span>
            <strong>This run waits for a reviewer.</strong> The agent proposed a pivot: {pendingPivot.summary}
          </span>
          <Link className="button primary" href={`/pivots/${encodeURIComponent(pendingPivot.id)}`}>
            Open the pivot screen →
          </Link>
        </div>
      )}

      <CountedSection id="steps" title="Steps" count={steps.length} empty="No steps logged yet.">
        <StackTable headers={[{ label: "#", num: true }, "Tool / class", "Status", "Key", "External ref / audience", "Arguments", "Undo", "Undo state", "Created / updated (UTC)"]}>
          {steps.map((step) => (
            <tr key={step.id} className={step.toolClass === "IRREVERSIBLE" ? "row-irreversible" : undefined}>
              <td className="num" data-label="Step">
                {step.stepIdx}
              </td>
              <td className="nowrap" data-label="Tool">
                <div className="cell-stack">
                  <code>{step.tool}</code>
                  <ClassBadge toolClass={step.toolClass} />
                  <span className="cell-label">{step.phase.replaceAll("_", " ").toLowerCase()}</span>
                </div>
              </td>
              <td data-label="Status">
                <div className="cell-stack" data-testid="step-standing">
                  <StatusBadge status={step.standing} />
                  {step.attempts > 1 && <span className="cell-label">{step.attempts} attempts</span>}
                  {step.error !== null && <LabelledValues value={step.error} label="error" rawLabel="Raw error" currencyOf={step.args} />}
                </div>
              </td>
              <td data-label="Key">
                {/* The full key is in the title (and on the escalation screen); all 32 characters pushed the table past the page. */}
                <Mono text={`${step.stepKey.slice(0, HASH_PREFIX)}…`} title={step.stepKey} />
              </td>
              <td data-label="External ref">
                <div className="cell-stack">
                  <Mono text={step.externalRef} />
                  <span className="cell-label">{step.audience.length > 0 ? `seen by ${step.audience.join(", ")}` : "no audience"}</span>
                </div>
              </td>
              <td data-label="Arguments">
                <LabelledValues value={step.args} rawLabel="Raw arguments" />
              </td>
              <td data-label="Undo">
                {step.compensation ? (
                  <div className="cell-stack">
                    <code>{step.compensation.tool}</code>
                    <LabelledValues value={step.compensation.args} rawLabel="Raw arguments" currencyOf={step.args} />
                  </div>
                ) : (
                  <span className="muted">{step.toolClass === "IRREVERSIBLE" ? "none: only a correction message" : "—"}</span>
                )}
              </td>
              <td data-label="Undo state">
                <div className="cell-stack">
                  <span>{step.standing === "REPAIRED_BY_HAND" ? "undo failed; a person repaired it by hand: nothing is left out there" : compensationStateWords(step.compensationState)}</span>
                  {step.standing === "REPAIRED_BY_HAND" && <ManualRepairLine repair={step.manualRepair} />}
                  {step.compensationRequestedAt && (
                    <span className="cell-label nowrap">
                      requested <Time at={step.compensationRequestedAt} />
                    </span>
                  )}
                  {step.compensationConfirmedAt && (
                    <span className="cell-label nowrap">
                      confirmed <Time at={step.compensationConfirmedAt} />
                    </span>
                  )}
                  {step.compensationRef && (
                    <span className="cell-label">
                      undo ref <Mono text={step.compensationRef} />
                    </span>
                  )}
                  {step.compensationError !== null &&
                    (step.standing === "REPAIRED_BY_HAND" ? (
                      <details className="raw-inline">
                        <summary>What the failed undo left (since repaired)</summary>
                        <LabelledValues value={step.compensationError} label="error" rawLabel="Raw error" currencyOf={step.args} />
                      </details>
                    ) : (
                      <LabelledValues value={step.compensationError} label="error" rawLabel="Raw error" currencyOf={step.args} />
                    ))}
                </div>
              </td>
              <td className="nowrap" data-label="Created / updated">
                <div className="cell-stack">
                  <Time at={step.createdAt} />
                  <span className="cell-label">
                    <Time at={step.updatedAt} />
                  </span>
                </div>
              </td>
            </tr>
          ))}
        </StackTable>
      </CountedSection>
      {afterSteps}

      <CountedSection id="pivots" title="Pivots" count={pivots.length} empty="No pivot requested yet.">
        <div className="card-list">
          {pivots.map((pivot) => (
            <article key={pivot.id} className="card">
              <div className="card-head">
                <StatusBadge status={pivot.status} />
                <strong>{pivot.summary}</strong>
                <Link className={pivot.status === "PENDING" ? "button primary small push-right" : "push-right small"} href={`/pivots/${encodeURIComponent(pivot.id)}`}>
                  {pivot.status === "PENDING" ? "Decide →" : "Open pivot screen"}
                </Link>
              </div>
              {pivot.plan.length === 0 ? (
                <p className="empty-inline small">The commit plan is empty.</p>
              ) : (
                <ol className="plan" aria-label="Commit plan">
                  {pivot.plan.map((item, i) => (
                    <li key={i} className={item.toolClass === "IRREVERSIBLE" ? "irreversible" : undefined}>
                      <span className="muted">{i + 1}.</span>
                      <code>{item.tool}</code>
                      <span>
                        <ClassBadge toolClass={item.toolClass} />
                      </span>
                      <LabelledValues value={item.args} rawLabel="Raw arguments" />
                    </li>
                  ))}
                </ol>
              )}
              <div className="card-facts">
                <span>
                  Plan hash <Mono text={pivot.planHash.slice(0, HASH_PREFIX)} title={pivot.planHash} />
                </span>
                <span>
                  Requested <Time at={pivot.createdAt} />
                </span>
                {pivot.deadline && (
                  <span>
                    Deadline <Time at={pivot.deadline} />
                  </span>
                )}
                {pivot.decidedBy && (
                  <span>
                    {pivot.status === "REJECTED" ? "Rejected" : "Approved"} by <strong>{pivot.decidedBy}</strong> at <Time at={pivot.decidedAt} />
                  </span>
                )}
                {pivot.reason && (
                  <span>
                    Reason <strong>{pivot.reason}</strong>
                  </span>
                )}
              </div>
            </article>
          ))}
        </div>
      </CountedSection>

      <CountedSection id="escalations" title="Escalations" count={escalations.length} empty="Nothing was escalated to a person.">
        <StackTable headers={["Kind", "Status", "Title", "Step", "Owner", "Detail", "Raised (UTC)"]}>
          {escalations.map((esc) => (
            <tr key={esc.id}>
              <td className="nowrap" data-label="Kind">
                {kindLabel(esc.kind)}
              </td>
              <td data-label="Status">
                <div className="cell-stack">
                  <StatusBadge status={esc.status} />
                  {esc.status === "CLAIMED" && esc.claimedBy && <span className="cell-label">held by {esc.claimedBy}</span>}
                  {esc.resolvedBy && <span className="cell-label">resolved by {esc.resolvedBy}</span>}
                </div>
              </td>
              <td data-label="Title">
                <Link href={`/escalations/${encodeURIComponent(esc.id)}`}>{esc.title}</Link>
              </td>
              <td data-label="Step">{stepLabel(esc.stepId)}</td>
              <td data-label="Owner">{esc.owner ?? <span className="muted">—</span>}</td>
              <td data-label="Detail">
                <LabelledValues value={esc.detail} rawLabel="Raw detail" />
              </td>
              <td className="nowrap" data-label="Raised">
                <Time at={esc.createdAt} />
              </td>
            </tr>
          ))}
        </StackTable>
      </CountedSection>

      <CountedSection id="corrections" title="Corrections" count={corrections.length} empty="No correction messages drafted.">
        <StackTable headers={[{ label: "Rank", num: true }, "Audience", "Status", "Step", "Subject", "Body"]}>
          {corrections.map((cor) => (
            <tr key={cor.id}>
              <td className="num" data-label="Rank">
                {cor.rank}
              </td>
              <td className="nowrap" data-label="Audience">
                {cor.audience.join(", ")}
              </td>
              <td data-label="Status">
                <StatusBadge status={cor.status} />
              </td>
              <td data-label="Step">{stepLabel(cor.stepId)}</td>
              <td data-label="Subject">
                <Link href={`/corrections/${encodeURIComponent(cor.id)}`}>{cor.subject}</Link>
              </td>
              <td data-label="Body">
                <p className="body-text">{cor.body}</p>
              </td>
            </tr>
          ))}
        </StackTable>
      </CountedSection>

      <CountedSection
        id="audit"
        title="Audit events"
        count={auditEvents.length}
        empty="No audit events recorded for this run."
        before={
          <p className="muted small">
            <Link href={`/audit?run=${encodeURIComponent(run.id)}`}>Check this run&apos;s chain in the audit log, or export it →</Link>
          </p>
        }
      >
        <StackTable className="audit-events" headers={[{ label: "Seq", num: true }, "At (UTC)", "Who", "What happened", "Step", "Hash"]}>
          {auditEvents.map((ev) => {
            const who = actorInWords(ev.actor);
            const words = eventInWords({ ...ev, stepIdx: ev.stepId ? stepIdxById.get(ev.stepId) : null });
            return (
              <tr key={ev.id}>
                <td className="num" data-label="Seq">
                  {ev.seq}
                </td>
                <td className="nowrap" data-label="At">
                  <Time at={ev.at} />
                </td>
                <td data-label="Who">
                  <div className="cell-stack">
                    {who.kind && <span className="cell-label">{who.kind}</span>}
                    <span>{who.name}</span>
                  </div>
                </td>
                <td data-label="What happened">
                  <div className="cell-stack">
                    <strong>{words.title}</strong>
                    {words.sentence && <span>{words.sentence}</span>}
                    {words.facts.length > 0 && <FactList facts={words.facts} />}
                    <details className="raw-inline">
                      <summary>Raw event</summary>
                      <code className="json">{JSON.stringify({ type: ev.type, actor: ev.actor, data: ev.data })}</code>
                    </details>
                  </div>
                </td>
                <td data-label="Step">{stepLabel(ev.stepId)}</td>
                <td data-label="Hash">
                  <Mono text={ev.hash.slice(0, HASH_PREFIX)} title={`${ev.hash} (previous ${ev.prevHash})`} />
                </td>
              </tr>
            );
          })}
        </StackTable>
      </CountedSection>
    </>
  );
}

/** Who repaired a failed undo by hand, when, with what reference, and what they did. */
function ManualRepairLine({ repair }: { repair: unknown }) {
  const r = ZManualRepairWire.safeParse(repair);
  if (!r.success) return null;
  return (
    <span className="cell-label">
      by {r.data.repairedBy}, <Time at={r.data.repairedAt} />
      {r.data.repairRef ? <>, reference <Mono text={r.data.repairRef} /></> : null}: {r.data.note}
    </span>
  );
}

/** A compensation state in words (`REQUESTED` is a cancel that was sent, not a reversal that happened). */
function compensationStateWords(state: string): string {
  switch (state) {
    case "NONE":
      return "not asked for";
    case "REQUESTED":
      return "undo sent, not yet confirmed";
    case "CONFIRMED":
      return "undone (read back from the real system)";
    case "FAILED":
      return "undo failed: still out there";
    default:
      return state.replaceAll("_", " ").toLowerCase();
  }
}

/** "3 min ago" by the database clock the page was read with. */
function ago(at: string, now: string): string {
  const seconds = (new Date(now).getTime() - new Date(at).getTime()) / 1000;
  return seconds < 1 ? "just now" : `${formatDuration(seconds)} ago`;
}

/** Whether anything is happening: the agent's last contact and what is expected next, in sentences. */
function ProgressPanel({ progress, agent }: { progress: RunTimelineView["progress"]; agent: string }) {
  const last = progress.lastContact;
  const stuckIn = progress.stuckAt ? (new Date(progress.stuckAt).getTime() - new Date(progress.checkedAt).getTime()) / 1000 : null;
  return (
    <section className={`progress-panel waiting-on-${progress.waitingOn}`} aria-labelledby="progress" data-testid="run-progress">
      <h2 id="progress">What happens now</h2>
      <p className="progress-expected">{progress.expected}</p>
      <dl className="values">
        <div>
          <dt>Agent&apos;s last contact</dt>
          <dd data-testid="last-contact">
            {last ? (
              <>
                {ago(last.at, progress.checkedAt)} ({eventInWords({ type: last.type, data: {} }).title.toLowerCase()}
                {last.stepIdx !== null ? `, step #${last.stepIdx}` : ""}) by {agent}, <Time at={last.at} />
              </>
            ) : (
              <span className="muted">{agent} has not written to this run&apos;s log</span>
            )}
          </dd>
        </div>
        {progress.approvedNotMade.length > 0 && (
          <div data-testid="approved-not-made">
            <dt>Approved, never made</dt>
            <dd>
              <ul className="plain-list">
                {progress.approvedNotMade.map((n) => (
                  <li key={n.escalationId}>
                    <code>{n.tool}</code> approved by {n.approvedBy ?? "a reviewer"}
                    {n.approvedAt && (
                      <>
                        {" "}
                        {ago(n.approvedAt, progress.checkedAt)} (<Time at={n.approvedAt} />)
                      </>
                    )}
                    : the agent has not called it since, so it has not gone out. <Link href={`/escalations/${encodeURIComponent(n.escalationId)}`}>Open the approval</Link>
                  </li>
                ))}
              </ul>
            </dd>
          </div>
        )}
        {progress.stuckEscalationId && (
          <div>
            <dt>Stuck after pivot</dt>
            <dd>
              Raised for a person: <Link href={`/escalations/${encodeURIComponent(progress.stuckEscalationId)}`}>open the escalation</Link>
            </dd>
          </div>
        )}
        {stuckIn !== null && (
          <div>
            <dt>If nothing happens</dt>
            <dd>
              {stuckIn > 0 ? `In ${formatDuration(stuckIn)}` : "Now"} (<Time at={progress.stuckAt} />) Sagaboard raises it as stuck after its pivot, and a person decides: let a worker commit the approved plan, or unwind.
            </dd>
          </div>
        )}
      </dl>
    </section>
  );
}
