"use client";

import Link from "@/components/link";
import { StatusBadge, Time } from "@/components/saga-display";
import { ZRunsPage, type TRunsPage, type TWaitingCounts } from "@/lib/desks/runs/views";
import { RUN_STATUSES } from "@/packages/client/src/saga/vocabulary";
import { LiveMarker, useLive } from "./live";
import { kindLabel } from "./labels";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { StackTable } from "@/components/section";
import type { AdminWait } from "@/lib/desks/dashboard/find-admin-waits";

/** The runs list's filters, as the address carries them. */
export interface RunsFilters {
  /** RunStatus. */
  status?: string | undefined;
  /** Agent name. */
  agent?: string | undefined;
  /** Search text (on-behalf-of, run id, external ref). */
  q?: string | undefined;
  /** Only runs where something waits for a person. */
  needsAttention: boolean;
  /** Paging cursor. */
  cursor?: string | undefined;
}

/** The query string of `filters` (empty values dropped). */
function queryOf(filters: Partial<RunsFilters>): string {
  const params = new URLSearchParams();
  if (filters.status) params.set("status", filters.status);
  if (filters.agent) params.set("agent", filters.agent);
  if (filters.q) params.set("q", filters.q);
  if (filters.needsAttention) params.set("needsAttention", "1");
  if (filters.cursor) params.set("cursor", filters.cursor);
  return params.toString();
}

function runsHref(filters: Partial<RunsFilters>): string {
  const qs = queryOf(filters);
  return qs ? `/?${qs}` : "/";
}

function WaitingStrip({ waiting }: { waiting: TWaitingCounts }) {
  const kinds = Object.entries(waiting.openEscalations).filter(([, n]) => n > 0);
  return (
    <section className="waiting" aria-label="What waits for people">
      <Link href={runsHref({ status: "AWAITING_PIVOT", needsAttention: false })} className={waiting.pendingPivots > 0 ? "tile hot" : "tile"}>
        <span className="tile-value">{waiting.pendingPivots}</span>
        <span className="tile-label">{waiting.pendingPivots === 1 ? "pivot waits for a reviewer" : "pivots wait for a reviewer"}</span>
      </Link>
      <Link href="/escalations" className={waiting.openEscalationTotal > 0 ? "tile hot" : "tile"}>
        <span className="tile-value">{waiting.openEscalationTotal}</span>
        <span className="tile-label">
          open {waiting.openEscalationTotal === 1 ? "escalation" : "escalations"}
          {kinds.length > 0 && (
            <span className="tile-detail">
              {kinds.map(([kind, n]) => (
                <span key={kind}>
                  {n} {kindLabel(kind)}
                </span>
              ))}
            </span>
          )}
        </span>
      </Link>
      <Link href="/corrections" className={waiting.correctionDrafts > 0 ? "tile hot" : "tile"}>
        <span className="tile-value">{waiting.correctionDrafts}</span>
        <span className="tile-label">{waiting.correctionDrafts === 1 ? "correction draft for support" : "correction drafts for support"}</span>
      </Link>
    </section>
  );
}

/** Who a run waits for when no person does: an approved run waits for its agent, which may have gone quiet. */
function nobodyWaitsWords(status: string): string {
  switch (status) {
    case "RUNNING":
      return "nobody: the agent is staging";
    case "COMMITTING":
      return "nobody: the agent makes the approved calls";
    case "UNWINDING":
      return "nobody: the worker is undoing";
    default:
      return "nobody";
  }
}

