"use client";

// The audit log's filters. A plain GET form to /audit (it works without JavaScript); with it, empty
// fields are left out of the address, so a filtered view is a short link to share.

import Link from "@/components/link";
import { useRouter } from "next/navigation";
import type { FormEvent } from "react";
import styles from "./audit.module.css";

/** Event types to suggest in the type filter: the families, then the common ones. */
const TYPE_SUGGESTIONS = ["run.", "step.", "compensation.", "pivot.", "escalation.", "correction.", "task.", "user.", "agent_token.", "tool.", "step.confirmed", "step.unknown", "pivot.approved", "escalation.resolved"];

/** The filters the form shows (the address's, each optional). */
export interface FilterFormValues {
  /** Run id. */
  run?: string | undefined;
  /** Chain scope. */
  scope?: string | undefined;
  /** Actor prefix. */
  actor?: string | undefined;
  /** Event type prefix. */
  type?: string | undefined;
  /** UTC time the events start at. */
  from?: string | undefined;
  /** UTC time the events end at (its whole day, minute...). */
  to?: string | undefined;
}

export function FilterForm({ filters }: { filters: FilterFormValues }) {
  const router = useRouter();

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(event.currentTarget)) if (typeof value === "string" && value.trim()) params.set(name, value.trim());
    const qs = params.toString();
    router.push(qs ? `/audit?${qs}` : "/audit");
  }

  return (
    <form className={`panel ${styles.filterForm}`} action="/audit" method="get" role="search" aria-label="Filter the audit log" onSubmit={submit}>
      {filters.scope && !filters.run && <input type="hidden" name="scope" value={filters.scope} />}
      <div className={styles.fields}>
        <div className={styles.fieldWide}>
          <label htmlFor="audit-run">Run</label>
          <input id="audit-run" type="text" name="run" defaultValue={filters.run ?? ""} placeholder="run_…" autoComplete="off" />
        </div>
        <div className={styles.fieldWide}>
          <label htmlFor="audit-actor">Who (starts with)</label>
          <input id="audit-actor" type="text" name="actor" defaultValue={filters.actor ?? ""} placeholder="user:… or agent:…" autoComplete="off" />
        </div>
        <div className={styles.fieldWide}>
          <label htmlFor="audit-type">Event type (starts with)</label>
          <input id="audit-type" type="text" name="type" defaultValue={filters.type ?? ""} placeholder="step. or pivot.approved" list="audit-types" autoComplete="off" />
          <datalist id="audit-types">
            {TYPE_SUGGESTIONS.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </div>
        <div>
          <label htmlFor="audit-from">From (UTC)</label>
          <input id="audit-from" type="text" name="from" defaultValue={filters.from ?? ""} placeholder="2026-12-01" autoComplete="off" />
        </div>
        <div>
          <label htmlFor="audit-to">To (UTC, included)</label>
          <input id="audit-to" type="text" name="to" defaultValue={filters.to ?? ""} placeholder="2026-12-01" autoComplete="off" />
        </div>
      </div>
      <div className={styles.formActions}>
        <button type="submit" className="button small primary">
          Show events
        </button>
        {filters.scope && !filters.run && <span className="muted small">Chain {filters.scope}</span>}
        <Link href="/audit">Clear filters</Link>
      </div>
    </form>
  );
}
