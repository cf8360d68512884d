// The audit log page (/audit): filters in the address, the events in words, a pager, the exports of
// the current filters, and the integrity panel. A server component: nothing here needs the browser
// except the integrity panel (./integrity-panel.tsx).

import Link from "@/components/link";
import { Mono, Time } from "@/components/saga-display";
import { actorInWords, eventInWords, scopeInWords } from "@/lib/desks/audit/event-words";
import { type TAuditVerification, type TAuditEventView, type TAuditEventsPage } from "@/lib/desks/audit/views";
import styles from "./audit.module.css";
import { FilterForm, type FilterFormValues } from "./filter-form";
import { BreakText, IntegrityPanel } from "./integrity-panel";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { BackLink } from "@/components/section";

/** The filters as the address carries them (each optional): the form's, and the page. */
export interface AuditFilters extends FilterFormValues {
  /** Paging cursor. */
  cursor?: string | undefined;
}

const FILTER_KEYS = ["run", "scope", "actor", "type", "from", "to", "cursor"] as const;

/** The query string of `filters` (empty values dropped). */
export function auditQuery(filters: AuditFilters): string {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) {
    const value = filters[key];
    if (value) params.set(key, value);
  }
  return params.toString();
}

function auditHref(filters: AuditFilters): string {
  const qs = auditQuery(filters);
  return qs ? `/audit?${qs}` : "/audit";
}

function Who({ actor, filters }: { actor: string; filters: AuditFilters }) {
  const who = actorInWords(actor);
  return (
    <div className={styles.who}>
      {who.kind && <span className={styles.kind}>{who.kind}</span>}
      <Link href={auditHref({ ...filters, actor, cursor: undefined })} title={`Only events by ${actor}`} className={styles.name}>
        {who.name}
      </Link>
    </div>
  );
}

function What({ event }: { event: TAuditEventView }) {
  const words = eventInWords(event);
  return (
    <div className={styles.what}>
      <strong className={styles.title} title={event.type}>
        {words.title}
      </strong>
      {words.sentence && <p className={styles.sentence}>{words.sentence}</p>}
      {words.facts.length > 0 && (
        <dl className={styles.facts}>
          {words.facts.map((fact) => (
            <div key={fact.label} className={styles.fact}>
              <dt>{fact.label}</dt>
              <dd>{fact.value}</dd>
            </div>
          ))}
        </dl>
      )}
      <details className={styles.raw}>
        <summary>Raw event</summary>
        <pre>{JSON.stringify(event, null, 2)}</pre>
      </details>
    </div>
  );
}

function Where({ event, filters }: { event: TAuditEventView; filters: AuditFilters }) {
  if (event.runId) {
    return (
      <div className={styles.where}>
        <Link href={`/runs/${encodeURIComponent(event.runId)}`}>{event.runId}</Link>
        {event.stepId && (
          <Link href={`/runs/${encodeURIComponent(event.runId)}#steps`} className={styles.step} title="The run's steps">
            step {event.stepId}
          </Link>
        )}
      </div>
    );
  }
  return (
    <div className={styles.where}>
      <Link href={auditHref({ ...filters, run: undefined, scope: event.scope, cursor: undefined })} title="Only this chain">
        {scopeInWords(event.scope)}
      </Link>
    </div>
  );
}

