import Link from "@/components/link";
import { Time } from "@/components/saga-display";
import type { TRevokePage } from "@/lib/desks/revokes/find-revokes";
import { RevokeOutcome } from "@/lib/desks/revokes/views";
import { OutcomeBadge } from "./revoke-panel";
import styles from "./revokes.module.css";
import { BackLink, StackTable } from "@/components/section";

/** The filters as the address carries them. */
export interface RevokeFilters {
  person?: string;
  tool?: string;
  outcome?: string;
  from?: string;
  to?: string;
}

function href(filters: RevokeFilters, cursor?: string): string {
  const params = new URLSearchParams(Object.entries({ ...filters, cursor }).flatMap(([k, v]) => (v ? [[k, v]] : [])));
  const qs = params.toString();
  return qs ? `/revokes?${qs}` : "/revokes";
}

/** Who pulled what, when, why, and how it ended; each links to its run. */
export function RevokeRecords({ page, filters, notice }: { page: TRevokePage; filters: RevokeFilters; notice: string | null }) {
  const filtered = Object.values(filters).some(Boolean);
  return (
    <>
      <BackLink href="/">All runs</BackLink>
      <div className="page-head">
        <div>
          <h1>Revoke records</h1>
          <p className="muted">Every revoke trigger pulled: who pulled what, when and why, and how it ended. Pull one from a run's page.</p>
        </div>
      </div>
      {notice && <p className="notice">{notice}</p>}
      <form className={styles.filtersForm} method="get" action="/revokes" aria-label="Filter revoke records">
        <label>
          Person
          <select name="person" defaultValue={filters.person ?? ""}>
            <option value="">anyone</option>
            {page.people.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          Tool
          <input name="tool" defaultValue={filters.tool ?? ""} placeholder="charge_card" />
        </label>
        <label>
          Outcome
          <select name="outcome" defaultValue={filters.outcome ?? ""}>
            <option value="">any</option>
            {Object.values(RevokeOutcome).map((o) => (
              <option key={o} value={o}>
                {o.replaceAll("_", " ")}
              </option>
            ))}
          </select>
        </label>
        <label>
          From (UTC)
          <input name="from" type="datetime-local" defaultValue={filters.from?.slice(0, 16) ?? ""} />
        </label>
        <label>
          To (UTC)
          <input name="to" type="datetime-local" defaultValue={filters.to?.slice(0, 16) ?? ""} />
        </label>
        <button type="submit" className="button small primary">
          Filter
        </button>
        {filtered && <Link href="/revokes">Clear filters</Link>}
      </form>
      {page.revokes.length === 0 ? (
        <div className="empty">
          <strong>{filtered ? "No revoke matches these filters." : "Nobody has pulled a revoke trigger yet."}</strong>
          {filtered ? <Link href="/revokes">Show every revoke</Link> : <span>Open a run and use “Pull back” on a confirmed step to pull one.</span>}
        </div>
      ) : (
        <StackTable stack={false} className={styles.records} headers={["Pulled", "Who", "What", "Why", "How it ended"]}>
          {page.revokes.map((r) => (
            <tr key={r.id}>
              <td className="nowrap" data-label="Pulled">
                <Time at={r.requestedAt} />
              </td>
              <td data-label="Who">
                {r.requestedBy} <span className="muted small">({r.role})</span>
              </td>
              <td data-label="What">
                {r.kind === "RUN" ? "The whole run" : <code>{r.tool}</code>} of <Link href={`/runs/${encodeURIComponent(r.runId)}`}>{r.runTitle}</Link>
                {r.parentId && <div className="cell-label">as part of the whole run</div>}
              </td>
              <td data-label="Why">{r.reason}</td>
              <td data-label="How it ended">
                <OutcomeBadge revoke={r} />
                <div className="muted small">{r.outcomeText}</div>
              </td>
            </tr>
          ))}
        </StackTable>
      )}
      <div className="pager">
        {page.nextCursor && <Link href={href(filters, page.nextCursor)}>Next page →</Link>}
      </div>
    </>
  );
}
