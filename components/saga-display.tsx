// Small presentational pieces shared by the dashboard's pages (server and client): badges, times,
// durations and JSON. No hooks, so both server and client components can use them.

import type { ReactNode } from "react";
import { factsOf } from "@/lib/desks/audit/event-words";

/** Colour families of a status badge. */
type Tone = "good" | "pending" | "bad" | "done" | "active";

// One map for every vocabulary: the values that repeat (CONFIRMED, FAILED) mean the same thing
// everywhere, so they share a colour.
const TONE_BY_STATUS: Record<string, Tone> = {
  // StepStatus
  CONFIRMED: "good",
  INTENDED: "pending",
  UNKNOWN: "pending",
  FAILED: "bad",
  COMPENSATION_FAILED: "bad",
  // StepStanding: a failed undo a person answered by hand (packages/client/src/saga/step-standing.ts)
  REPAIRED_BY_HAND: "good",
  COMPENSATED: "done",
  NOT_EXECUTED: "done",
  // CompensationState
  NONE: "done",
  REQUESTED: "pending",
  // RunStatus
  RUNNING: "active",
  AWAITING_PIVOT: "pending",
  COMMITTING: "active",
  COMPLETED: "good",
  UNWINDING: "pending",
  UNWOUND: "done",
  NEEDS_ATTENTION: "bad",
  // PivotStatus
  PENDING: "pending",
  APPROVED: "good",
  REJECTED: "bad",
  // EscalationStatus
  OPEN: "pending",
  CLAIMED: "active",
  RESOLVED: "done",
  // CorrectionStatus
  DRAFT: "pending",
  SENT: "good",
  DISMISSED: "done",
  // ToolStatus
  UNREVIEWED: "pending",
  REVIEWED: "good",
  DISABLED: "bad",
};

/** A status of any vocabulary, coloured by what it means for the person reading. */
export function StatusBadge({ status }: { status: string }) {
  const tone = TONE_BY_STATUS[status] ?? "done";
  return <span className={`badge status-${tone}`}>{status.replaceAll("_", " ")}</span>;
}

/** A tool class; irreversible ones stand out. */
export function ClassBadge({ toolClass }: { toolClass: string }) {
  return <span className={`badge class-badge class-${toolClass.toLowerCase()}`}>{toolClass}</span>;
}

/** `2026-11-29 18:59:01` in UTC, so every reader sees the same clock as the audit log. */
export function formatUtc(date: Date | string): string {
  return toDate(date).toISOString().slice(0, 19).replace("T", " ");
}

function toDate(value: Date | string): Date {
  return typeof value === "string" ? new Date(value) : value;
}

/** A database timestamp (a Date, or its ISO string from JSON), or a dash when there is none. */
export function Time({ at }: { at: Date | string | null | undefined }) {
  if (!at) return <span className="muted">—</span>;
  const date = toDate(at);
  return (
    <time dateTime={date.toISOString()} title={`${date.toISOString()} (UTC)`}>
      {formatUtc(date)}
    </time>
  );
}

/** A duration in the largest two units a person reads at a glance: `45s`, `12m 5s`, `3h 20m`, `2d 4h`. */
export function formatDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const pair = (big: number, bigUnit: string, small: number, smallUnit: string) => (small > 0 ? `${big}${bigUnit} ${small}${smallUnit}` : `${big}${bigUnit}`);
  if (s < 60) return `${s}s`;
  if (s < 3_600) return pair(Math.floor(s / 60), "m", s % 60, "s");
  if (s < 86_400) return pair(Math.floor(s / 3_600), "h", Math.floor((s % 3_600) / 60), "m");
  return pair(Math.floor(s / 86_400), "d", Math.floor((s % 86_400) / 3_600), "h");
}

/** How far `until` is from `now`: "in 3h 20m", or "3h 20m ago" once it has passed. */
export function Countdown({ until, now }: { until: string | null; now: string }) {
  if (!until) return <span className="muted">—</span>;
  const seconds = (new Date(until).getTime() - new Date(now).getTime()) / 1000;
  const text = seconds >= 0 ? `in ${formatDuration(seconds)}` : `${formatDuration(-seconds)} ago`;
  return (
    <span className={seconds < 0 ? "countdown passed" : seconds < 3600 ? "countdown soon" : "countdown"} title={`${until} (UTC)`}>
      {text}
    </span>
  );
}

/**
 * JSON on one logical line with a space after every `:` and `,` (outside strings), so narrow table
 * cells wrap between values instead of in the middle of a word.
 */
export function formatCompactJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(formatCompactJson).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    const fields = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${formatCompactJson(v)}`);
    return `{${fields.join(", ")}}`;
  }
  return JSON.stringify(value) ?? String(value);
}

/** The currency `source` names (a call's arguments), or null. */
function currencyNamedBy(source: unknown): string | null {
  return source !== null && typeof source === "object" && !Array.isArray(source) && typeof (source as Record<string, unknown>).currency === "string" ? ((source as Record<string, unknown>).currency as string) : null;
}

/** A JSON value, compact and wrapping, or a dash for null. */
export function CompactJson({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  return <code className="json">{formatCompactJson(value)}</code>;
}

/** Monospace text for ids, keys and hashes, or a dash when empty. */
export function Mono({ text, title }: { text: string | null | undefined; title?: string }) {
  if (!text) return <span className="muted">—</span>;
  return (
    <code className="mono" title={title}>
      {text}
    </code>
  );
}

/** One labelled fact of a facts list (`<dl className="facts-list">`). */
export function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="fact-row">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** Labelled values, one line each (`amount  €120.00`). */
export function FactList({ facts }: { facts: readonly { label: string; value: ReactNode }[] }) {
  return (
    <dl className="values">
      {facts.map((fact, i) => (
        <div key={`${fact.label}-${i}`}>
          <dt>{fact.label}</dt>
          <dd>{fact.value}</dd>
        </div>
      ))}
    </dl>
  );
}

/**
 * A JSON value as labelled values a person reads (a tool call's arguments, an error, an escalation's
 * detail: amounts as money), with the raw JSON one click away in a <details>.
 */
export function LabelledValues({
  value,
  label,
  rawLabel = "Raw JSON",
  currencyOf,
}: {
  value: unknown;
  /** The label of a value that is not an object. */
  label?: string;
  /** The summary of the raw form. */
  rawLabel?: string;
  /** Arguments whose `currency` an amount here is in when it names none (an undo's refund of a charge): money reads alike beside them. */
  currencyOf?: unknown;
}) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  const facts = factsOf(value, label, currencyNamedBy(currencyOf));
  if (facts.length === 0 && typeof value === "object" && Object.keys(value).length === 0) return <span className="muted">no arguments</span>;
  return (
    <div className="labelled-values">
      {facts.length === 0 ? (
        <span className="muted">none</span>
      ) : (
        <FactList facts={facts} />
      )}
      <details className="raw-inline">
        <summary>{rawLabel}</summary>
        <code className="json">{formatCompactJson(value)}</code>
      </details>
    </div>
  );
}
