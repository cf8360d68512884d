/**
 * Times people type into the audit log's filters (`2026-12-01`, `2026-12-01T10:30`, a full ISO time),
 * read as UTC, the clock the log is written in. A time names a span as long as its precision: a day,
 * a minute, a second, a millisecond. "From" starts at the beginning of its span and "to" includes the
 * whole of its span, so `from=2026-12-01&to=2026-12-01` is that whole day.
 */

const TIME_PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?(Z|[+-]\d{2}:\d{2})?$/;

/** The span a typed time names: its first instant and the instant after its last. */
export interface TimeSpan {
  /** The first millisecond of the span. */
  start: Date;
  /** The first millisecond after it (exclusive). */
  end: Date;
}

/** The span of `text`, or null when it is not a time of the accepted forms (or not a real date). */
export function parseAuditTime(text: string): TimeSpan | null {
  const m = TIME_PATTERN.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s, ms, zone] = m;
  if (zone && !h) return null; // an offset without a time of day means nothing
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), Number((ms ?? "0").padEnd(3, "0"))] as const;
  const local = Date.UTC(...fields);
  const check = new Date(local);
  // Date.UTC rolls 2026-02-30 over to March; a date that does not exist is refused instead.
  if (check.getUTCFullYear() !== fields[0] || check.getUTCMonth() !== fields[1] || check.getUTCDate() !== fields[2] || fields[3] > 23 || fields[4] > 59 || fields[5] > 59) return null;
  const offsetMin = !zone || zone === "Z" ? 0 : (zone.startsWith("-") ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  const start = local - offsetMin * 60_000;
  const unit = !h ? 86_400_000 : s === undefined ? 60_000 : ms === undefined ? 1000 : 1;
  return { start: new Date(start), end: new Date(start + unit) };
}

/** What to tell someone whose time was not understood. */
export const AUDIT_TIME_HINT = "use a UTC date or time such as 2026-12-01, 2026-12-01T10:30 or 2026-12-01T10:30:15Z";
