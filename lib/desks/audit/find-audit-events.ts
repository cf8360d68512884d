/**
 * The audit log, newest first, filtered and paged: the /audit page, its JSON route and its exports.
 *
 * The AuditEvent table has one index besides its primary key, the unique (scope, seq): every logged
 * tool call writes two events, and each further index would cost each call two more writes. So:
 * - a run (or any one chain, by its scope) is read through that index, newest link first;
 * - every other filter (actor, event type, time) pages through the primary key, newest first, and
 *   reads at most AUDIT_SCAN_WINDOW ids per request. When the window runs out before the page is
 *   full, the answer says how far back it searched (`searchedBackTo`) and gives a cursor to go on,
 *   instead of scanning a million rows for a filter that matches none of them;
 * - a time range becomes a range of ids first (lib/desks/audit/audit-id-range.ts), so "last Tuesday" starts
 *   its window at last Tuesday, not at today.
 */
import { z } from "zod";
import type { Prisma } from "@/generated/prisma";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { withDb } from "@/lib/desks/dashboard/context";
import type { Db } from "@/lib/core/db/dialect";
import { runScope } from "@/packages/client/src/saga/store";
import { toAuditEventView } from "./audit-event-view";
import { auditIdBounds, CLOCK_SLACK_MS, firstIdAtOrAfter } from "./audit-id-range";
import { AUDIT_TIME_HINT, parseAuditTime } from "./audit-time";
import type { TAuditEventsPage } from "./views";

/** How many ids one request may read past, at most, when no chain is named. */
export const AUDIT_SCAN_WINDOW = 50_000;

/** The largest page a caller may ask for. */
export const MAX_AUDIT_PAGE = 500;

const TimeText = z
  .string()
  .trim()
  .min(1)
  .refine((text) => parseAuditTime(text) !== null, { message: AUDIT_TIME_HINT });

/** The filters of the audit log (every field optional), without paging. */
export const ZAuditFilterFields = z.object({
  /** Only this run's events (its chain, `run:<id>`: the indexed path). */
  run: z.string().trim().min(1).max(200).optional(),
  /** Only this chain (`user:usr_...`, `agent-token:tok_...`, `tool:send_email`, `run:run_...`). */
  scope: z.string().trim().min(1).max(300).optional(),
  /** Only events whose actor starts with this (`user:ada@example.com`, `agent:`, `system:worker`). */
  actor: z.string().trim().min(1).max(300).optional(),
  /** Only events whose type starts with this (`step.` for every step event, `step.confirmed`). */
  type: z.string().trim().min(1).max(200).optional(),
  /** Only events at or after the start of this UTC time (`2026-12-01`, `2026-12-01T10:30`, ISO). */
  from: TimeText.optional(),
  /** Only events up to the end of this UTC time (a date includes that whole day). */
  to: TimeText.optional(),
});

/** The checks across filter fields (a schema with refinements cannot be extended, so each schema adds them). */
export function checkAuditFilters(query: z.output<typeof ZAuditFilterFields>, ctx: z.RefinementCtx): void {
  if (query.run && query.scope && query.scope !== runScope(query.run)) {
    ctx.addIssue({ code: "custom", path: ["scope"], message: `names chain ${query.scope} but run names ${runScope(query.run)}; give one of them` });
  }
  const from = query.from ? parseAuditTime(query.from) : null;
  const to = query.to ? parseAuditTime(query.to) : null;
  if (from && to && to.end <= from.start) ctx.addIssue({ code: "custom", path: ["to"], message: "is before from; swap them" });
}

/** Filters and paging of the audit log; every field is optional. */
export const ZFindAuditEventsRequest = ZAuditFilterFields.extend({
  /** The `nextCursor` of the previous page: events with smaller ids. */
  cursor: z.string().trim().regex(/^\d{1,15}$/, "must be the nextCursor of a previous page").optional(),
  /** Page size. */
  take: z.coerce.number().int().min(1).max(MAX_AUDIT_PAGE).default(50),
}).superRefine(checkAuditFilters);
/** What callers pass to `findAuditEvents`. */
export type TFindAuditEventsRequest = z.input<typeof ZFindAuditEventsRequest>;

/** The filters, checked and read: what the readers below apply. */
export interface AuditFilter {
  /** The one chain to read, if any. */
  scope: string | null;
  /** Actor prefix. */
  actor: string | null;
  /** Type prefix. */
  type: string | null;
  /** Events at or after this time. */
  from: Date | null;
  /** Events before this time. */
  before: Date | null;
}

/** The filter of a parsed request. */
export function auditFilterOf(query: z.output<typeof ZAuditFilterFields>): AuditFilter {
  return {
    scope: query.run ? runScope(query.run) : (query.scope ?? null),
    actor: query.actor ?? null,
    type: query.type ?? null,
    from: query.from ? (parseAuditTime(query.from)?.start ?? null) : null,
    before: query.to ? (parseAuditTime(query.to)?.end ?? null) : null,
  };
}

