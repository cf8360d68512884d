import { z } from "zod";
import type { Prisma } from "@/generated/prisma";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { ZEscalationKind } from "@/lib/protocol/schemas/saga";
import { type TRunsPage, type TWaitingCounts } from "./views";
import { containsIgnoringCase, databaseKind, runSearchCandidates } from "@/lib/core/db/dialect";
import { withDb } from "@/lib/desks/dashboard/context";
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { onConnection } from "@/lib/core/db/transactions";
import { sharedReadPer } from "@/lib/core/db/shared-read";
import { CorrectionStatus, EscalationKind, EscalationStatus, PivotStatus, RunStatus } from "@/lib/saga/vocabulary";

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

/** Runs where something waits for a person. */
const NEEDS_ATTENTION: Prisma.RunWhereInput = {
  OR: [
    { status: { in: [RunStatus.NEEDS_ATTENTION, RunStatus.AWAITING_PIVOT] } },
    { escalations: { some: { status: { in: OPEN_ESCALATION_STATUSES } } } },
    { corrections: { some: { status: CorrectionStatus.DRAFT } } },
  ],
};

/**
 * Runs matching a search: on-behalf-of (part, any case), run id, or an effect's (or compensation's)
 * external ref. The refs are looked up first (`refRunIds`, through the Step indexes on both columns):
 * as a `steps: { some }` filter they were a subquery per scanned run, a million step reads on a
 * 100k-run database for a search that matches nothing. The on-behalf-of part goes through a trigram
 * index on both stores: PostgreSQL's pg_trgm serves the ILIKE itself; on SQLite, where LIKE '%...%'
 * reads every run (~11 ms at 100k runs), `runSearchCandidates` names the few runs that can match
 * and the filter checks only those. When it cannot (`customerRunIds` null: a short text, or a common
 * one), the filter scans Run_createdAt_id_onBehalfOf_idx newest first and stops at the page's end.
 */
function searchWhere(q: string, refRunIds: readonly string[], customerRunIds: readonly string[] | null): Prisma.RunWhereInput {
  // withDb's client is the one DATABASE_URL names, so the environment tells its dialect.
  const byId: Prisma.RunWhereInput = { id: { in: [...new Set([q, ...refRunIds])] } };
  const customer: Prisma.RunWhereInput = { onBehalfOf: containsIgnoringCase(databaseKind(), q) };
  if (!customerRunIds) return { OR: [customer, byId] };
  // No customer can match: leave the branch out (an always-false branch makes SQLite scan every run).
  if (customerRunIds.length === 0) return byId;
  return { OR: [{ AND: [{ id: { in: [...customerRunIds] } }, customer] }, byId] };
}

/**
 * Pages through runs, newest first, with per-run counts of steps, open escalations and correction
 * drafts, and the counts of what waits for people across all runs. Throws a ZodError when the
 * filters are malformed (an unknown status, a page size out of range).
 *
 * The page is read first and its figures second: they are read over the page's runs only (at most
 * `take` + 1 of them), never over every run matching the filters.
 */
export async function findRuns({ actor, ...request }: PersonRequest<TFindRunsRequest>): Promise<TRunsPage> {
  assertCan(actor, "read");
  const query = ZFindRunsRequest.parse(request);
  const { take } = query;

  // The page and its per-run counts are one read transaction, so they describe the same moment. The
  // waiting counts are the same for every caller: concurrent calls share one read of them that began
  // after they asked (SharedRead), alongside the page on PostgreSQL.
  const [{ rows, steps }, waiting] = await Promise.all([pageOfRuns(query), sharedWaitingCounts(await getPrisma())]);

  const page = rows.slice(0, take);
  const last = page.at(-1);
  return {
    runs: page.map(({ escalations, corrections, pivots, ...run }) => ({
      ...run,
      createdAt: run.createdAt.toISOString(),
      updatedAt: run.updatedAt.toISOString(),
      stepCount: steps.get(run.id) ?? 0,
      openEscalationCount: escalations.length,
      correctionDraftCount: corrections.length,
      pendingPivotId: pivots[0]?.id ?? null,
    })),
    nextCursor: rows.length > take && last ? last.id : null,
    waiting,
  };
}

