"use client";

import Link from "@/components/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState } from "react";
import { formatDuration, LabelledValues, StatusBadge } from "@/components/saga-display";
import {
  ZBulkDecisionResult,
  ZClaimResult,
  ZEscalationQueue,
  type TBulkDecisionResult,
  type TClaimResult,
  type TEscalationQueue,
  type TEscalationQueueItem,
} from "@/lib/desks/escalations/views";
import { EscalationKind, PIVOT_REJECTION_CODES, type PivotRejectionCode } from "@/packages/client/src/saga/vocabulary";
import { errorMessage, LiveMarker, postParsed, useLive } from "./live";
import { kindLabel, REJECTION_CODE_LABELS, systemLabel } from "./labels";
import styles from "./reviewer.module.css";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";
import { FormError, StackTable } from "@/components/section";

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

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** Whether an item matches the search words (title, run, tool, owner, holder, id). */
function matches(item: TEscalationQueueItem, words: string): boolean {
  const q = words.trim().toLowerCase();
  if (!q) return true;
  const text = [item.title, item.run.title, item.run.id, item.tool ?? "", item.owner ?? "", item.claimedBy ?? "", item.id, kindLabel(item.kind)].join(" ").toLowerCase();
  return q.split(/\s+/).every((w) => text.includes(w));
}

/** Held calls a bulk decision may take: unresolved, and not held by someone else. */
function bulkable(item: TEscalationQueueItem, me: string): boolean {
  return item.kind === EscalationKind.APPROVAL_REQUIRED && item.status !== "RESOLVED" && (item.status === "OPEN" || item.claimedBy === me) && item.canWork !== false;
}

/** A bulk decision's answer, with what was asked (the decided rows may leave the open view). */
type BulkOutcome = TBulkDecisionResult & { approve: boolean; asked: TEscalationQueueItem[] };

/**
 * Several held calls of one tool, decided with one reason: each item is claimed and decided on its
 * own and the answer says, per item, what happened. Approving asks once more, because each call
 * then changes what someone sees and nothing takes it back.
 */
