/**
 * The overview: what waits for people (by kind and age) and the run-quality figures over a chosen
 * range, bucketed by hour or day. Completion rate alone can hide a trail of damaged state, so these
 * are the figures that show it: irreversible steps executed before the pivot (must be 0), duplicate
 * calls that reconcile prevented, compensations requested vs confirmed, incomplete runs, how long
 * manual repairs take, corrections sent per audience, and revokes and how they ended.
 *
 * Every figure is one indexed read at a million steps. The saga log's own tables carry no index for
 * them on the hot write path: the rows these figures count are rare (irreversible staging steps,
 * reconciles), so they sit in partial indexes (migration 20261201060000) that a plain step's intent and
 * outcome never write, and the queries here repeat each index's predicate in literal SQL (a bound
 * parameter would not let the planner prove the index applies). Two figures grow with the log faster
 * than a range's hours (compensations, 111k per 90 days at a million steps, and duplicates prevented):
 * they are read from hourly counts the database keeps beside the log (fold-overview-counts.ts).
 */
import * as z from "zod";
import { Prisma, type PrismaClient } from "@/generated/prisma";
import { databaseKind, databaseNow } from "@/lib/core/db/dialect";
import { getPrisma } from "@/lib/core/db/prisma";
import { dateOf, readRows } from "@/lib/core/db/raw-read";
import { onConnection } from "@/lib/core/db/transactions";
import { sharedReadPer } from "@/lib/core/db/shared-read";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { summarizeRevokes } from "@/lib/desks/revokes/revoke-rules";
import { RevokeOutcome } from "@/lib/desks/revokes/views";
import { EscalationKind, RunStatus } from "@/packages/client/src/saga/vocabulary";
import { OVERVIEW_METRICS } from "./fold-overview-counts";

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

/** The bucket a time falls in, as the bucket's start in ms. */
function bucketStart(ms: number, bucket: "hour" | "day"): number {
  const size = bucket === "hour" ? 3600_000 : 86400_000;
  return Math.floor(ms / size) * size;
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
     * The bucket a time column falls in: `select` as text sortable and parseable (`YYYY-MM-DDTHH` for
     * an hour, `YYYY-MM-DD` for a day), `group` what to group by. PostgreSQL groups by `date_trunc`
     * and formats each group once: a `to_char` per row cost more than the rest of the scan (59 ms
     * against 26 over 111k steps).
     */
    bucket: (column: string, bucket: "hour" | "day") => {
      const label = (truncated: string) => (pg ? `to_char(${truncated}, '${bucket === "hour" ? 'YYYY-MM-DD"T"HH24' : "YYYY-MM-DD"}')` : truncated);
      const truncated = pg ? `date_trunc('${bucket}', ${column})` : `substr(replace(${column}, ' ', 'T'), 1, ${bucket === "hour" ? 13 : 10})`;
      /** `truncated` is the bucket to group rows by, `label(...)` turns it into the text above once per group. */
      return { select: label(truncated), group: pg ? truncated : "1", truncated, label };
    },
    /** Whole milliseconds from one time column to another (float arithmetic, then rounded: exact to well under 1 ms). */
    msBetween: (start: string, end: string) =>
      pg ? `round(date_part('epoch', ${end} - ${start}) * 1000)::bigint` : `CAST(round((julianday(${end}) - julianday(${start})) * 86400000) AS INTEGER)`,
    /**
     * Each correction sent in [F, T) once per distinct audience it names (text members of its JSON
     * array only), counted per audience.
     */
    sentPerAudience: (F: string, T: string) =>
      pg
        ? `SELECT a.value #>> '{}' AS audience, COUNT(DISTINCT c."id") AS n FROM "Correction" c
             CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(c."audience") = 'array' THEN c."audience" ELSE '[]'::jsonb END) AS a(value)
             WHERE c."status" = 'SENT' AND c."sentAt" >= ${F} AND c."sentAt" < ${T} AND jsonb_typeof(a.value) = 'string' GROUP BY 1`
        : `SELECT a."value" AS audience, COUNT(DISTINCT c."id") AS n FROM "Correction" c,
             json_each(CASE WHEN json_type(c."audience") = 'array' THEN c."audience" ELSE '[]' END) AS a
             WHERE c."status" = 'SENT' AND c."sentAt" >= ${F} AND c."sentAt" < ${T} AND a."type" = 'text' GROUP BY 1`,
  };
}

/** `YYYY-MM-DDTHH` (an hour) or `YYYY-MM-DD` (a day) back to its start in ms. */
function periodMs(period: string): number {
  return Date.parse(period.length === 10 ? `${period}T00:00:00.000Z` : `${period}:00:00.000Z`);
}

/**
 * The overview of the range ending now (database clock), for a person who may read the dashboard. It is
 * the same for every person, so people who open it together share one read per range that began after
 * they asked (SharedRead): sixteen at once cost two reads, not sixteen, and none sees figures older
 * than its own request. Treat the result as read-only; the callers sharing it get the same object.
 */
