import { z } from "zod";
import { Prisma } from "@/generated/prisma";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { ZEscalationKind } from "@/packages/client/src/protocol/schemas/saga";
import { type TRunsPage, type TWaitingCounts } from "./views";
import { containsIgnoringCaseSql, databaseKind, runSearchCandidates } from "@/lib/core/db/dialect";
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import type { DatabaseKind } from "@/lib/core/db/url";
import { onConnection } from "@/lib/core/db/transactions";
import { sharedReadPer } from "@/lib/core/db/shared-read";
import { countOf, dateOf, readRows } from "@/lib/core/db/raw-read";
import { CorrectionStatus, EscalationKind, EscalationStatus, PivotStatus, RunStatus } from "@/packages/client/src/saga/vocabulary";

export { ZRunListItem, ZRunsPage, ZWaitingCounts, type TRunListItem, type TRunsPage, type TWaitingCounts } from "./views";

/** Escalation statuses that still need a person (claimed items are being handled, not done). */
const OPEN_ESCALATION_STATUSES: EscalationStatus[] = [EscalationStatus.OPEN, EscalationStatus.CLAIMED];

/** The largest page a caller may ask for. */
export const MAX_RUNS_PAGE = 200;

/** Filters, search and paging for the runs list. */
export const ZFindRunsRequest = z.object({
  /** Only runs in this status. */
  status: z.enum(RunStatus).optional(),
  /** Only runs of this agent. */
  agent: z.string().trim().min(1).max(200).optional(),
  /** Only runs where something waits for a person: a pivot, an escalation, a correction draft. */
  needsAttention: z.boolean().optional(),
  /** Search: the customer the run acts for (part of it), a run id, or an external ref of one of its effects. */
  q: z.string().trim().min(1).max(200).optional(),
  /** The `nextCursor` of the previous page (a run id). */
  cursor: z.string().trim().min(1).optional(),
  /** Page size. */
  take: z.number().int().min(1).max(MAX_RUNS_PAGE).default(50),
});

/** What callers pass to `findRuns` (every field optional). */
export type TFindRunsRequest = z.input<typeof ZFindRunsRequest>;

/** The run statuses that wait for a person by themselves. */
const ATTENTION_RUN_STATUSES: RunStatus[] = [RunStatus.NEEDS_ATTENTION, RunStatus.AWAITING_PIVOT];

/**
 * Runs where something waits for a person: a status that waits, an open escalation, a correction
 * draft. Two forms of the same test, for the two ways `pageOfRuns` finds such runs:
 * - NEEDS_ATTENTION gathers every such run (uncorrelated IN: each list is read once per statement, a
 *   hashed subplan on PostgreSQL, a multi-index OR on SQLite) and sorts them: bounded by what waits
 *   for people, whatever the log's size;
 * - NEEDS_ATTENTION_HERE tests one run (correlated EXISTS through the runId indexes), for a scan of
 *   the newest runs that stops once the page is full.
 */
const NEEDS_ATTENTION = Prisma.sql`(r."status" IN (${Prisma.join(ATTENTION_RUN_STATUSES)})
  OR r."id" IN (SELECT e."runId" FROM "Escalation" e WHERE e."status" IN (${Prisma.join(OPEN_ESCALATION_STATUSES)}))
  OR r."id" IN (SELECT c."runId" FROM "Correction" c WHERE c."status" = ${CorrectionStatus.DRAFT}))`;
const NEEDS_ATTENTION_HERE = Prisma.sql`(r."status" IN (${Prisma.join(ATTENTION_RUN_STATUSES)})
  OR EXISTS (SELECT 1 FROM "Escalation" e WHERE e."runId" = r."id" AND e."status" IN (${Prisma.join(OPEN_ESCALATION_STATUSES)}))
  OR EXISTS (SELECT 1 FROM "Correction" c WHERE c."runId" = r."id" AND c."status" = ${CorrectionStatus.DRAFT}))`;

/**
 * How many of the newest runs (those the other filters leave) the needs-attention list scans before
 * it gathers every waiting run instead. Where runs wait often (a backlog), the page fills within a few
 * hundred; where they are rare, the scan ends here and the gathering is cheap because they are few.
 */
const ATTENTION_SCAN = 2000;

/**
 * Runs matching a search: on-behalf-of (part, any case), run id, or an effect's (or compensation's)
 * external ref. The refs are looked up first (`refRunIds`, through the Step indexes on both columns):
 * as a correlated subquery they were read per scanned run, a million step reads on a 100k-run
 * database for a search that matches nothing. The on-behalf-of part goes through a trigram index on
 * both stores: PostgreSQL's pg_trgm serves the ILIKE itself; on SQLite, where LIKE '%...%' reads
 * every run (~11 ms at 100k runs), `runSearchCandidates` names the few runs that can match and the
 * filter checks only those. When it cannot (`customerRunIds` null: a short text, or a common one),
 * the filter scans Run_createdAt_id_onBehalfOf_idx newest first and stops at the page's end.
 */
