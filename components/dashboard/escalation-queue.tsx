"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { formatDuration, StatusBadge } from "@/components/saga-display";
import type { TClaimResult, TEscalationQueue, TEscalationQueueItem } from "@/lib/dashboard/views";
import { EscalationKind } from "@/lib/saga/vocabulary";
import { errorMessage, LiveMarker, postJson, useLive } from "./live";
import { kindLabel, systemLabel } from "./labels";

/** The queue's filters, as the address carries them. */
export interface QueueFilters {
  /** open | resolved | all */
  view: "open" | "resolved" | "all";
  /** Only this kind. */
  kind?: string | undefined;
  /** Only items I hold. */
  mine: boolean;
  /** Paging cursor. */
  cursor?: string | undefined;
}

function queryOf(f: Partial<QueueFilters>): string {
  const params = new URLSearchParams();
  if (f.view && f.view !== "open") params.set("view", f.view);
  if (f.kind) params.set("kind", f.kind);
  if (f.mine) params.set("mine", "1");
  if (f.cursor) params.set("cursor", f.cursor);
  return params.toString();
}

function queueHref(f: Partial<QueueFilters>): string {
  const qs = queryOf(f);
  return qs ? `/escalations?${qs}` : "/escalations";
}

/** What a claim attempt said, per row. */
type RowNote = { tone: "bad" | "info"; text: string };

function claimNote(result: TClaimResult): RowNote | null {
  if (result.ok) return null;
  switch (result.reason) {
    case "held":
      return { tone: "bad", text: `Held by ${result.heldByName ? `${result.heldByName} (${result.heldBy})` : result.heldBy}` };
    case "resolved":
      return { tone: "info", text: `Already resolved by ${result.resolvedBy ?? "someone"}` };
    case "not_claimed":
      return { tone: "info", text: "Nobody holds it any more" };
  }
}

