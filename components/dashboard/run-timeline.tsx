"use client";

import type { ReactNode } from "react";
import Link from "next/link";
import { ClassBadge, CompactJson, Mono, StatusBadge, Time } from "@/components/saga-display";
import type { RunTimelineView } from "@/lib/runs/get-run-timeline";
import { LiveMarker, useLive } from "./live";
import { kindLabel } from "./labels";

/** How many hex characters of a hash identify it to a person. */
const HASH_PREFIX = 12;

/** One run's timeline: steps, pivots, escalations, corrections and the audit log; live. */
export function RunTimelineLive({ initial, afterSteps }: { initial: RunTimelineView; /** Shown right under the steps (the revoke trigger). */ afterSteps?: ReactNode }) {
  const runId = initial.run.id;
  const { data, error } = useLive<RunTimelineView>(["run", runId], `/api/dashboard/runs/${encodeURIComponent(runId)}`, initial);
  const { run, steps, pivots, escalations, corrections, auditEvents, irreversibleBeforePivot } = data;
  const stepIdxById = new Map(steps.map((s) => [s.id, s.stepIdx]));
  const stepLabel = (stepId: string | null) => {
    if (!stepId) return <span className="muted">—</span>;
    const idx = stepIdxById.get(stepId);
    return idx === undefined ? <Mono text={stepId} /> : <span title={stepId}>#{idx}</span>;
  };
  const pendingPivot = pivots.find((p) => p.status === "PENDING");

  return (
    <>
      <Link href="/" className="back-link">
        ← All runs
      </Link>
      <div className="page-head">
        <div>
          <div className="title-line">
            <h1>{run.title}</h1>
            <StatusBadge status={run.status} />
            <LiveMarker error={error} />
          </div>
          <dl className="run-meta">
            <div>
              <dt>Run</dt>
              <dd>
                <Mono text={run.id} />
              </dd>
            </div>
            <div>
              <dt>Agent</dt>
              <dd>{run.agent}</dd>
            </div>
            <div>
              <dt>On behalf of</dt>
              <dd>{run.onBehalfOf ?? <span className="muted">—</span>}</dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>
                <Time at={run.createdAt} />
              </dd>
            </div>
            <div>
              <dt>Updated</dt>
              <dd>
                <Time at={run.updatedAt} />
              </dd>
            </div>
          </dl>
        </div>
        <div className={irreversibleBeforePivot === 0 ? "metric ok" : "metric breach"}>
          <div className="metric-value">{irreversibleBeforePivot}</div>
          <div className="metric-label">irreversible steps before pivot</div>
          {irreversibleBeforePivot > 0 && <div className="small">Must be 0: an irreversible call ran while staging, before anyone approved the pivot.</div>}
        </div>
      </div>

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

      <section className="section" aria-labelledby="steps">
        <h2 id="steps">
          Steps<span className="count">{steps.length}</span>
        </h2>
        {steps.length === 0 ? (
          <p className="empty-inline">No steps logged yet.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th className="num">#</th>
                  <th>Tool / class</th>
                  <th>Status</th>
                  <th>Key</th>
                  <th>External ref / audience</th>
                  <th>Args</th>
                  <th>Compensation</th>
                  <th>Compensation state</th>
                  <th>Created / updated (UTC)</th>
                </tr>
              </thead>
              <tbody>
                {steps.map((step) => (
                  <tr key={step.id} className={step.toolClass === "IRREVERSIBLE" ? "row-irreversible" : undefined}>
                    <td className="num">{step.stepIdx}</td>
                    <td className="nowrap">
                      <div className="cell-stack">
                        <code>{step.tool}</code>
                        <ClassBadge toolClass={step.toolClass} />
                        <span className="cell-label">{step.phase.replaceAll("_", " ").toLowerCase()}</span>
                      </div>
                    </td>
                    <td>
                      <div className="cell-stack">
                        <StatusBadge status={step.status} />
                        {step.attempts > 1 && <span className="cell-label">{step.attempts} attempts</span>}
                        {step.error !== null && <CompactJson value={step.error} />}
                      </div>
                    </td>
                    <td>
                      {/* The full key is in the title (and on the escalation screen); all 32 characters pushed the table past the page. */}
                      <Mono text={`${step.stepKey.slice(0, HASH_PREFIX)}…`} title={step.stepKey} />
                    </td>
                    <td>
                      <div className="cell-stack">
                        <Mono text={step.externalRef} />
                        <span className="cell-label">{step.audience.length > 0 ? step.audience.join(", ") : "no audience"}</span>
                      </div>
                    </td>
                    <td>
                      <CompactJson value={step.args} />
                    </td>
                    <td>
                      {step.compensation ? (
                        <div className="cell-stack">
                          <code>{step.compensation.tool}</code>
                          <CompactJson value={step.compensation.args} />
                        </div>
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                    <td>
                      <div className="cell-stack">
                        <StatusBadge status={step.compensationState} />
                        {step.compensationRequestedAt && (
                          <span className="cell-label nowrap">
                            requested
                            <br />
                            <Time at={step.compensationRequestedAt} />
                          </span>
                        )}
                        {step.compensationConfirmedAt && (
                          <span className="cell-label nowrap">
                            confirmed
                            <br />
                            <Time at={step.compensationConfirmedAt} />
                          </span>
                        )}
                        {step.compensationRef && <Mono text={step.compensationRef} />}
                        {step.compensationError !== null && <CompactJson value={step.compensationError} />}
                      </div>
                    </td>
                    <td className="nowrap">
                      <div className="cell-stack">
                        <Time at={step.createdAt} />
                        <span className="cell-label">
                          <Time at={step.updatedAt} />
                        </span>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {afterSteps}

      <section className="section" aria-labelledby="pivots">
        <h2 id="pivots">
          Pivots<span className="count">{pivots.length}</span>
        </h2>
        {pivots.length === 0 ? (
          <p className="empty-inline">No pivot requested yet.</p>
        ) : (
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
                        <CompactJson value={item.args} />
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
                      Decided by <strong>{pivot.decidedBy}</strong> at <Time at={pivot.decidedAt} />
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
        )}
      </section>

      <section className="section" aria-labelledby="escalations">
        <h2 id="escalations">
          Escalations<span className="count">{escalations.length}</span>
        </h2>
        {escalations.length === 0 ? (
          <p className="empty-inline">Nothing was escalated to a person.</p>
        ) : (
          <div className="table-wrap wide-json">
            <table>
              <thead>
                <tr>
                  <th>Kind</th>
                  <th>Status</th>
                  <th>Title</th>
                  <th>Step</th>
                  <th>Owner</th>
                  <th>Detail</th>
                  <th>Raised (UTC)</th>
                </tr>
              </thead>
              <tbody>
                {escalations.map((esc) => (
                  <tr key={esc.id}>
                    <td className="nowrap">{kindLabel(esc.kind)}</td>
                    <td>
                      <div className="cell-stack">
                        <StatusBadge status={esc.status} />
                        {esc.claimedBy && <span className="cell-label">by {esc.claimedBy}</span>}
                        {esc.resolvedBy && <span className="cell-label">resolved by {esc.resolvedBy}</span>}
                      </div>
                    </td>
                    <td>
                      <Link href={`/escalations/${encodeURIComponent(esc.id)}`}>{esc.title}</Link>
                    </td>
                    <td>{stepLabel(esc.stepId)}</td>
                    <td>{esc.owner ?? <span className="muted">—</span>}</td>
                    <td>
                      <CompactJson value={esc.detail} />
                    </td>
                    <td className="nowrap">
                      <Time at={esc.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="section" aria-labelledby="corrections">
        <h2 id="corrections">
          Corrections<span className="count">{corrections.length}</span>
        </h2>
        {corrections.length === 0 ? (
          <p className="empty-inline">No correction messages drafted.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th className="num">Rank</th>
                  <th>Audience</th>
                  <th>Status</th>
                  <th>Step</th>
                  <th>Subject</th>
                  <th>Body</th>
                </tr>
              </thead>
              <tbody>
                {corrections.map((cor) => (
                  <tr key={cor.id}>
                    <td className="num">{cor.rank}</td>
                    <td className="nowrap">{cor.audience.join(", ")}</td>
                    <td>
                      <StatusBadge status={cor.status} />
                    </td>
                    <td>{stepLabel(cor.stepId)}</td>
                    <td>{cor.subject}</td>
                    <td>
                      <p className="body-text">{cor.body}</p>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="section" aria-labelledby="audit">
        <h2 id="audit">
          Audit events<span className="count">{auditEvents.length}</span>
        </h2>
        <p className="muted small">
          <Link href={`/audit?run=${encodeURIComponent(run.id)}`}>Check this run&apos;s chain in the audit log, in words, or export it →</Link>
        </p>
        {auditEvents.length === 0 ? (
          <p className="empty-inline">No audit events recorded for this run.</p>
        ) : (
          <div className="table-wrap wide-json">
            <table>
              <thead>
                <tr>
                  <th className="num">Seq</th>
                  <th>At (UTC)</th>
                  <th>Actor</th>
                  <th>Type</th>
                  <th>Step</th>
                  <th>Data</th>
                  <th>Hash</th>
                </tr>
              </thead>
              <tbody>
                {auditEvents.map((ev) => (
                  <tr key={ev.id}>
                    <td className="num">{ev.seq}</td>
                    <td className="nowrap">
                      <Time at={ev.at} />
                    </td>
                    <td className="nowrap">{ev.actor}</td>
                    <td className="nowrap">
                      <code>{ev.type}</code>
                    </td>
                    <td>{stepLabel(ev.stepId)}</td>
                    <td>
                      <CompactJson value={ev.data} />
                    </td>
                    <td>
                      <Mono text={ev.hash.slice(0, HASH_PREFIX)} title={`${ev.hash} (previous ${ev.prevHash})`} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