function EventsTable({ events, filters, broken }: { events: readonly TAuditEventView[]; filters: AuditFilters; broken: ReadonlyMap<number, string> }) {
  return (
    <div className={`table-wrap ${styles.tableWrap}`}>
      <table className={styles.events}>
        <thead>
          <tr>
            <th>Time (UTC)</th>
            <th>Who</th>
            <th>What happened</th>
            <th>Run or chain</th>
            <th>Chain link</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.id} data-event-id={event.id} className={broken.has(event.id) ? styles.brokenRow : undefined}>
              <td className={styles.time}>
                <Time at={event.at} />
              </td>
              <td className={styles.whoCell}>
                <Who actor={event.actor} filters={filters} />
              </td>
              <td className={styles.whatCell}>
                {broken.has(event.id) && <span className={styles.brokenNote}>Broken link: {broken.get(event.id)}</span>}
                <What event={event} />
              </td>
              <td className={styles.whereCell}>
                <Where event={event} filters={filters} />
              </td>
              <td className={styles.link}>
                <span className={styles.seq}>#{event.seq}</span> <Mono text={`${event.hash.slice(0, 10)}…`} title={`event ${event.id}: hash ${event.hash}, previous ${event.prevHash}`} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A break's kind in a few words, for the row it marks. */
const BREAK_WORDS: Record<TAuditVerification["breaks"][number]["kind"], string> = {
  scope: "moved from another chain",
  seq: "its position was changed",
  missing: "links before it are missing",
  prevHash: "does not link to the one before",
  hash: "its hash was changed",
  content: "its content was changed",
  runId: "its run was changed",
  "content-or-hash": "content or hash changed",
};

/** What a chain filter's chain looks like, verified on the server (cheap: one chain). */
function ChainStatus({ chain }: { chain: TAuditVerification }) {
  const first = chain.breaks[0];
  if (!first) {
    return (
      <p className={`check found ${styles.chainStatus}`} data-testid="chain-status">
        <strong>This chain is intact</strong>
        {chain.events === 1 ? "Its one link verifies" : `All ${chain.events.toLocaleString("en")} links verify`}: each continues the one before it, and each hash matches its content.
      </p>
    );
  }
  return (
    <div className={`check failed ${styles.chainStatus}`} data-testid="chain-status">
      <strong>This chain is broken</strong>
      <BreakText brk={first} here={chain.scope} />
    </div>
  );
}

/** The audit log page. */
export function AuditLog({
  filters,
  page,
  error,
  notice,
  chain,
}: {
  filters: AuditFilters;
  page: TAuditEventsPage | null;
  error: string | null;
  notice: string | null;
  chain: TAuditVerification | null;
}) {
  const base: AuditFilters = { ...filters, cursor: undefined };
  const filtered = Boolean(filters.run || filters.scope || filters.actor || filters.type || filters.from || filters.to);
  const exportQuery = auditQuery(base);
  const exportHref = (format: string) => dashboardUrl(DashboardPath.exportAuditEvents, {}, new URLSearchParams({ format, ...Object.fromEntries(new URLSearchParams(exportQuery)) }).toString());

  return (
    <>
      {filters.run ? (
        <BackLink href={`/runs/${encodeURIComponent(filters.run)}`}>Back to run {filters.run}</BackLink>
      ) : (
        <BackLink href="/">Runs</BackLink>
      )}
      <div className="page-head">
        <div>
          <h1>Audit log</h1>
          <p className="muted">
            Every change Sagaboard recorded, newest first: who did it, what happened, and when by the database clock (UTC). Events are links of hash chains (one per run, account,
            agent token and tool), so a changed or removed event shows.
          </p>
        </div>
      </div>

      <IntegrityPanel />

      <FilterForm filters={filters} />

      {notice && <p className="notice">{notice}</p>}
      {chain && <ChainStatus chain={chain} />}

      {error || !page ? (
        <div className={`empty ${styles.error}`} role="alert">
          <strong>The audit log could not be read.</strong>
          {error ?? "Something went wrong."} <Link href={auditHref(filters)}>Try again</Link>
        </div>
      ) : (
        <>
          <div className={styles.resultsHead}>
            <p className="muted small">
              {page.events.length === 0
                ? "No events on this page."
                : `${page.events.length} ${page.events.length === 1 ? "event" : "events"}${page.scope ? ` of ${scopeInWords(page.scope)}` : ""}, ${filters.cursor ? "older than the previous page" : "newest first"}.`}
            </p>
            <div className={styles.exports} aria-label="Download these events">
              <span className="muted small">Download {filtered ? "the filtered events" : "the whole log"}:</span>
              <a className="button small" href={exportHref("csv")} download>
                CSV
              </a>
              <a className="button small" href={exportHref("jsonl")} download>
                JSON lines
              </a>
            </div>
          </div>

          {page.searchedBackTo && (
            <p className="notice" data-testid="searched-back">
              Searched back to <Time at={page.searchedBackTo.at} /> (event #{page.searchedBackTo.eventId}) without filling the page: no index serves these filters, so each page
              searches the next 50,000 events. <Link href={auditHref({ ...base, cursor: page.nextCursor ?? undefined })}>Search older events →</Link>
            </p>
          )}

          {page.events.length === 0 ? (
            page.searchedBackTo ? null : filtered || filters.cursor ? (
              <div className="empty">
                <strong>No events match these filters{filters.cursor ? " further back" : ""}.</strong>
                <Link href="/audit">Show the whole log</Link>
              </div>
            ) : (
              <div className="empty">
                <strong>No audit events yet.</strong>
                Events appear here as agents run and people act on runs, accounts, tokens and tools.
              </div>
            )
          ) : (
            <EventsTable events={page.events} filters={base} broken={new Map((chain?.breaks ?? []).map((b) => [b.eventId, BREAK_WORDS[b.kind]]))} />
          )}

          {(filters.cursor || (page.nextCursor && !page.searchedBackTo)) && (
            <div className="pager">
              {filters.cursor && <Link href={auditHref(base)}>Newest</Link>}
              {page.nextCursor && !page.searchedBackTo && <Link href={auditHref({ ...base, cursor: page.nextCursor })}>Older events →</Link>}
            </div>
          )}
        </>
      )}
    </>
  );
}
