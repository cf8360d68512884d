"use client";

import Link from "@/components/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { formatDuration } from "@/components/saga-display";
import { errorMessage, LiveMarker, postParsed, useLive } from "@/components/dashboard/live";
import { ZCorrectionClaimResult, ZCorrectionQueue, type TCorrectionClaimResult, type TCorrectionQueue, type TCorrectionQueueItem } from "@/lib/desks/corrections/views";
import { drafterLabel, rankLabel, SEND_LABELS, STATE_LABELS } from "./labels";
import styles from "./corrections.module.css";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";

/** The queue's filters, as the address carries them. */
export interface CorrectionFilters {
  /** open (default), draft, claimed, sending, sent, dismissed, all */
  status: string;
  /** Only this audience. */
  audience?: string | undefined;
  /** Only this run. */
  runId?: string | undefined;
  /** The page after this correction (the previous page's `nextCursor`). */
  cursor?: string | undefined;
}

function queryOf(f: CorrectionFilters): string {
  const params = new URLSearchParams();
  if (f.status && f.status !== "open") params.set("status", f.status);
  if (f.audience) params.set("audience", f.audience);
  if (f.runId) params.set("run", f.runId);
  if (f.cursor) params.set("cursor", f.cursor);
  return params.toString();
}

function href(f: CorrectionFilters): string {
  const qs = queryOf(f);
  return qs ? `/corrections?${qs}` : "/corrections";
}

function apiQuery(f: CorrectionFilters): string {
  const params = new URLSearchParams();
  if (f.status) params.set("status", f.status);
  if (f.audience) params.set("audience", f.audience);
  if (f.runId) params.set("runId", f.runId);
  if (f.cursor) params.set("cursor", f.cursor);
  return params.toString();
}

function claimNote(result: TCorrectionClaimResult): string | null {
  if (result.ok) return null;
  switch (result.reason) {
    case "held":
      return `Held by ${result.heldByName ? `${result.heldByName} (${result.heldBy})` : result.heldBy}`;
    case "closed":
      return `Already ${STATE_LABELS[result.state].toLowerCase()}`;
    case "not_claimed":
      return "Nobody holds it any more";
  }
}

/** A correction's state badge, with "outcome unknown" when a send timed out. */
export function StateBadge({ item }: { item: Pick<TCorrectionQueueItem, "state" | "send"> }) {
  return (
    <>
      <span className={`${styles.state} ${styles[`state-${item.state}`] ?? ""}`}>{STATE_LABELS[item.state]}</span>
      {item.state === "sending" && item.send !== "none" && (
        <div>
          <span className={item.send === "outcome_unknown" || item.send === "refused" ? styles.unknown : "muted small"}>{SEND_LABELS[item.send]}</span>
        </div>
      )}
    </>
  );
}

const FILTERS = [
  ["open", "open"],
  ["draft", "draft"],
  ["claimed", "claimed"],
  ["sending", "sending"],
  ["sent", "sent"],
  ["dismissed", "dismissed"],
  ["all", "all"],
] as const;