/** The escalation queue: every kind, age, owner, who holds it; claim-once. Live. */
export function EscalationQueue({ filters, initial, notice }: { filters: QueueFilters; initial: TEscalationQueue; notice: string | null }) {
  const router = useRouter();
  const qs = queryOf(filters);
  const { data, error, refetch } = useLive<TEscalationQueue>(["escalations", qs], `/api/dashboard/escalations${qs ? `?${qs}` : ""}`, initial);
  const [notes, setNotes] = useState<Record<string, RowNote>>({});
  const [busy, setBusy] = useState<string | null>(null);
  const base = { view: filters.view, kind: filters.kind, mine: filters.mine };
  const total = Object.values(data.openByKind).reduce((a, b) => a + b, 0);

  async function act(item: TEscalationQueueItem, action: "claim" | "release") {
    setBusy(item.id);
    try {
      const result = await postJson<TClaimResult>(`/api/dashboard/escalations/${encodeURIComponent(item.id)}/${action}`);
      const note = claimNote(result);
      setNotes((n) => {
        const next = { ...n };
        if (note) next[item.id] = note;
        else delete next[item.id];
        return next;
      });
      if (result.ok && action === "claim") router.push(`/escalations/${encodeURIComponent(item.id)}`);
      else await refetch();
    } catch (e) {
      setNotes((n) => ({ ...n, [item.id]: { tone: "bad", text: errorMessage(e) } }));
    } finally {
      setBusy(null);
    }
  }

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Escalations</h1>
          <p className="muted">Items a person must handle, oldest first. Claim one to work it: nobody else can while you hold it.</p>
        </div>
        <LiveMarker error={error} />
      </div>

      <section className="waiting" aria-label="Open escalations by kind">
        {Object.values(EscalationKind).map((kind) => {
          const n = data.openByKind[kind] ?? 0;
          return (
            <Link key={kind} href={queueHref({ ...base, view: "open", kind })} className={n > 0 ? "tile hot" : "tile"} aria-current={filters.kind === kind ? "page" : undefined}>
              <span className="tile-value">{n}</span>
              <span className="tile-label">{kindLabel(kind)}</span>
            </Link>
          );
        })}
      </section>

      {notice && <p className="notice">{notice}</p>}

      <div className="toolbar">
        <nav className="filters" aria-label="Filter escalations">
          {(["open", "resolved", "all"] as const).map((view) => (
            <Link key={view} href={queueHref({ ...base, view })} aria-current={filters.view === view && !filters.mine ? "page" : undefined}>
              {view === "open" ? `open (${total})` : view}
            </Link>
          ))}
          <span className="filters-sep" aria-hidden="true" />
          <Link href={queueHref({ ...base, mine: !filters.mine })} aria-current={filters.mine ? "page" : undefined} aria-pressed={filters.mine}>
            held by me ({data.mine})
          </Link>
          {filters.kind && (
            <Link href={queueHref({ ...base, kind: undefined })} className="chip-clear">
              {kindLabel(filters.kind)} ✕
            </Link>
          )}
        </nav>
        <span className="muted small">
          {data.unclaimed} unclaimed · signed in as {data.me}
          {!data.abilities.canClaim && " · you can read the queue but not claim items"}
          {data.abilities.canClaim && data.items.some((i) => i.canWork === false) && " · items without Claim are routed to another team"}
        </span>
      </div>

      {data.items.length === 0 ? (
        <div className="empty">
          <strong>{filters.view === "open" ? "Nothing waits for a person." : "No escalations match."}</strong>
          {filters.view === "open" ? "New items appear here within a second of being raised." : <Link href="/escalations">Show the open queue</Link>}
        </div>
      ) : (
        <div className="table-wrap">
          <table className="queue">
            <thead>
              <tr>
                <th>Kind</th>
                <th>What</th>
                <th>Tool / system</th>
                <th>Owner</th>
                <th className="num">Age</th>
                <th>Status</th>
                <th aria-label="Actions" />
              </tr>
            </thead>
            <tbody>
              {data.items.map((item) => {
                const mineNow = item.status === "CLAIMED" && item.claimedBy === data.me;
                const note = notes[item.id];
                return (
                  <tr key={item.id} className={mineNow ? "row-mine" : undefined}>
                    <td className="nowrap">
                      <span className={`kind kind-${item.kind.toLowerCase()}`}>{kindLabel(item.kind)}</span>
                    </td>
                    <td>
                      <Link href={`/escalations/${encodeURIComponent(item.id)}`}>{item.title}</Link>
                      <div className="muted small">
                        Run <Link href={`/runs/${encodeURIComponent(item.run.id)}`}>{item.run.title}</Link>
                        {item.step && ` · step #${item.step.stepIdx}`}
                      </div>
                    </td>
                    <td className="nowrap">
                      {item.tool ? <code>{item.tool}</code> : <span className="muted">—</span>}
                      {item.system && <div className="cell-label">{systemLabel(item.system)}</div>}
                    </td>
                    <td className="nowrap">{item.owner ?? <span className="muted">unrouted</span>}</td>
                    <td className={item.status !== "RESOLVED" && item.ageSeconds > 3600 ? "num attention" : "num"} title={item.createdAt}>
                      {formatDuration(item.ageSeconds)}
                    </td>
                    <td>
                      <div className="cell-stack">
                        <StatusBadge status={item.status} />
                        {item.claimedBy && item.status === "CLAIMED" && <span className="cell-label">{mineNow ? "by you" : `by ${item.claimedBy}`}</span>}
                        {item.resolvedBy && <span className="cell-label">by {item.resolvedBy}</span>}
                      </div>
                    </td>
                    <td className="nowrap actions">
                      {item.status === "OPEN" && (item.canWork ?? data.abilities.canClaim) && (
                        <button type="button" className="button small primary" disabled={busy === item.id} onClick={() => void act(item, "claim")}>
                          {busy === item.id ? "Claiming…" : "Claim"}
                        </button>
                      )}
                      {mineNow && (
                        <>
                          <Link className="button small primary" href={`/escalations/${encodeURIComponent(item.id)}`}>
                            Resolve →
                          </Link>
                          <button type="button" className="button small" disabled={busy === item.id} onClick={() => void act(item, "release")}>
                            Release
                          </button>
                        </>
                      )}
                      {note && (
                        <div className={note.tone === "bad" ? "row-note bad" : "row-note"} role="status">
                          {note.text}
                        </div>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <div className="pager">
        {filters.cursor && <Link href={queueHref(base)}>First page</Link>}
        {data.nextCursor && <Link href={queueHref({ ...base, cursor: data.nextCursor })}>Next page →</Link>}
      </div>
    </>
  );
}