export async function getOverview({ actor, range = "7d" }: PersonRequest<{ range?: OverviewRange }>): Promise<Overview> {
  assertCan(actor, "read");
  return sharedOverviews[range](await getPrisma());
}

const sharedOverviews = Object.fromEntries(
  (Object.keys(OVERVIEW_RANGES) as OverviewRange[]).map((range) => [range, sharedReadPer((prisma: PrismaClient) => readOverview(prisma, range))]),
) as Record<OverviewRange, (prisma: PrismaClient) => Promise<Overview>>;

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
  // On the driver (lib/core/db/raw-read.ts): no ORM runtime between these rows and the figures.
  const query = <T>(text: string) => readRows<T>(prisma, Prisma.raw(text));

  const created = sql.bucket('"createdAt"', bucket);
  // Manual repair times in whole seconds (as a person reads them), per bucket of their resolution
  // and over the range (bucket NULL); the median and p90 are picked in SQL by rank: the ceil(p * n)-th
  // smallest (nearest rank), so no row of the range crosses to this process. `r` is read twice (per
  // bucket, over the range): MATERIALIZED reads the escalations once on SQLite too (PostgreSQL already
  // does; 15.4 -> 12.7 ms over 2,282 repairs at 1M steps on SQLite).
  const resolved = sql.bucket('"resolvedAt"', bucket);
  const repairKinds = REPAIR_KINDS.map((k) => `'${k}'`).join(", ");
  const repairSql = `WITH r AS MATERIALIZED (
      SELECT b, CASE WHEN ms < 0 THEN 0 ELSE (ms + 500) / 1000 END AS sec FROM (
        SELECT ${resolved.truncated} AS b, ${sql.msBetween('"createdAt"', '"resolvedAt"')} AS ms FROM "Escalation"
        WHERE "status" = 'RESOLVED' AND "resolvedAt" >= ${F} AND "resolvedAt" < ${T} AND "kind" IN (${repairKinds}) AND ("resolvedBy" IS NULL OR "resolvedBy" <> 'sla')
      ) AS t
    ), ranked AS (
      SELECT b, sec, ROW_NUMBER() OVER (PARTITION BY b ORDER BY sec) AS rn, COUNT(*) OVER (PARTITION BY b) AS cnt FROM r
      UNION ALL
      SELECT NULL AS b, sec, ROW_NUMBER() OVER (ORDER BY sec) AS rn, COUNT(*) OVER () AS cnt FROM r
    )
    SELECT ${resolved.label("b")} AS h, cnt AS n, MAX(CASE WHEN rn = (cnt + 1) / 2 THEN sec END) AS p50, MAX(CASE WHEN rn = (9 * cnt + 9) / 10 THEN sec END) AS p90 FROM ranked GROUP BY b, cnt`;
  // The counts' periods: `YYYY-MM-DDTHH` for an hour, `YYYY-MM-DD` for a day (UTC; the range's ends are whole buckets).
  const period = (d: Date) => d.toISOString().slice(0, bucket === "hour" ? 13 : 10);
  const counted = Object.values(OVERVIEW_METRICS).map((m) => `'${m}'`).join(", ");

  // The statements are independent: on PostgreSQL they run side by side on the pool, so a page waits
  // for the slowest one instead of their sum; on SQLite (one connection) they still run one by one.
  const rows = await onConnection(prisma, async () => {
    const [pivots, escalations, drafts, irreversible, hourly, incompleteRuns, repairs, corrections, revokes, revokeCount] = await Promise.all([
      query<Waiting>(`SELECT 'PIVOT' AS kind, ${band} AS band, COUNT(*) AS n, MIN("createdAt") AS oldest FROM "Pivot" WHERE "status" = 'PENDING' GROUP BY 2`),
      query<Waiting>(`SELECT "kind" AS kind, ${band} AS band, COUNT(*) AS n, MIN("createdAt") AS oldest FROM "Escalation" WHERE "status" IN ('OPEN', 'CLAIMED') GROUP BY 1, 2`),
      query<Waiting>(`SELECT 'CORRECTION' AS kind, ${band} AS band, COUNT(*) AS n, MIN("createdAt") AS oldest FROM "Correction" WHERE "status" = 'DRAFT' GROUP BY 2`),
      // Partial index Step_irreversible_staging_idx: the predicate's literals are repeated here.
      query<Count>(`SELECT ${created.select} AS h, COUNT(*) AS n FROM "Step"
        WHERE "toolClass" = 'IRREVERSIBLE' AND "phase" = 'STAGING' AND "createdAt" >= ${F} AND "createdAt" < ${T} AND "status" NOT IN ('NOT_EXECUTED', 'FAILED') GROUP BY ${created.group}`),
      // Counts kept by triggers, per bucket (fold-overview-counts.ts): the bucket's counts plus the
      // deltas not yet folded, in one statement, so a fold running meanwhile is seen whole or not at all.
      query<Count & { metric: string; key: string }>(`SELECT "metric" AS metric, "period" AS h, "key" AS key, SUM("n") AS n FROM (
          SELECT "metric", "period", "key", "n" FROM "OverviewCount"
            WHERE "metric" IN (${counted}) AND "span" = '${bucket}' AND "period" >= '${period(from)}' AND "period" < '${period(to)}'
          UNION ALL
          SELECT "metric", substr("hour", 1, ${period(from).length}), "key", "n" FROM "OverviewDelta"
            WHERE "metric" IN (${counted}) AND "hour" >= '${from.toISOString().slice(0, 13)}' AND "hour" < '${to.toISOString().slice(0, 13)}'
        ) AS c GROUP BY "metric", "period", "key"`),
      // Only the unfinished statuses (the status index): counting every run of a 90-day range would read
      // every run at scale, and a healthy system has few unfinished ones.
      query<Count>(`SELECT ${created.select} AS h, COUNT(*) AS n FROM "Run"
        WHERE "status" IN (${incomplete}) AND "createdAt" >= ${F} AND "createdAt" < ${T} GROUP BY ${created.group}`),
      query<{ h: string | null; n: number | bigint; p50: number | bigint | null; p90: number | bigint | null }>(repairSql),
      query<{ audience: string; n: number | bigint }>(sql.sentPerAudience(F, T)),
      prisma.revoke.findMany({ where: { requestedAt: { gte: from, lt: to }, NOT: { kind: "RUN" } }, orderBy: [{ requestedAt: "desc" }, { id: "desc" }], take: REVOKE_LIMIT }),
      prisma.revoke.count({ where: { requestedAt: { gte: from, lt: to }, NOT: { kind: "RUN" } } }),
    ]);
    return { waiting: [...pivots, ...escalations, ...drafts], irreversible, hourly, incomplete: incompleteRuns, repairs, corrections, revokes, revokeCount };
  });

  const size = bucket === "hour" ? 3600_000 : 86400_000;
  const buckets = new Map<number, OverviewBucket>();
  for (let t = from.getTime(); t < to.getTime(); t += size) {
    buckets.set(t, { start: new Date(t).toISOString(), irreversibleBeforePivot: 0, duplicatesPrevented: 0, compensationsRequested: 0, compensationsConfirmed: 0, compensationsFailed: 0, runsIncomplete: 0, repairsResolved: 0, repairMedianSec: null, repairP90Sec: null });
  }
  const at = (period: string) => buckets.get(bucketStart(periodMs(period), bucket));
  const add = (list: Count[], key: keyof OverviewBucket) => {
    for (const r of list) {
      const b = at(r.h);
      if (b) (b[key] as number) += Number(r.n);
    }
  };
  add(rows.irreversible, "irreversibleBeforePivot");
  add(rows.incomplete, "runsIncomplete");
  for (const r of rows.hourly) {
    const b = at(r.h);
    if (!b) continue;
    const n = Number(r.n);
    if (r.metric === OVERVIEW_METRICS.duplicatePrevented) b.duplicatesPrevented += n;
    if (r.metric !== OVERVIEW_METRICS.compensation) continue;
    b.compensationsRequested += n;
    if (r.key === "CONFIRMED") b.compensationsConfirmed += n;
    if (r.key === "FAILED") b.compensationsFailed += n;
  }
  let allRepairs: { n: number; p50: number | null; p90: number | null } = { n: 0, p50: null, p90: null };
  for (const r of rows.repairs) {
    const figures = { n: Number(r.n), p50: r.p50 === null ? null : Number(r.p50), p90: r.p90 === null ? null : Number(r.p90) };
    if (r.h === null) {
      allRepairs = figures;
      continue;
    }
    const b = at(r.h);
    if (!b) continue;
    b.repairsResolved = figures.n;
    b.repairMedianSec = figures.p50;
    b.repairP90Sec = figures.p90;
  }

  const list = [...buckets.values()];
  const sum = (key: keyof OverviewBucket) => list.reduce((s, b) => s + (b[key] as number), 0);

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
      repairsResolved: allRepairs.n,
      repairMedianSec: allRepairs.p50,
      repairP90Sec: allRepairs.p90,
    },
    correctionsByAudience: rows.corrections.map((c) => ({ audience: c.audience, sent: Number(c.n) })).sort((a, b) => b.sent - a.sent || a.audience.localeCompare(b.audience)),
    // Step revokes only: a whole run's outcomes (unwinding, done) are told through its steps' rows.
    revokesByOutcome: Object.values(RevokeOutcome)
      .filter((o) => o !== RevokeOutcome.unwinding && o !== RevokeOutcome.done)
      .map((outcome) => ({ outcome, count: outcomes.get(outcome) ?? 0 })),
    revokesNotRead: Math.max(0, rows.revokeCount - rows.revokes.length),
  };
}