function BulkBar({ tool, items, onDone }: { tool: string; items: TEscalationQueueItem[]; onDone: (result: BulkOutcome) => void }) {
  const ids = items.map((i) => i.id);
  const [note, setNote] = useState("");
  // As on the pivot screen: no instruction nobody chose; the agents read the reason as typed.
  const [code, setCode] = useState<PivotRejectionCode>("OTHER");
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  async function send(approve: boolean) {
    if (busy) return;
    setBusy(true);
    setFailure(null);
    try {
      const body = { escalationIds: ids, approve, ...(note.trim() ? { note: note.trim() } : {}), ...(approve ? {} : { reasonCode: code }) };
      onDone({ ...(await postParsed(DashboardPath.decideHeldCalls, ZBulkDecisionResult, body)), approve, asked: items });
      setConfirming(false);
    } catch (e) {
      setFailure(errorMessage(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className={styles.bulkBar} aria-label="Decide the selected held calls" data-testid="bulk-bar">
      <strong>
        {ids.length} held {ids.length === 1 ? "call" : "calls"} of <code>{tool}</code> selected
      </strong>
      <label>
        Reason (each agent is told; required to reject)
        <input value={note} onChange={(e) => setNote(e.target.value)} placeholder="e.g. Approved: the wording was checked." />
      </label>
      <label>
        If rejected, the agents should
        <select value={code} onChange={(e) => setCode(e.target.value as PivotRejectionCode)}>
          {PIVOT_REJECTION_CODES.map((c) => (
            <option key={c} value={c}>
              {REJECTION_CODE_LABELS[c] ?? c}
            </option>
          ))}
        </select>
      </label>
      {confirming ? (
        <div role="alert" className={`warn-line ${styles.bulkConfirm}`}>
          <span>
            Approving lets {ids.length} {ids.length === 1 ? "call" : "calls"} of {tool} run once each; nothing takes them back:
          </span>
          <ul className={styles.bulkList} aria-label="The calls you are approving">
            {items.map((item) => (
              <li key={item.id} data-testid="bulk-item">
                <strong>{item.heldCall?.call ?? item.title}</strong>
                <span className="muted small"> · seen by {item.heldCall?.seenBy ?? "not known: treated as customer-facing"}</span>
                <div className="small">
                  Run <Link href={`/runs/${encodeURIComponent(item.run.id)}`}>{item.run.title}</Link> <span className="muted">({item.run.id})</span>
                </div>
                {item.heldCall && <LabelledValues value={item.heldCall.args} rawLabel="Raw arguments" />}
              </li>
            ))}
          </ul>
          <button type="button" className="button approve" disabled={busy} onClick={() => void send(true)} autoFocus>
            {busy ? "Approving…" : `Approve ${ids.length}`}
          </button>
          <button type="button" className="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="button" className="button approve" disabled={busy} onClick={() => setConfirming(true)}>
          Approve {ids.length}…
        </button>
      )}
      <button type="button" className="button reject" disabled={busy || !note.trim()} onClick={() => void send(false)}>
        {busy ? "Rejecting…" : `Reject ${ids.length}`}
      </button>
      <FormError message={failure} />
    </section>
  );
}

/** The escalation queue: every kind, age, owner, who holds it; claim-once; bulk decisions on held calls. Live. */
export function EscalationQueue({ filters, initial, notice }: { filters: QueueFilters; initial: TEscalationQueue; notice: string | null }) {
  const router = useRouter();
  const qs = queryOf(filters);
  const { data, error, refetch } = useLive<TEscalationQueue>(["escalations", qs], dashboardUrl(DashboardPath.findEscalations, {}, qs), initial, ZEscalationQueue);
  const [notes, setNotes] = useState<Record<string, RowNote>>({});
  const [busy, setBusy] = useState<string | null>(null);
  const [search, setSearch] = useState("");
  const [cursor, setCursor] = useState<number>(-1);
  const [selected, setSelected] = useState<string[]>([]);
  const [bulkResult, setBulkResult] = useState<BulkOutcome | null>(null);
  const searchRef = useRef<HTMLInputElement>(null);
  // Buttons wait for the page to be interactive: a click on the server's first paint would do nothing.
  const [interactive, setInteractive] = useState(false);
  useEffect(() => setInteractive(true), []);
  const rowRefs = useRef<(HTMLTableRowElement | null)[]>([]);
  const base = { view: filters.view, kind: filters.kind, mine: filters.mine };
  const total = Object.values(data.openByKind).reduce((a, b) => a + b, 0);
  const items = data.items.filter((i) => matches(i, search));
  const byId = new Map(data.items.map((i) => [i.id, i]));
  const chosen = selected.map((id) => byId.get(id)).filter((i): i is TEscalationQueueItem => i !== undefined && bulkable(i, data.me));
  const bulkTool = chosen[0]?.tool ?? null;
  const canBulk = data.abilities.canResolve;

  async function act(item: TEscalationQueueItem, action: "claim" | "release") {
    setBusy(item.id);
    try {
      const result: TClaimResult = await postParsed(dashboardUrl(action === "claim" ? DashboardPath.claimEscalation : DashboardPath.releaseEscalation, { escalationId: item.id }), ZClaimResult);
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

  const toggle = useCallback(
    (item: TEscalationQueueItem) => {
      if (!canBulk || !bulkable(item, data.me)) return;
      setSelected((all) => (all.includes(item.id) ? all.filter((id) => id !== item.id) : [...all.filter((id) => byId.get(id)?.tool === item.tool), item.id]));
    },
    [canBulk, data.me, byId],
  );

  // j/k move through the rows, Enter opens one, x selects a held call, / searches.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (isTyping(event.target)) return;
      if (event.key === "/") {
        event.preventDefault();
        searchRef.current?.focus();
        return;
      }
      if (items.length === 0) return;
      if (event.key === "j" || event.key === "k") {
        event.preventDefault();
        const next = event.key === "j" ? Math.min(items.length - 1, cursor + 1) : Math.max(0, cursor - 1);
        setCursor(next);
        rowRefs.current[next]?.focus();
      } else if (event.key === "Enter" && cursor >= 0 && items[cursor] && event.target === rowRefs.current[cursor]) {
        event.preventDefault();
        router.push(`/escalations/${encodeURIComponent(items[cursor].id)}`);
      } else if (event.key === "x" && cursor >= 0 && items[cursor]) {
        event.preventDefault();
        toggle(items[cursor]);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [items, cursor, router, toggle]);

  const emptyMine = filters.mine && data.items.length === 0;

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
            <Link key={view} href={queueHref({ ...base, view, mine: false })} aria-current={filters.view === view && !filters.mine ? "page" : undefined}>
              {view === "open" ? `open (${total})` : view}
            </Link>
          ))}
          <span className="filters-sep" aria-hidden="true" />
          <Link href={queueHref({ ...base, mine: !filters.mine })} aria-current={filters.mine ? "page" : undefined}>
            held by me ({data.mine})
          </Link>
          {filters.kind && (
            <Link href={queueHref({ ...base, kind: undefined })} className="chip-clear" aria-label={`Show every kind, not only ${kindLabel(filters.kind)}`}>
              {kindLabel(filters.kind)} ✕
            </Link>
          )}
        </nav>
        <div className={styles.search}>
          <label htmlFor="queue-search">
            Search this page <kbd>/</kbd>
          </label>
          <input
            id="queue-search"
            ref={searchRef}
            type="search"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            onKeyDown={(e) => {
              // Esc leaves the box and keeps the words (a search box would clear them); j/k then move through what matched.
              if (e.key === "Escape") {
                e.preventDefault();
                e.currentTarget.blur();
              }
            }}
            placeholder="title, run, tool, owner"
          />
        </div>
        <span className="muted small">
          {data.unclaimed} unclaimed · signed in as {data.me}
          {!data.abilities.canClaim && " · you can read the queue but not claim items"}
          {data.abilities.canClaim && data.items.some((i) => i.canWork === false) && " · items without Claim are routed to another team"}
        </span>
      </div>
      <p className="kbd-hint">
        Keyboard: <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>Enter</kbd> opens · <kbd>x</kbd> selects a held call · <kbd>/</kbd> searches
      </p>

      {bulkResult && (
        <section className="banner info" role="status" data-testid="bulk-result">
          <strong>
            {bulkResult.decided} decided ({bulkResult.approve ? "approved" : "rejected"}){bulkResult.skipped > 0 ? `, ${bulkResult.skipped} skipped` : ""}
            {bulkResult.failed > 0 ? `, ${bulkResult.failed} failed` : ""}.
          </strong>
          <ul className={styles.bulkResult} aria-label="Decided">
            {bulkResult.items
              .filter((i) => i.outcome === "decided")
              .map((i) => {
                const asked = bulkResult.asked.find((a) => a.id === i.escalationId);
                return (
                  <li key={i.escalationId}>
                    {bulkResult.approve ? "Approved" : "Rejected"}: {asked?.heldCall?.call ?? asked?.title ?? i.escalationId}
                  </li>
                );
              })}
          </ul>
          {bulkResult.items.some((i) => i.outcome !== "decided") && (
            <ul className={styles.bulkResult}>
              {bulkResult.items
                .filter((i) => i.outcome !== "decided")
                .map((i) => (
                  <li key={i.escalationId}>
                    {byId.get(i.escalationId)?.title ?? i.escalationId}: {i.outcome === "skipped" ? "skipped" : "not decided"}, {i.message}
                  </li>
                ))}
            </ul>
          )}
        </section>
      )}
      {canBulk && bulkTool && chosen.length > 0 && (
        <BulkBar
          tool={bulkTool}
          items={chosen}
          onDone={(result) => {
            setBulkResult(result);
            setSelected([]);
            void refetch();
          }}
        />
      )}

      {data.items.length === 0 ? (
        <div className="empty">
          {emptyMine ? (
            <>
              <strong>You hold nothing right now.</strong>
              {total > 0 ? (
                <>
                  {total} {total === 1 ? "item waits" : "items wait"} in the queue.{" "}
                  <Link className={styles.inlineLink} href={queueHref({ ...base, mine: false, view: "open" })}>
                    Show the open queue
                  </Link>
                </>
              ) : (
                "Nothing waits for a person either."
              )}
            </>
          ) : filters.view === "open" && total === 0 ? (
            <>
              <strong>Nothing waits for a person.</strong>New items appear here within a second of being raised.
            </>
          ) : (
            <>
              <strong>No escalations match.</strong>
              <Link className={styles.inlineLink} href="/escalations">
                Show the open queue
              </Link>
            </>
          )}
        </div>
      ) : items.length === 0 ? (
        <div className="empty">
          <strong>Nothing on this page matches “{search}”.</strong>
          <button type="button" className="link-button" onClick={() => setSearch("")}>
            Clear the search
          </button>
        </div>
      ) : (
        <StackTable className="queue" headers={[canBulk && { label: "Select held calls", hidden: true }, "Kind", "What", "Tool / system", "Owner", { label: "Age", num: true }, "Status", { label: "Actions", hidden: true }]}>
          {items.map((item, idx) => {
            const mineNow = item.status === "CLAIMED" && item.claimedBy === data.me;
            const note = notes[item.id];
            const selectable = canBulk && bulkable(item, data.me);
            const otherTool = bulkTool !== null && item.tool !== bulkTool;
            return (
              <tr
                key={item.id}
                ref={(el) => {
                  rowRefs.current[idx] = el;
                }}
                tabIndex={-1}
                className={[mineNow ? "row-mine" : "", idx === cursor ? styles.selectedRow : ""].join(" ").trim() || undefined}
                data-testid="queue-row"
                onFocus={() => setCursor(idx)}
              >
                {canBulk && (
                  <td data-label="Select">
                    {selectable && (
                      <input
                        type="checkbox"
                        checked={selected.includes(item.id)}
                        disabled={!interactive || (otherTool && !selected.includes(item.id))}
                        onChange={() => toggle(item)}
                        aria-label={`Select the held call “${item.title}”`}
                        title={otherTool ? `Only calls of one tool (${bulkTool}) are decided together` : undefined}
                      />
                    )}
                  </td>
                )}
                <td className="nowrap" data-label="Kind">
                  <span className={`kind kind-${item.kind.toLowerCase()}`}>{kindLabel(item.kind)}</span>
                </td>
                <td data-label="What">
                  <Link href={`/escalations/${encodeURIComponent(item.id)}`}>{item.title}</Link>
                  {item.heldCall && (
                    <div className="small">
                      {item.heldCall.call} <span className="muted">· seen by {item.heldCall.seenBy}</span>
                    </div>
                  )}
                  <div className="muted small">
                    Run <Link href={`/runs/${encodeURIComponent(item.run.id)}`}>{item.run.title}</Link>
                    {item.step && ` · step #${item.step.stepIdx}`}
                  </div>
                </td>
                <td className="nowrap" data-label="Tool">
                  {item.tool ? <code>{item.tool}</code> : <span className="muted">—</span>}
                  {item.system && <div className="cell-label">{systemLabel(item.system)}</div>}
                </td>
                <td className="nowrap" data-label="Owner">
                  {item.owner ?? <span className="muted">unrouted</span>}
                </td>
                <td className={item.status !== "RESOLVED" && item.ageSeconds > 3600 ? "num attention" : "num"} title={item.createdAt} data-label="Age">
                  {formatDuration(item.ageSeconds)}
                </td>
                <td data-label="Status">
                  <div className="cell-stack">
                    <StatusBadge status={item.status} />
                    {item.status === "CLAIMED" && item.claimedBy && <span className="cell-label">{mineNow ? "by you" : `by ${item.claimedBy}`}</span>}
                    {item.status === "RESOLVED" && item.resolvedBy && <span className="cell-label">by {item.resolvedBy === data.me ? "you" : item.resolvedBy}</span>}
                  </div>
                </td>
                <td className="nowrap actions" data-label="Actions">
                  {item.status === "OPEN" && (item.canWork ?? data.abilities.canClaim) && (
                    <button type="button" className="button small primary" disabled={!interactive || busy === item.id} onClick={() => void act(item, "claim")}>
                      {busy === item.id ? "Claiming…" : "Claim"}
                    </button>
                  )}
                  {mineNow && (
                    <>
                      <Link className="button small primary" href={`/escalations/${encodeURIComponent(item.id)}`}>
                        Resolve →
                      </Link>
                      <button type="button" className="button small" disabled={!interactive || busy === item.id} onClick={() => void act(item, "release")}>
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
        </StackTable>
      )}
      <div className="pager">
        {filters.cursor && <Link href={queueHref(base)}>First page</Link>}
        {data.nextCursor && <Link href={queueHref({ ...base, cursor: data.nextCursor })}>Next page →</Link>}
      </div>
    </>
  );
}