/** The runs list: filter chips, search, what waits for people, and the runs; live. */
export function RunsList({
  filters,
  initial,
  notice,
  adminWaits = [],
  canDecide,
}: {
  filters: RunsFilters;
  initial: TRunsPage;
  notice: string | null;
  /** What waits for an admin (empty for everyone else). */
  adminWaits?: AdminWait[];
  /** Whether the reader may decide pivots: a waiting pivot is offered as one to decide, else as one to read. */
  canDecide: boolean;
}) {
  const apiQuery = queryOf(filters);
  const { data, error } = useLive(["runs", apiQuery], dashboardUrl(DashboardPath.findRuns, {}, apiQuery), initial, ZRunsPage);
  const { runs, nextCursor, waiting } = data;
  const base = { status: filters.status, agent: filters.agent, q: filters.q, needsAttention: filters.needsAttention };
  const filtered = Boolean(filters.status || filters.agent || filters.q || filters.needsAttention);

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Runs</h1>
          <p className="muted">Every agent run and its saga log, newest first. Times are UTC.</p>
        </div>
        <LiveMarker error={error} />
      </div>

      {adminWaits.length > 0 && (
        <section className="waiting" aria-label="What waits for an admin">
          {adminWaits.map((w) => (
            <Link key={w.href} href={w.href} className={w.count > 0 ? "tile hot" : "tile"}>
              <span className="tile-value">{w.count}</span>
              <span className="tile-label">{w.label}</span>
            </Link>
          ))}
        </section>
      )}

      <WaitingStrip waiting={waiting} />

      {notice && <p className="notice">{notice}</p>}

      <div className="toolbar">
        <nav className="filters" aria-label="Filter runs">
          <Link href={runsHref({ ...base, status: undefined })} aria-current={filters.status ? undefined : "page"}>
            All
          </Link>
          {RUN_STATUSES.map((status) => (
            <Link key={status} href={runsHref({ ...base, status })} aria-current={filters.status === status ? "page" : undefined}>
              {status.replaceAll("_", " ").toLowerCase()}
            </Link>
          ))}
          <span className="filters-sep" aria-hidden="true" />
          <Link
            href={runsHref({ ...base, needsAttention: !filters.needsAttention })}
            aria-current={filters.needsAttention ? "page" : undefined}
            className="chip-attention"
            title="Runs where a pivot, an escalation or a correction draft waits for a person"
          >
            ⚑ waiting for people
          </Link>
        </nav>
        <form className="search" action="/" method="get" role="search">
          {filters.status && <input type="hidden" name="status" value={filters.status} />}
          {filters.agent && <input type="hidden" name="agent" value={filters.agent} />}
          {filters.needsAttention && <input type="hidden" name="needsAttention" value="1" />}
          <input
            type="search"
            name="q"
            defaultValue={filters.q ?? ""}
            placeholder="Customer, run id or external ref (pi_…, TCK-…)"
            aria-label="Search runs by customer, run id or external ref"
          />
          <button type="submit">Search</button>
        </form>
      </div>

      {(filters.agent || filters.q) && (
        <p className="muted small active-filters">
          {filters.agent && (
            <span>
              Agent <strong>{filters.agent}</strong> · <Link href={runsHref({ ...base, agent: undefined })}>all agents</Link>
            </span>
          )}
          {filters.q && (
            <span>
              Search <strong>“{filters.q}”</strong> · <Link href={runsHref({ ...base, q: undefined })}>clear search</Link>
            </span>
          )}
        </p>
      )}

      {runs.length === 0 ? (
        filtered || filters.cursor ? (
          <div className="empty">
            <strong>No runs match these filters.</strong>
            <Link href="/">Show all runs</Link>
          </div>
        ) : (
          <div className="empty">
            <strong>No runs yet.</strong>
            Runs appear here when an agent calls tools through the Sagaboard harness. For demo data, run <code>npm run db:seed</code>.
          </div>
        )
      ) : (
        <>
          <StackTable headers={["Run", "Agent", "On behalf of", "Status", { label: "Steps", num: true }, "Waiting for people", "Created (UTC)"]}>
            {runs.map((run) => (
              <tr key={run.id}>
                <td data-label="Run">
                  <Link href={`/runs/${encodeURIComponent(run.id)}`}>{run.title}</Link>
                  <div className="muted small">
                    <code>{run.id}</code>
                  </div>
                </td>
                <td className="nowrap" data-label="Agent">
                  <Link href={runsHref({ ...base, agent: run.agent })}>{run.agent}</Link>
                </td>
                <td data-label="On behalf of">{run.onBehalfOf ?? <span className="muted">—</span>}</td>
                <td data-label="Status">
                  <StatusBadge status={run.status} />
                </td>
                <td className="num" data-label="Steps">
                  {run.stepCount}
                </td>
                <td data-label="Waiting for">
                  <div className="waits">
                    {run.pendingPivotId && (
                      <Link className="wait-chip pivot" href={`/pivots/${encodeURIComponent(run.pendingPivotId)}`}>
                        {canDecide ? "Pivot to decide →" : "Pivot waits for a reviewer →"}
                      </Link>
                    )}
                    {run.openEscalationCount > 0 && (
                      <Link className="wait-chip" href={`/runs/${encodeURIComponent(run.id)}#escalations`}>
                        {run.openEscalationCount} {run.openEscalationCount === 1 ? "escalation" : "escalations"}
                      </Link>
                    )}
                    {run.correctionDraftCount > 0 && (
                      <Link className="wait-chip" href={`/runs/${encodeURIComponent(run.id)}#corrections`}>
                        {run.correctionDraftCount} correction {run.correctionDraftCount === 1 ? "draft" : "drafts"}
                      </Link>
                    )}
                    {!run.pendingPivotId && run.openEscalationCount === 0 && run.correctionDraftCount === 0 && <span className="muted">{nobodyWaitsWords(run.status)}</span>}
                  </div>
                </td>
                <td className="nowrap" data-label="Created">
                  <Time at={run.createdAt} />
                </td>
              </tr>
            ))}
          </StackTable>
          <div className="pager">
            {filters.cursor && <Link href={runsHref(base)}>Newest</Link>}
            {nextCursor && <Link href={runsHref({ ...base, cursor: nextCursor })}>Older runs →</Link>}
          </div>
        </>
      )}
    </>
  );
}
