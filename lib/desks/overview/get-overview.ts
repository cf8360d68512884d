/**
 * The overview: what waits for people (by kind and age) and the run-quality figures over a chosen
 * range, bucketed by hour or day. Completion rate alone can hide a trail of damaged state, so these
 * are the figures that show it: irreversible steps executed before the pivot (must be 0), duplicate
 * calls that reconcile prevented, compensations requested vs confirmed, incomplete runs, how long
 * manual repairs take, corrections sent per audience, and revokes and how they ended.
 *
 * Every figure is one indexed read at a million steps. The saga log's own tables carry no index for
 * them on the hot write path: the rows these figures count are rare (irreversible staging steps,
 * compensations, reconciles), so they sit in partial indexes (migration 20261201060000) that a plain
 * step's intent and outcome never write, and the queries here repeat each index's predicate in
 * literal SQL (a bound parameter would not let the planner prove the index applies).
 */
import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { databaseKind, databaseNow } from "@/lib/core/db/dialect";
import { getPrisma } from "@/lib/core/db/prisma";
import { onConnection } from "@/lib/core/db/transactions";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { summarizeRevokes } from "@/lib/desks/revokes/revoke-rules";
import { RevokeOutcome } from "@/lib/desks/revokes/views";
import { EscalationKind, RunStatus } from "@/lib/saga/vocabulary";

/** The ranges a person can choose, and their bucket. */
export const OVERVIEW_RANGES = {
  "24h": { ms: 24 * 3600_000, bucket: "hour" },
  "7d": { ms: 7 * 86400_000, bucket: "day" },
  "30d": { ms: 30 * 86400_000, bucket: "day" },
  "90d": { ms: 90 * 86400_000, bucket: "day" },
} as const;
export type OverviewRange = keyof typeof OVERVIEW_RANGES;
export const ZOverviewRange = z.enum(Object.keys(OVERVIEW_RANGES) as [OverviewRange, ...OverviewRange[]]);

/** Age bands of waiting items. */
export const AGE_BANDS = [
  { key: "under1h", label: "under 1 h", maxMs: 3600_000 },
  { key: "h1to4", label: "1–4 h", maxMs: 4 * 3600_000 },
  { key: "h4to24", label: "4–24 h", maxMs: 24 * 3600_000 },
  { key: "over24h", label: "over 24 h", maxMs: Number.POSITIVE_INFINITY },
] as const;
type AgeKey = (typeof AGE_BANDS)[number]["key"];

/** Kinds of waiting items: pivots, each escalation kind, correction drafts. */
export type WaitingKind = "PIVOT" | EscalationKind | "CORRECTION";

/** Escalation kinds whose resolution is a repair by hand (an approval is a decision, not a repair). */
const REPAIR_KINDS = [EscalationKind.COMPENSATION_FAILED, EscalationKind.OUTCOME_UNKNOWN, EscalationKind.STUCK_AFTER_PIVOT, EscalationKind.REVOKE_OUT_OF_WINDOW];
const INCOMPLETE_STATUSES = [RunStatus.RUNNING, RunStatus.AWAITING_PIVOT, RunStatus.COMMITTING, RunStatus.UNWINDING, RunStatus.NEEDS_ATTENTION];
/** Revokes read per range for their outcomes (the newest first beyond it are counted as not read). */
const REVOKE_LIMIT = 2000;

/** One time bucket of the charts. */
export interface OverviewBucket {
  /** Its start (ISO). */
  start: string;
  irreversibleBeforePivot: number;
  duplicatesPrevented: number;
  compensationsRequested: number;
  compensationsConfirmed: number;
  compensationsFailed: number;
  runsIncomplete: number;
  repairsResolved: number;
  /** Median and 90th percentile of manual repair time in the bucket (seconds; null: none resolved). */
  repairMedianSec: number | null;
  repairP90Sec: number | null;
}

/** The overview of one range. */
export interface Overview {
  range: OverviewRange;
  bucket: "hour" | "day";
  from: string;
  to: string;
  /** What waits for people now, by kind and age band. */
  waiting: { kind: WaitingKind; total: number; ages: Record<AgeKey, number>; oldestAt: string | null }[];
  buckets: OverviewBucket[];
  totals: Omit<OverviewBucket, "start">;
  /** Corrections sent in the range, per audience (a correction to two audiences counts for each). */
  correctionsByAudience: { audience: string; sent: number }[];
  /** Revokes pulled in the range (step revokes; a whole-run pull counts through its steps), by outcome. */
  revokesByOutcome: { outcome: RevokeOutcome; count: number }[];
  /** Revokes in the range beyond REVOKE_LIMIT, not read for their outcome. */
  revokesNotRead: number;
}