/** The correction queue: internal first, customer last, oldest first within a rank; claim-once. Live. */
export function CorrectionQueue({ filters, initial, notice }: { filters: CorrectionFilters; initial: TCorrectionQueue; notice: string | null }) {
  const router = useRouter();
  const qs = apiQuery(filters);
  const { data, error, refetch } = useLive<TCorrectionQueue>(["corrections", qs], dashboardUrl(DashboardPath.findCorrections, {}, qs), initial, ZCorrectionQueue);
  const [notes, setNotes] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState<string | null>(null);
  const c = data.counts;
  const countOf = (key: string) => (key === "open" ? c.draft + c.claimed + c.sending : key === "all" ? Object.values(c).reduce((a, b) => a + b, 0) : (c[key as keyof typeof c] ?? 0));

  async function claim(item: TCorrectionQueueItem) {
    setBusy(item.id);
    try {
      const result = await postParsed(dashboardUrl(DashboardPath.claimCorrection, { correctionId: item.id }), ZCorrectionClaimResult);
      const note = claimNote(result);
      if (result.ok) {
        router.push(`/corrections/${encodeURIComponent(item.id)}`);
        return;
      }
      setNotes((n) => ({ ...n, [item.id]: note ?? "" }));
      await refetch();
    } catch (e) {
      setNotes((n) => ({ ...n, [item.id]: errorMessage(e) }));
    } finally {
      setBusy(null);
    }
  }

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Corrections</h1>
          <p className="muted">
            Messages that answer an effect nobody can take back. Internal ones first, customers last; oldest first within each. Claim one to edit and send it, or to dismiss it with a reason.
          </p>
        </div>
        <LiveMarker error={error} />
      </div>

      {notice && <p className="notice">{notice}</p>}

      <div className="toolbar">
        <nav className="filters" aria-label="Filter corrections">
          {FILTERS.map(([key, label]) => (
            <Link key={key} href={href({ ...filters, status: key, cursor: undefined })} aria-current={filters.status === key ? "page" : undefined}>
              {label} ({countOf(key)})
            </Link>
          ))}
          {(filters.audience || filters.runId) && <span className="filters-sep" aria-hidden="true" />}
          {filters.audience && (
            <Link href={href({ ...filters, audience: undefined, cursor: undefined })} className="chip-clear">
              audience: {filters.audience} ✕
            </Link>
          )}
          {filters.runId && (
            <Link href={href({ ...filters, runId: undefined, cursor: undefined })} className="chip-clear">
              run {filters.runId} ✕
            </Link>
          )}
        </nav>
        <span className="muted small">
          signed in as {data.me}
          {!data.canHandle && " · you can read corrections; handling them needs the support role"}
        </span>
      </div>

      {data.items.length === 0 ? (
        <div className="empty">
          <strong>{filters.status === "open" && !filters.audience && !filters.runId ? "No correction waits for support." : "No corrections match these filters."}</strong>
          {filters.status === "open" ? "Drafts appear here when an unwind or a revoke answers an effect people saw." : <Link href="/corrections">Show the open queue</Link>}
        </div>
      ) : (
        <div className="table-wrap">
          <table className="queue">
            <thead>
              <tr>
                <th className={styles.wideOnly}>Audience</th>
                <th>Correction</th>
                <th className={styles.wideOnly}>To</th>
                <th className={`num ${styles.wideOnly}`}>Age</th>
                <th>Status</th>
                <th aria-label="Actions" className={styles.wideOnly} />
              </tr>
            </thead>
            <tbody>
              {data.items.map((item) => {
                const mine = item.claimedBy === data.me;
                const actions = (
                  <>
                      {data.canHandle && item.state === "draft" ? (
                        <button type="button" className="button small primary" disabled={busy !== null} onClick={() => void claim(item)}>
                          Claim
                        </button>
                      ) : (
                        <Link href={`/corrections/${encodeURIComponent(item.id)}`} className="button small">
                          {mine && item.state === "claimed" ? "Work it" : "Open"}
                        </Link>
                      )}
                      {notes[item.id] && (
                        <div className="row-note bad" role="status">
                          {notes[item.id]}
                        </div>
                      )}
                  </>
                );
                return (
                  <tr key={item.id} className={mine && item.state === "claimed" ? "row-mine" : undefined}>
                    <td className={`nowrap ${styles.wideOnly}`}>
                      <span className={`radius radius-${item.rank}`}>{rankLabel(item.rank)}</span>
                      <div className="cell-label">
                        <Link href={href({ ...filters, audience: item.audience[0], cursor: undefined })}>{item.audience.join(", ")}</Link>
                      </div>
                    </td>
                    <td>
                      <Link href={`/corrections/${encodeURIComponent(item.id)}`}>{item.subject}</Link>
                      <div className="muted small">
                        Answers step #{item.step.stepIdx} <code>{item.step.tool}</code> of run{" "}
                        <Link href={`/runs/${encodeURIComponent(item.run.id)}`}>{item.run.title}</Link> · drafted by {drafterLabel(item.draftedBy)}
                      </div>
                      <div className={`${styles.narrowOnly} small`}>
                        <span className={`radius radius-${item.rank}`}>{rankLabel(item.rank)}</span> to {item.recipients.join(", ") || "nobody yet"} ·{" "}
                        {formatDuration(item.ageSeconds)} old · <span className={`${styles.sla} ${styles[`sla-${item.sla.state}`] ?? ""}`}>{item.sla.label}</span>
                      </div>
                    </td>
                    <td className={styles.wideOnly}>{item.recipients.length ? item.recipients.join(", ") : <span className="muted">nobody yet</span>}</td>
                    <td className={`num nowrap ${styles.wideOnly}`} title={item.createdAt}>
                      {formatDuration(item.ageSeconds)}
                      <div className={`${styles.sla} ${styles[`sla-${item.sla.state}`] ?? ""}`}>{item.sla.label}</div>
                    </td>
                    <td>
                      <StateBadge item={item} />
                      {item.claimedBy && item.state === "claimed" && <div className="muted small">{mine ? "held by you" : `held by ${item.claimedByName ?? item.claimedBy}`}</div>}
                      <div className={styles.narrowOnly}>{actions}</div>
                    </td>
                    <td className={`nowrap ${styles.wideOnly}`}>{actions}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <div className="pager">
        {filters.cursor && <Link href={href({ ...filters, cursor: undefined })}>Longest waiting</Link>}
        {data.nextCursor && <Link href={href({ ...filters, cursor: data.nextCursor })}>Next page →</Link>}
      </div>
    </>
  );
}