function searchWhere(kind: DatabaseKind, q: string, refRunIds: readonly string[], customerRunIds: readonly string[] | null): Prisma.Sql {
  const byId = Prisma.sql`r."id" IN (${Prisma.join([...new Set([q, ...refRunIds])])})`;
  const customer = containsIgnoringCaseSql(kind, Prisma.sql`r."onBehalfOf"`, q);
  if (!customerRunIds) return Prisma.sql`(${customer} OR ${byId})`;
  // No customer can match: leave the branch out (an always-false branch makes SQLite scan every run).
  if (customerRunIds.length === 0) return byId;
  return Prisma.sql`((r."id" IN (${Prisma.join([...customerRunIds])}) AND ${customer}) OR ${byId})`;
}

/**
 * Pages through runs, newest first, with per-run counts of steps, open escalations and correction
 * drafts, and the counts of what waits for people across all runs. Throws a ZodError when the
 * filters are malformed (an unknown status, a page size out of range).
 *
 * The page and its figures are one statement (`pageOfRuns`): the figures are read over the page's runs
 * only (at most `take` + 1 of them), never over every run matching the filters.
 */
export async function findRuns({ actor, ...request }: PersonRequest<TFindRunsRequest>): Promise<TRunsPage> {
  assertCan(actor, "read");
  const query = ZFindRunsRequest.parse(request);
  const { take } = query;

  // The waiting counts are the same for every caller: concurrent calls share one read of them that
  // began after they asked (SharedRead), alongside the page on PostgreSQL.
  const [rows, waiting] = await Promise.all([pageOfRuns(query), sharedWaitingCounts(await getPrisma())]);

  const page = rows.slice(0, take);
  const last = page.at(-1);
  return {
    runs: page.map((row) => ({
      id: row.id,
      title: row.title,
      agent: row.agent,
      onBehalfOf: row.onBehalfOf,
      status: row.status,
      createdAt: dateOf(row.createdAt).toISOString(),
      updatedAt: dateOf(row.updatedAt).toISOString(),
      stepCount: countOf(row.stepCount),
      openEscalationCount: countOf(row.openEscalationCount),
      correctionDraftCount: countOf(row.correctionDraftCount),
      pendingPivotId: row.pendingPivotId,
    })),
    nextCursor: rows.length > take && last ? last.id : null,
    waiting,
  };
}

/** A run row of the page as the drivers send it (lib/core/db/raw-read.ts). */
interface PageRow {
  id: string;
  title: string;
  agent: string;
  onBehalfOf: string | null;
  status: string;
  createdAt: unknown;
  updatedAt: unknown;
  stepCount: unknown;
  openEscalationCount: unknown;
  correctionDraftCount: unknown;
  pendingPivotId: string | null;
}

/**
 * One page of runs (plus one row, to tell whether another page exists) with their per-run figures, as
 * one statement: one snapshot on both stores, and no ORM query to compile. The page is chosen first,
 * newest first (the index on createdAt, id; a cursor continues after its run's place in that order),
 * and the figures are read for its rows only, each through an index on runId. A search reads its
 * refs (and on SQLite its candidates) before the page.
 *
 * The needs-attention list first scans the newest ATTENTION_SCAN runs the other filters leave, testing
 * each: a full page from them is the right page, since every newer run was among those scanned. With
 * fewer, it gathers every waiting run instead (NEEDS_ATTENTION), which is the whole answer by itself.
 * On the generated 1M-step databases (a tenth of runs waiting) that is about 1 ms against 14 on SQLite.
 */
