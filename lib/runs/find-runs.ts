import { z } from "zod";
import { getPrisma } from "@/lib/db/prisma";
import { EscalationStatus, RunStatus } from "@/lib/saga/vocabulary";

/** Escalation statuses that still need a person (claimed items are being handled, not done). */
const OPEN_ESCALATION_STATUSES: readonly EscalationStatus[] = [EscalationStatus.OPEN, EscalationStatus.CLAIMED];

/** The largest page a caller may ask for. */
export const MAX_RUNS_PAGE = 200;

/** Filters and paging for the runs list. */
export const ZFindRunsRequestSchema = z.object({
  /** Only runs in this status. */
  status: z.enum(RunStatus).optional(),
  /** Only runs of this agent. */
  agent: z.string().trim().min(1).optional(),
  /** The `nextCursor` of the previous page (a run id). */
  cursor: z.string().trim().min(1).optional(),
  /** Page size. */
  take: z.number().int().min(1).max(MAX_RUNS_PAGE).default(50),
});

/** What callers pass to `findRuns` (every field optional). */
export type TFindRunsRequest = z.input<typeof ZFindRunsRequestSchema>;

/** One row of the runs list. */
export interface RunListItem {
  /** `run_...` */
  id: string;
  /** What the run is for. */
  title: string;
  /** The agent running it. */
  agent: string;
  /** The customer or user the agent acts for. */
  onBehalfOf: string | null;
  /** Where the run stands (RunStatus). */
  status: string;
  /** Created (database clock). */
  createdAt: Date;
  /** Last changed (database clock). */
  updatedAt: Date;
  /** Saga log rows of the run. */
  stepCount: number;
  /** Escalations still waiting for (or held by) a person. */
  openEscalationCount: number;
}

/** One page of runs, newest first. */
export interface RunsPage {
  /** The runs of this page. */
  runs: RunListItem[];
  /** Pass as `cursor` to get the next page; null on the last page. */
  nextCursor: string | null;
}

/**
 * Pages through runs, newest first, with per-run counts of steps and open escalations.
 * Throws a ZodError when the filters are malformed (an unknown status, a page size out of range).
 */
export async function findRuns(request: TFindRunsRequest = {}): Promise<RunsPage> {
  const { status, agent, cursor, take } = ZFindRunsRequestSchema.parse(request);
  const prisma = await getPrisma();
  const rows = await prisma.run.findMany({
    where: { status, agent },
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
      _count: {
        select: {
          steps: true,
          escalations: { where: { status: { in: [...OPEN_ESCALATION_STATUSES] } } },
        },
      },
    },
  });
  const page = rows.slice(0, take);
  const last = page.at(-1);
  return {
    runs: page.map(({ _count, ...run }) => ({
      ...run,
      stepCount: _count.steps,
      openEscalationCount: _count.escalations,
    })),
    nextCursor: rows.length > take && last ? last.id : null,
  };
}