/**
 * One page of runs (plus one row, to tell whether another page exists) with their per-run figures, in
 * one read transaction. The run rows carry the ids of their open escalations, correction drafts and
 * pending pivots as nested selects: one query for Prisma to compile (about 1 ms of CPU each, with no
 * plan cache in Prisma 6) that it runs as one SQL statement per relation, each over the page's runs
 * only. Those rows are few per run (what waits for people). Steps can be thousands per run, so they
 * are counted, grouped over the page's runs (a relation `_count` would group the whole Step table).
 */
function pageOfRuns({ status, agent, needsAttention, q, cursor, take }: z.output<typeof ZFindRunsRequest>) {
  return withDb((prisma) =>
    prisma.$transaction(async (tx) => {
      const and: Prisma.RunWhereInput[] = [];
      if (status) and.push({ status });
      if (agent) and.push({ agent });
      if (needsAttention) and.push(NEEDS_ATTENTION);
      if (q) {
        const refs = await tx.step.findMany({ where: { OR: [{ externalRef: q }, { compensationRef: q }] }, select: { runId: true } });
        and.push(searchWhere(q, refs.map((r) => r.runId), await runSearchCandidates(tx, q)));
      }
      const rows = await tx.run.findMany({
        where: { AND: and },
        // createdAt ties (same millisecond) are broken by id so pages never overlap or skip.
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
        // One extra row tells us whether another page exists.
        take: take + 1,
        select: {
          id: true,
          title: true,
          agent: true,
          onBehalfOf: true,
          status: true,
          createdAt: true,
          updatedAt: true,
          escalations: { where: { status: { in: OPEN_ESCALATION_STATUSES } }, select: { id: true } },
          corrections: { where: { status: CorrectionStatus.DRAFT }, select: { id: true } },
          // Newest first: the first one is the one shown.
          pivots: { where: { status: PivotStatus.PENDING }, select: { id: true }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] },
        },
      });
      const runIds = rows.slice(0, take).map((r) => r.id);
      const stepCounts =
        runIds.length === 0 ? [] : await tx.step.groupBy({ by: ["runId"], where: { runId: { in: runIds } }, orderBy: { runId: "asc" }, _count: { _all: true } });
      return { rows, steps: new Map(stepCounts.map((g) => [g.runId, g._count._all])) };
    }),
  );
}

/** What waits for people, read once for all the callers that asked while the previous read ran. */
const sharedWaitingCounts = sharedReadPer((prisma: PrismaClient) => onConnection(prisma, () => prisma.$transaction((tx) => countWaiting(tx))));

/** What waits for people across all runs. */
async function countWaiting(tx: Prisma.TransactionClient): Promise<TWaitingCounts> {
  const pendingPivots = await tx.pivot.count({ where: { status: PivotStatus.PENDING, run: { status: RunStatus.AWAITING_PIVOT } } });
  const escalationsByKind = await tx.escalation.groupBy({
    by: ["kind"],
    where: { status: { in: OPEN_ESCALATION_STATUSES } },
    orderBy: { kind: "asc" },
    _count: { _all: true },
  });
  const correctionDrafts = await tx.correction.count({ where: { status: CorrectionStatus.DRAFT } });
  const openEscalations = Object.fromEntries(Object.values(EscalationKind).map((k) => [k, 0])) as Record<EscalationKind, number>;
  let openEscalationTotal = 0;
  for (const group of escalationsByKind) {
    const count = typeof group._count === "object" ? (group._count._all ?? 0) : 0;
    openEscalationTotal += count;
    const kind = ZEscalationKind.safeParse(group.kind);
    if (kind.success) openEscalations[kind.data] = count;
  }
  return { pendingPivots, openEscalations, openEscalationTotal, correctionDrafts };
}
