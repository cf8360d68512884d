/**
 * Turning times into ranges of AuditEvent ids, without an index on `at`: ids grow with time (every
 * event is appended with the database clock at its commit), so the first id at or after a time is
 * found by a binary search over the primary key, about 20 one-row reads at a million events.
 *
 * The clock and the id agree only roughly: two app instances on PostgreSQL, or a transaction that
 * waited for a lock, can append an event a little after one that carries a later time. So the ranges
 * are widened by CLOCK_SLACK_MS on each side, and the caller still filters on `at` exactly.
 */
import type { Db } from "@/lib/core/db/dialect";

/** How far an event's time may run ahead of the next id's, at most (for widening id ranges). */
export const CLOCK_SLACK_MS = 60_000;

/**
 * The smallest and largest id in the table (null when it is empty): two one-row reads at the ends of
 * the primary key. (Prisma's aggregate wraps min and max in a subquery that SQLite answers by
 * reading every row.)
 */
export async function auditIdBounds(db: Db): Promise<{ min: number; max: number } | null> {
  const first = await db.auditEvent.findFirst({ orderBy: { id: "asc" }, select: { id: true } });
  const last = await db.auditEvent.findFirst({ orderBy: { id: "desc" }, select: { id: true } });
  return first && last ? { min: first.id, max: last.id } : null;
}

/**
 * The smallest id whose event is at or after `time`, or `bounds.max + 1` when none is: a binary
 * search that reads one row by the primary key per probe (ids may have gaps; each probe takes the
 * first row at or above its guess).
 */
export async function firstIdAtOrAfter(db: Db, time: Date, bounds: { min: number; max: number }): Promise<number> {
  let lo = bounds.min;
  let hi = bounds.max + 1;
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const probe = await db.auditEvent.findFirst({ where: { id: { gte: mid } }, orderBy: { id: "asc" }, select: { id: true, at: true } });
    if (!probe || probe.id >= hi) hi = mid;
    else if (probe.at < time) lo = probe.id + 1;
    else hi = probe.id;
  }
  return lo;
}