async function pageOfRuns({ status, agent, needsAttention, q, cursor, take }: z.output<typeof ZFindRunsRequest>) {
  const prisma = await getPrisma();
  const and: Prisma.Sql[] = [];
  if (status) and.push(Prisma.sql`r."status" = ${status}`);
  if (agent) and.push(Prisma.sql`r."agent" = ${agent}`);
  if (q) {
    const refs = await readRows<{ runId: string }>(prisma, Prisma.sql`SELECT "runId" FROM "Step" WHERE "externalRef" = ${q} UNION SELECT "runId" FROM "Step" WHERE "compensationRef" = ${q}`);
    const candidates = await onConnection(prisma, () => runSearchCandidates(prisma, q));
    and.push(searchWhere(databaseKind(prisma), q, refs.map((r) => r.runId), candidates));
  }
  // createdAt ties (same millisecond) are broken by id so pages never overlap or skip. A cursor whose
  // run does not exist yields an empty page (the comparison with no row is never true).
  if (cursor) and.push(Prisma.sql`(r."createdAt", r."id") < (SELECT c."createdAt", c."id" FROM "Run" c WHERE c."id" = ${cursor})`);
  if (needsAttention) {
    const newest = Prisma.sql`(SELECT ${PAGE_COLUMNS} FROM "Run" r ${whereOf(and)} ORDER BY r."createdAt" DESC, r."id" DESC LIMIT ${ATTENTION_SCAN})`;
    const page = await readRows<PageRow>(prisma, pageSql(newest, whereOf([NEEDS_ATTENTION_HERE]), take));
    if (page.length > take) return page;
    and.push(NEEDS_ATTENTION);
  }
  return readRows<PageRow>(prisma, pageSql(Prisma.sql`"Run"`, whereOf(and), take));
}

function whereOf(and: readonly Prisma.Sql[]): Prisma.Sql {
  return and.length === 0 ? Prisma.empty : Prisma.sql`WHERE ${Prisma.join(and, " AND ")}`;
}

/** The Run columns a page shows (never `metadata`, which can be large). */
const PAGE_COLUMNS = Prisma.raw(`r."id", r."title", r."agent", r."onBehalfOf", r."status", r."createdAt", r."updatedAt"`);

/** The page's statement: `take` + 1 runs of `source` that `where` keeps, newest first, with their figures. */
function pageSql(source: Prisma.Sql, where: Prisma.Sql, take: number): Prisma.Sql {
  return Prisma.sql`SELECT r.*,
      (SELECT COUNT(*) FROM "Step" s WHERE s."runId" = r."id") AS "stepCount",
      (SELECT COUNT(*) FROM "Escalation" e WHERE e."runId" = r."id" AND e."status" IN (${Prisma.join(OPEN_ESCALATION_STATUSES)})) AS "openEscalationCount",
      (SELECT COUNT(*) FROM "Correction" c WHERE c."runId" = r."id" AND c."status" = ${CorrectionStatus.DRAFT}) AS "correctionDraftCount",
      (SELECT p."id" FROM "Pivot" p WHERE p."runId" = r."id" AND p."status" = ${PivotStatus.PENDING} ORDER BY p."createdAt" DESC, p."id" DESC LIMIT 1) AS "pendingPivotId"
    FROM (
      SELECT ${PAGE_COLUMNS}
      FROM ${source} r ${where}
      ORDER BY r."createdAt" DESC, r."id" DESC
      LIMIT ${take + 1}
    ) r
    ORDER BY r."createdAt" DESC, r."id" DESC`;
}

/** What waits for people, read once for all the callers that asked while the previous read ran. */
const sharedWaitingCounts = sharedReadPer((prisma: PrismaClient) => countWaiting(prisma));

/** What waits for people across all runs, as one statement (one snapshot): one row per figure, one per open escalation kind. */
async function countWaiting(prisma: PrismaClient): Promise<TWaitingCounts> {
  const rows = await readRows<{ figure: string; kind: string | null; n: unknown }>(
    prisma,
    Prisma.sql`SELECT 'pivots' AS "figure", NULL AS "kind", COUNT(*) AS "n" FROM "Pivot" p JOIN "Run" r ON r."id" = p."runId"
        WHERE p."status" = ${PivotStatus.PENDING} AND r."status" = ${RunStatus.AWAITING_PIVOT}
      UNION ALL SELECT 'drafts', NULL, COUNT(*) FROM "Correction" WHERE "status" = ${CorrectionStatus.DRAFT}
      UNION ALL SELECT 'escalations', "kind", COUNT(*) FROM "Escalation" WHERE "status" IN (${Prisma.join(OPEN_ESCALATION_STATUSES)}) GROUP BY "kind"`,
  );
  const openEscalations = Object.fromEntries(Object.values(EscalationKind).map((k) => [k, 0])) as Record<EscalationKind, number>;
  let openEscalationTotal = 0;
  let pendingPivots = 0;
  let correctionDrafts = 0;
  for (const row of rows) {
    const n = countOf(row.n);
    if (row.figure === "pivots") pendingPivots = n;
    else if (row.figure === "drafts") correctionDrafts = n;
    else {
      openEscalationTotal += n;
      const kind = ZEscalationKind.safeParse(row.kind);
      if (kind.success) openEscalations[kind.data] = n;
    }
  }
  return { pendingPivots, openEscalations, openEscalationTotal, correctionDrafts };
}
