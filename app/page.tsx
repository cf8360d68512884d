import Link from "next/link";
import { StatusBadge, Time } from "@/components/saga-display";
import { findRuns, ZFindRunsRequestSchema, type TFindRunsRequest } from "@/lib/runs/find-runs";
import { RUN_STATUSES } from "@/lib/saga/vocabulary";

export const dynamic = "force-dynamic";

type SearchParams = Record<string, string | string[] | undefined>;

/** The first value of a query parameter, or undefined when it is absent or empty. */
function param(searchParams: SearchParams, name: string): string | undefined {
  const value = searchParams[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first ? first : undefined;
}

/** `/` with the given filters, dropping empty ones. */
function runsHref(query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value) params.set(key, value);
  const qs = params.toString();
  return qs ? `/?${qs}` : "/";
}

export default async function RunsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const requested = {
    status: param(query, "status"),
    agent: param(query, "agent"),
    cursor: param(query, "cursor"),
  };
  const parsed = ZFindRunsRequestSchema.safeParse(requested);
  // A bad filter in a hand-edited address shows everything with a note, rather than an error page.
  const filters: TFindRunsRequest = parsed.success ? parsed.data : {};
  const { runs, nextCursor } = await findRuns(filters);
  const filtered = Boolean(filters.status || filters.agent);

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Runs</h1>
          <p className="muted">Every agent run and its saga log, newest first. Times are UTC.</p>
        </div>
      </div>

      {!parsed.success && (
        <p className="notice">
          {parsed.error.issues.some((issue) => issue.path[0] === "status")
            ? `“${requested.status}” is not a run status, so all runs are shown. Pick a status below.`
            : `The filters in the address were ignored (${parsed.error.issues
                .map((issue) => `${issue.path.join(".")}: ${issue.message}`)
                .join("; ")}), so all runs are shown.`}
        </p>
      )}

      <nav className="filters" aria-label="Filter by status">
        <Link href={runsHref({ agent: filters.agent })} aria-current={filters.status ? undefined : "page"}>
          All
        </Link>
        {RUN_STATUSES.map((status) => (
          <Link
            key={status}
            href={runsHref({ status, agent: filters.agent })}
            aria-current={filters.status === status ? "page" : undefined}
          >
            {status.replaceAll("_", " ").toLowerCase()}
          </Link>
        ))}
      </nav>

      {filters.agent && (
        <p className="muted small">
          Agent: <strong>{filters.agent}</strong> · <Link href={runsHref({ status: filters.status })}>all agents</Link>
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
            Runs appear here when an agent calls tools through the Sagaboard harness. For demo data, run{" "}
            <code>npm run db:seed</code> and reload this page.
          </div>
        )
      ) : (
        <>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Title</th>
                  <th>Agent</th>
                  <th>On behalf of</th>
                  <th>Status</th>
                  <th className="num">Steps</th>
                  <th className="num">Open escalations</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                {runs.map((run) => (
                  <tr key={run.id}>
                    <td>
                      <Link href={`/runs/${encodeURIComponent(run.id)}`}>{run.title}</Link>
                      <div className="muted small">
                        <code>{run.id}</code>
                      </div>
                    </td>
                    <td className="nowrap">
                      <Link href={runsHref({ status: filters.status, agent: run.agent })}>{run.agent}</Link>
                    </td>
                    <td>{run.onBehalfOf ?? <span className="muted">—</span>}</td>
                    <td>
                      <StatusBadge status={run.status} />
                    </td>
                    <td className="num">{run.stepCount}</td>
                    <td className={run.openEscalationCount > 0 ? "num attention" : "num muted"}>
                      {run.openEscalationCount}
                    </td>
                    <td className="nowrap">
                      <Time at={run.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="pager">
            {filters.cursor && <Link href={runsHref({ status: filters.status, agent: filters.agent })}>Newest</Link>}
            {nextCursor && (
              <Link href={runsHref({ status: filters.status, agent: filters.agent, cursor: nextCursor })}>Older runs →</Link>
            )}
          </div>
        </>
      )}
    </>
  );
}