function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil(p * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

/** The bucket a time falls in, as the bucket's start in ms. */
function bucketStart(ms: number, bucket: "hour" | "day"): number {
  const size = bucket === "hour" ? 3600_000 : 86400_000;
  return Math.floor(ms / size) * size;
}

/** A stored time column as a Date, whatever text form SQLite holds it in. */
function dateOf(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value === "number") return new Date(value);
  const text = String(value).replace(" ", "T");
  return new Date(/(Z|[+-]\d\d:?\d\d)$/i.test(text) ? text : `${text}Z`);
}

/**
 * Raw SQL pieces that differ between the stores, as text. Every value in these statements is one this
 * module made (times it computed, vocabulary constants), never a person's input, so they are written
 * as literals: the planner then sees the exact predicate a partial index needs, and no SQL fragment
 * object has to cross from one bundle's copy of Prisma's runtime into another's.
 */
function dialect(prisma: PrismaClient) {
  const pg = databaseKind(prisma) === "postgresql";
  return {
    /** A time literal as the column stores it (SQLite: Prisma's ISO text with +00:00; PostgreSQL: timestamp). */
    at: (d: Date) => (pg ? `'${d.toISOString()}'::timestamp` : `'${d.toISOString().replace("Z", "+00:00")}'`),
    /**
     * The hour a time column falls in: `select` as text sortable and parseable (`YYYY-MM-DDTHH`),
     * `group` what to group by. PostgreSQL groups by `date_trunc` and formats each group once: a
     * `to_char` per row cost more than the rest of the scan (59 ms against 26 over 111k steps).
     */
    hour: (column: string) =>
      pg
        ? { select: `to_char(date_trunc('hour', ${column}), 'YYYY-MM-DD"T"HH24')`, group: `date_trunc('hour', ${column})` }
        : { select: `substr(replace(${column}, ' ', 'T'), 1, 13)`, group: "1" },
    /** A JSON member as text. */
    jsonText: (column: string, member: string) => (pg ? `(${column}->>'${member}')` : `json_extract(${column}, '$.${member}')`),
  };
}

/** `YYYY-MM-DDTHH` back to the hour's start in ms. */
function hourMs(hour: string): number {
  return Date.parse(`${hour}:00:00.000Z`);
}

/** The overview of the range ending now (database clock), for a person who may read the dashboard. */
export async function getOverview({ actor, range = "7d" }: PersonRequest<{ range?: OverviewRange }>): Promise<Overview> {
  assertCan(actor, "read");
  return readOverview(await getPrisma(), range);
}

