import Link from "@/components/link";
import { ClassBadge, StatusBadge, Time } from "@/components/saga-display";
import type { TToolTable } from "@/lib/server/tools/views";
import { formatWindow, STATUS_MEANINGS, undoSummary } from "./tool-labels";
import styles from "./tools.module.css";

/** Which rows the table shows. */
export type ToolTableFilter = "all" | "UNREVIEWED" | "PROPOSED" | "REVIEWED" | "DISABLED";

const FILTER_LABELS: Record<ToolTableFilter, string> = { all: "All", UNREVIEWED: "Unreviewed", PROPOSED: "Change proposed", REVIEWED: "Reviewed", DISABLED: "Disabled" };

function href(filter: ToolTableFilter): string {
  return filter === "all" ? "/admin/tools" : `/admin/tools?status=${filter}`;
}

/** The per-tool reversibility table: one row per tool, what happens after the agent does the wrong thing. */
export function ToolTable({ table, filter }: { table: TToolTable; filter: ToolTableFilter }) {
  const rows = filter === "all" ? table.tools : filter === "PROPOSED" ? table.tools.filter((t) => t.proposalWaiting) : table.tools.filter((t) => t.status === filter);
  const proposed = table.tools.filter((t) => t.proposalWaiting && t.status !== "UNREVIEWED").length;
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Tool table</h1>
          <p className="muted">
            What happens after an agent does the wrong thing, decided per tool before the agent gets access. {table.canEdit ? "Open a tool to edit its row; every edit is a new version, and approvals naming the tool become stale." : "Only admins edit it."}
          </p>
        </div>
      </div>

      <section className="waiting" aria-label="Tools by review status">
        {(["UNREVIEWED", "REVIEWED", "DISABLED"] as const).map((status) => (
          <Link key={status} href={href(status)} className={status === "UNREVIEWED" && table.counts.UNREVIEWED > 0 ? "tile hot" : "tile"} aria-current={filter === status ? "page" : undefined} title={STATUS_MEANINGS[status]}>
            <span className="tile-value">{table.counts[status]}</span>
            <span className="tile-label">{FILTER_LABELS[status].toLowerCase()}</span>
          </Link>
        ))}
      </section>

      {table.counts.UNREVIEWED > 0 && filter !== "UNREVIEWED" && (
        <p className="notice">
          {table.counts.UNREVIEWED === 1 ? "One declared tool waits" : `${table.counts.UNREVIEWED} declared tools wait`} for review: every call of {table.counts.UNREVIEWED === 1 ? "it" : "them"} is held for a person until an admin accepts it.{" "}
          <Link href={href("UNREVIEWED")}>Show {table.counts.UNREVIEWED === 1 ? "it" : "them"}</Link>
        </p>
      )}

      {proposed > 0 && filter !== "PROPOSED" && (
        <p className="notice">
          {proposed === 1 ? "One reviewed tool has a change its team proposes" : `${proposed} reviewed tools have changes their teams propose`}: the row{proposed === 1 ? " stands" : "s stand"} as reviewed until an admin accepts or refuses.{" "}
          <Link href={href("PROPOSED")}>Show {proposed === 1 ? "it" : "them"}</Link>
        </p>
      )}

      <nav className="filters" aria-label="Filter tools">
        {(["all", "UNREVIEWED", "PROPOSED", "REVIEWED", "DISABLED"] as const).map((f) => (
          <Link key={f} href={href(f)} aria-current={filter === f ? "page" : undefined}>
            {FILTER_LABELS[f]}
          </Link>
        ))}
      </nav>

      {rows.length === 0 ? (
        <div className="empty">
          <strong>{table.tools.length === 0 ? "The tool table is empty." : `No ${FILTER_LABELS[filter].toLowerCase()} tools.`}</strong>
          {table.tools.length === 0 ? (
            <span>
              Connectors the server runs add their tools when it starts; a team declares its own with a manifest (<code>npm run tools -- declare --file manifest.json --namespace TEAM</code>, or <code>POST /api/v1/tools/declarations</code> with its token).
            </span>
          ) : (
            <Link href="/admin/tools">Show every tool</Link>
          )}
        </div>
      ) : (
        <div className="table-wrap">
          <table className={styles.toolTable}>
            <thead>
              <tr>
                <th>Tool</th>
                <th>Class</th>
                <th>Undo</th>
                <th>Lookup by key</th>
                <th>Revocation window</th>
                <th>Owner</th>
                <th>System</th>
                <th>Status</th>
                <th>Last verified</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((tool) => (
                <tr key={tool.name} className={tool.status === "DISABLED" ? styles.disabledRow : undefined}>
                  <td data-label="Tool">
                    <Link href={`/admin/tools/${encodeURIComponent(tool.name)}`} className={styles.toolName}>
                      {tool.name}
                    </Link>
                    {tool.description && <div className="muted small">{tool.description}</div>}
                    {tool.namespace && <div className="cell-label">declared by {tool.namespace}</div>}
                  </td>
                  <td data-label="Class">
                    <ClassBadge toolClass={tool.toolClass} />
                    {tool.alwaysRequireApproval && <div className="cell-label">always approve</div>}
                  </td>
                  <td data-label="Undo" className={styles.undo}>{undoSummary(tool)}</td>
                  <td data-label="Lookup by key">{tool.toolClass === "PURE" ? <span className="muted">not needed</span> : tool.lookupAvailable ? "yes" : <span className="attention">no</span>}</td>
                  <td data-label="Revocation window" className="nowrap">{formatWindow(tool.revocationWindowSec)}</td>
                  <td data-label="Owner">{tool.owner ?? <span className="muted">unrouted</span>}</td>
                  <td data-label="System">{tool.system ?? <span className="muted">not stated</span>}</td>
                  <td data-label="Status">
                    <div className="cell-stack">
                      <StatusBadge status={tool.status} />
                      {tool.proposalWaiting && <span className="cell-label attention">change proposed</span>}
                      {tool.warnings.length > 0 && (
                        <span className="cell-label attention" title={tool.warnings.join("\n")}>
                          {tool.warnings.length === 1 ? "1 warning" : `${tool.warnings.length} warnings`}
                        </span>
                      )}
                    </div>
                  </td>
                  <td data-label="Last verified" className="small">
                    {tool.verifiedAt ? (
                      <>
                        <Time at={tool.verifiedAt} />
                        <div className="cell-label">{tool.verifiedBy}</div>
                      </>
                    ) : (
                      <span className="muted">never</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