/**
 * One page of the audit log, newest first. Throws a ZodError when a filter is malformed (a time
 * that is not one, a page size out of range, a run and a scope that disagree).
 */
export async function findAuditEvents({ actor, filters = {} }: PersonRequest<{ filters?: TFindAuditEventsRequest }>): Promise<TAuditEventsPage> {
  assertCan(actor, "read");
  // The filters sit apart: one of them is named `actor` too (whose events to show).
  const query = ZFindAuditEventsRequest.parse(filters);
  const filter = auditFilterOf(query);
  return withDb((prisma) => readAuditPage(prisma, filter, query.cursor ? Number(query.cursor) : null, query.take));
}

/** Whether a row really matches the prefixes (SQL's LIKE also lets `_` match any character, and ignores case on SQLite). */
function matches(filter: AuditFilter, row: { actor: string; type: string }): boolean {
  return (filter.actor === null || row.actor.startsWith(filter.actor)) && (filter.type === null || row.type.startsWith(filter.type));
}

function columnFilters(filter: AuditFilter): Prisma.AuditEventWhereInput {
  const where: Prisma.AuditEventWhereInput = {};
  if (filter.actor !== null) where.actor = { startsWith: filter.actor };
  if (filter.type !== null) where.type = { startsWith: filter.type };
  if (filter.from || filter.before) where.at = { ...(filter.from ? { gte: filter.from } : {}), ...(filter.before ? { lt: filter.before } : {}) };
  return where;
}

/**
 * One page of events matching `filter` with ids below `cursor` (all when null), searching at most
 * `window` ids when no chain is named. No authorisation: for the use cases of this folder, which
 * check the caller first. Reads with `db` only.
 */
export async function readAuditPage(db: Db, filter: AuditFilter, cursor: number | null, take: number, window = AUDIT_SCAN_WINDOW): Promise<TAuditEventsPage> {
  return filter.scope !== null ? readChainPage(db, filter, filter.scope, cursor, take) : readWindowPage(db, filter, cursor, take, window);
}

/** A page of candidates (SQL matches, one more than a page) turned into the answer. */
function pageOf(filter: AuditFilter, rows: Parameters<typeof toAuditEventView>[0][], take: number) {
  const candidates = rows.slice(0, take);
  return {
    events: candidates.filter((r) => matches(filter, r)).map(toAuditEventView),
    more: rows.length > take,
    lastId: candidates.at(-1)?.id ?? null,
  };
}

/** One chain, through the (scope, seq) index, newest link first (ids grow with seq within a chain). */
async function readChainPage(db: Db, filter: AuditFilter, scope: string, cursor: number | null, take: number): Promise<TAuditEventsPage> {
  const rows = await db.auditEvent.findMany({
    where: { scope, ...(cursor !== null ? { id: { lt: cursor } } : {}), ...columnFilters(filter) },
    orderBy: { seq: "desc" },
    take: take + 1,
  });
  const page = pageOf(filter, rows, take);
  return { events: page.events, nextCursor: page.more && page.lastId !== null ? String(page.lastId) : null, searchedBackTo: null, scope };
}

/** The whole log, by the primary key, newest first, at most `window` ids per call. */
async function readWindowPage(db: Db, filter: AuditFilter, cursor: number | null, take: number, window: number): Promise<TAuditEventsPage> {
  const empty: TAuditEventsPage = { events: [], nextCursor: null, searchedBackTo: null, scope: null };
  const bounds = await auditIdBounds(db);
  if (!bounds) return empty;
  let low = bounds.min;
  let high = bounds.max + 1; // exclusive
  if (cursor !== null) high = Math.min(high, cursor);
  // A cursor already lies below `to` (it came from a page that applied it); only the first page searches.
  else if (filter.before) high = Math.min(high, await firstIdAtOrAfter(db, new Date(filter.before.getTime() + CLOCK_SLACK_MS), bounds));
  if (filter.from) low = Math.max(low, await firstIdAtOrAfter(db, new Date(filter.from.getTime() - CLOCK_SLACK_MS), bounds));
  if (high <= low) return empty;

  const windowLow = Math.max(low, high - window);
  const rows = await db.auditEvent.findMany({
    where: { id: { gte: windowLow, lt: high }, ...columnFilters(filter) },
    orderBy: { id: "desc" },
    take: take + 1,
  });
  const page = pageOf(filter, rows, take);
  if (page.more && page.lastId !== null) return { events: page.events, nextCursor: String(page.lastId), searchedBackTo: null, scope: null };
  if (windowLow <= low) return { events: page.events, nextCursor: null, searchedBackTo: null, scope: null };
  // The window ran out first: say how far back it reached, and go on below it next time.
  const oldest = await db.auditEvent.findFirst({ where: { id: { gte: windowLow } }, orderBy: { id: "asc" }, select: { id: true, at: true } });
  return {
    events: page.events,
    nextCursor: String(windowLow),
    searchedBackTo: oldest ? { eventId: oldest.id, at: oldest.at.toISOString() } : null,
    scope: null,
  };
}