/** The overview of the range ending now (database clock), read from `prisma` (benches and tests read their own database). */
export async function readOverview(prisma: PrismaClient, range: OverviewRange = "7d"): Promise<Overview> {
  const { ms, bucket } = OVERVIEW_RANGES[range];
  const sql = dialect(prisma);
  const now = await onConnection(prisma, () => databaseNow(prisma));
  const to = new Date(bucketStart(now.getTime(), bucket) + (bucket === "hour" ? 3600_000 : 86400_000));
  const from = new Date(to.getTime() - ms);
  const [F, T] = [sql.at(from), sql.at(to)];
  const cutoffs = AGE_BANDS.slice(0, -1).map((b) => sql.at(new Date(now.getTime() - b.maxMs)));
  const band = `CASE WHEN "createdAt" >= ${cutoffs[0]} THEN 0 WHEN "createdAt" >= ${cutoffs[1]} THEN 1 WHEN "createdAt" >= ${cutoffs[2]} THEN 2 ELSE 3 END`;
  const incomplete = INCOMPLETE_STATUSES.map((s) => `'${s}'`).join(", ");
  type Count = { h: string; n: number | bigint };
  type Waiting = { kind: string; band: number | bigint; n: number | bigint; oldest: unknown };
  const query = <T>(text: string) => prisma.$queryRawUnsafe<T[]>(text);

  const [createdHour, atHour, requestedHour] = [sql.hour('"createdAt"'), sql.hour('"at"'), sql.hour('"compensationRequestedAt"')];

  // The statements are independent: on PostgreSQL they run side by side on the pool, so a page waits
  // for the slowest one instead of their sum; on SQLite (one connection) they still run one by one.
  const rows = await onConnection(prisma, async () => {
    const [pivots, escalations, drafts, irreversible, duplicates, compensations, incompleteRuns, repairs, corrections, revokes, revokeCount] = await Promise.all([
      query<Waiting>(`SELECT 'PIVOT' AS kind, ${band} AS band, COUNT(*) AS n, MIN("createdAt") AS oldest FROM "Pivot" WHERE "status" = 'PENDING' GROUP BY 2`),
      query<Waiting>(`SELECT "kind" AS kind, ${band} AS band, COUNT(*) AS n, MIN("createdAt") AS oldest FROM "Escalation" WHERE "status" IN ('OPEN', 'CLAIMED') GROUP BY 1, 2`),
      query<Waiting>(`SELECT 'CORRECTION' AS kind, ${band} AS band, COUNT(*) AS n, MIN("createdAt") AS oldest FROM "Correction" WHERE "status" = 'DRAFT' GROUP BY 2`),
      // Partial index Step_irreversible_staging_idx: the predicate's literals are repeated here.
      query<Count>(`SELECT ${createdHour.select} AS h, COUNT(*) AS n FROM "Step"
        WHERE "toolClass" = 'IRREVERSIBLE' AND "phase" = 'STAGING' AND "createdAt" >= ${F} AND "createdAt" < ${T} AND "status" NOT IN ('NOT_EXECUTED', 'FAILED') GROUP BY ${createdHour.group}`),
      // Partial index AuditEvent_step_reconciled_idx: a reconcile that found the effect is a blind retry (a duplicate) prevented.
      query<Count>(`SELECT ${atHour.select} AS h, COUNT(*) AS n FROM "AuditEvent"
        WHERE "type" = 'step.reconciled' AND "at" >= ${F} AND "at" < ${T} AND ${sql.jsonText('"data"', "outcome")} = 'CONFIRMED' GROUP BY ${atHour.group}`),
      // Partial index Step_compensation_requested_idx, by when the compensation was requested.
      query<Count & { state: string }>(`SELECT ${requestedHour.select} AS h, "compensationState" AS state, COUNT(*) AS n FROM "Step"
        WHERE "compensationRequestedAt" IS NOT NULL AND "compensationRequestedAt" >= ${F} AND "compensationRequestedAt" < ${T} GROUP BY ${requestedHour.group}, 2`),
      // Only the unfinished statuses (the status index): counting every run of a 90-day range would read
      // every run at scale, and a healthy system has few unfinished ones.
      query<Count>(`SELECT ${createdHour.select} AS h, COUNT(*) AS n FROM "Run"
        WHERE "status" IN (${incomplete}) AND "createdAt" >= ${F} AND "createdAt" < ${T} GROUP BY ${createdHour.group}`),
      prisma.escalation.findMany({
        where: { status: "RESOLVED", resolvedAt: { gte: from, lt: to }, kind: { in: REPAIR_KINDS }, NOT: { resolvedBy: "sla" } },
        select: { createdAt: true, resolvedAt: true },
      }),
      prisma.correction.findMany({ where: { status: "SENT", sentAt: { gte: from, lt: to } }, select: { audience: true } }),
      prisma.revoke.findMany({ where: { requestedAt: { gte: from, lt: to }, NOT: { kind: "RUN" } }, orderBy: [{ requestedAt: "desc" }, { id: "desc" }], take: REVOKE_LIMIT }),
      prisma.revoke.count({ where: { requestedAt: { gte: from, lt: to }, NOT: { kind: "RUN" } } }),
    ]);
    return { waiting: [...pivots, ...escalations, ...drafts], irreversible, duplicates, compensations, incomplete: incompleteRuns, repairs, corrections, revokes, revokeCount };
  });

  const size = bucket === "hour" ? 3600_000 : 86400_000;
  const buckets = new Map<number, OverviewBucket>();
  for (let t = from.getTime(); t < to.getTime(); t += size) {
    buckets.set(t, { start: new Date(t).toISOString(), irreversibleBeforePivot: 0, duplicatesPrevented: 0, compensationsRequested: 0, compensationsConfirmed: 0, compensationsFailed: 0, runsIncomplete: 0, repairsResolved: 0, repairMedianSec: null, repairP90Sec: null });
  }
  const at = (hour: string) => buckets.get(bucketStart(hourMs(hour), bucket));
  const add = (list: Count[], key: keyof OverviewBucket) => {
    for (const r of list) {
      const b = at(r.h);
      if (b) (b[key] as number) += Number(r.n);
    }
  };
  add(rows.irreversible, "irreversibleBeforePivot");
  add(rows.duplicates, "duplicatesPrevented");
  add(rows.incomplete, "runsIncomplete");
  for (const r of rows.compensations) {
    const b = at(r.h);
    if (!b) continue;
    b.compensationsRequested += Number(r.n);
    if (r.state === "CONFIRMED") b.compensationsConfirmed += Number(r.n);
    if (r.state === "FAILED") b.compensationsFailed += Number(r.n);
  }
  const repairTimes = new Map<number, number[]>();
  const allRepairs: number[] = [];
  for (const r of rows.repairs) {
    if (!r.resolvedAt) continue;
    const sec = Math.max(0, Math.round((r.resolvedAt.getTime() - r.createdAt.getTime()) / 1000));
    const key = bucketStart(r.resolvedAt.getTime(), bucket);
    repairTimes.set(key, [...(repairTimes.get(key) ?? []), sec]);
    allRepairs.push(sec);
  }
  for (const [key, times] of repairTimes) {
    const b = buckets.get(key);
    if (!b) continue;
    const sorted = [...times].sort((x, y) => x - y);
    b.repairsResolved = sorted.length;
    b.repairMedianSec = percentile(sorted, 0.5);
    b.repairP90Sec = percentile(sorted, 0.9);
  }

  const list = [...buckets.values()];
  const sum = (key: keyof OverviewBucket) => list.reduce((s, b) => s + (b[key] as number), 0);
  const sortedRepairs = allRepairs.sort((x, y) => x - y);

  const waiting = new Map<WaitingKind, Overview["waiting"][number]>();
  for (const kind of ["PIVOT", ...Object.values(EscalationKind), "CORRECTION"] as WaitingKind[]) waiting.set(kind, { kind, total: 0, ages: { under1h: 0, h1to4: 0, h4to24: 0, over24h: 0 }, oldestAt: null });
  for (const r of rows.waiting) {
    const w = waiting.get(r.kind as WaitingKind);
    if (!w) continue;
    const n = Number(r.n);
    w.total += n;
    w.ages[AGE_BANDS[Number(r.band)]!.key] += n;
    const oldest = dateOf(r.oldest).toISOString();
    if (!w.oldestAt || oldest < w.oldestAt) w.oldestAt = oldest;
  }

  const audiences = new Map<string, number>();
  for (const c of rows.corrections) for (const a of new Set(Array.isArray(c.audience) ? c.audience.filter((x): x is string => typeof x === "string") : [])) audiences.set(a, (audiences.get(a) ?? 0) + 1);
  const outcomes = new Map<RevokeOutcome, number>();
  for (const s of await summarizeRevokes(prisma, rows.revokes)) outcomes.set(s.outcome, (outcomes.get(s.outcome) ?? 0) + 1);

  return {
    range,
    bucket,
    from: from.toISOString(),
    to: to.toISOString(),
    waiting: [...waiting.values()],
    buckets: list,
    totals: {
      irreversibleBeforePivot: sum("irreversibleBeforePivot"),
      duplicatesPrevented: sum("duplicatesPrevented"),
      compensationsRequested: sum("compensationsRequested"),
      compensationsConfirmed: sum("compensationsConfirmed"),
      compensationsFailed: sum("compensationsFailed"),
      runsIncomplete: sum("runsIncomplete"),
      repairsResolved: sortedRepairs.length,
      repairMedianSec: percentile(sortedRepairs, 0.5),
      repairP90Sec: percentile(sortedRepairs, 0.9),
    },
    correctionsByAudience: [...audiences].map(([audience, sent]) => ({ audience, sent })).sort((a, b) => b.sent - a.sent || a.audience.localeCompare(b.audience)),
    // Step revokes only: a whole run's outcomes (unwinding, done) are told through its steps' rows.
    revokesByOutcome: Object.values(RevokeOutcome)
      .filter((o) => o !== RevokeOutcome.unwinding && o !== RevokeOutcome.done)
      .map((outcome) => ({ outcome, count: outcomes.get(outcome) ?? 0 })),
    revokesNotRead: Math.max(0, rows.revokeCount - rows.revokes.length),
  };
}
