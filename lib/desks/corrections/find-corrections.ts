import { z } from "zod";
import { Prisma } from "@/generated/prisma";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan, can } from "@/lib/server/auth/roles";
import { withDb } from "@/lib/desks/dashboard/context";
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { countOf, readRows } from "@/lib/core/db/raw-read";
import { sharedReadPer } from "@/lib/core/db/shared-read";
import { CorrectionStatus } from "@/packages/client/src/saga/vocabulary";
import { CORRECTION_INCLUDE, correctionState, namesByEmail, queueItem, recipientsOf, sendStateOf } from "./correction-view";
import { sendStepsOf, settleCorrectionSends } from "./settle-correction-send";
import { CorrectionState, type TCorrectionQueue } from "./views";

/** Which corrections the queue lists: one state, the open ones (draft, claimed, sending), or all. */
export const ZCorrectionFilter = z.enum([...Object.values(CorrectionState), "open", "all"]);

/** The queue's filters. */
export const ZFindCorrectionsRequest = z.object({
  /** Which states (default: the open ones). */
  status: ZCorrectionFilter.default("open"),
  /** Only corrections for this audience (customer, partner, finance, ...). */
  audience: z.string().trim().min(1).max(60).optional(),
  /** Only corrections of this run. */
  runId: z.string().trim().min(1).max(80).optional(),
  /** The `nextCursor` of the previous page (a correction id). */
  cursor: z.string().trim().min(1).max(80).optional(),
  /** At most this many rows (default 50). */
  take: z.coerce.number().int().min(1).max(500).default(50),
});
/** What a caller passes. */
export type TFindCorrectionsRequest = z.input<typeof ZFindCorrectionsRequest>;

function statusWhere(filter: z.infer<typeof ZCorrectionFilter>): Prisma.CorrectionWhereInput {
  switch (filter) {
    case "all":
      return {};
    case "open":
      return { status: { in: [CorrectionStatus.DRAFT, CorrectionStatus.SENDING] } };
    case "draft":
      return { status: CorrectionStatus.DRAFT, claimedBy: null };
    case "claimed":
      return { status: CorrectionStatus.DRAFT, claimedBy: { not: null } };
    case "sending":
      return { status: CorrectionStatus.SENDING };
    case "sent":
      return { status: CorrectionStatus.SENT };
    case "dismissed":
      return { status: CorrectionStatus.DISMISSED };
  }
}

/**
 * The correction queue, a page at a time, ranked by blast radius (internal 0 first, partner 1,
 * customer 2 last, as the saga orders an unwind's answers), oldest first within a rank, with age, SLA
 * badge, holder and where a send stands. Sends whose log is settled are marked SENT first, so the
 * queue never shows a sent message as still sending.
 */
export async function findCorrections({ actor, ...request }: PersonRequest<TFindCorrectionsRequest>): Promise<TCorrectionQueue> {
  assertCan(actor, "read");
  const input = ZFindCorrectionsRequest.parse(request);
  const sending = await withDb((prisma) =>
    prisma.correction.findMany({ where: { status: CorrectionStatus.SENDING }, include: CORRECTION_INCLUDE }),
  );
  await settleCorrectionSends(sending.map((r) => ({ id: r.id, expected: recipientsOf(r).length })));

  const [{ rows, now }, counts] = await Promise.all([
    withDb(async (prisma) => {
      const where: Prisma.CorrectionWhereInput = { ...statusWhere(input.status), ...(input.runId ? { runId: input.runId } : {}) };
      // One row past the page says whether more match.
      const rows = await prisma.correction.findMany({
        where,
        include: CORRECTION_INCLUDE,
        orderBy: [{ rank: "asc" }, { createdAt: "asc" }, { id: "asc" }],
        // A cursor continues after its correction's place in this order; one naming none gives no rows.
        ...(input.cursor ? { cursor: { id: input.cursor }, skip: 1 } : {}),
        take: input.audience ? 2000 : input.take + 1,
      });
      return { rows, now: new Date() };
    }),
    getPrisma().then((prisma) => sharedStateCounts(prisma)),
  ]);
  const matching = input.audience ? rows.filter((r) => Array.isArray(r.audience) && r.audience.includes(input.audience!)) : rows;
  const shown = matching.slice(0, input.take);
  const names = await withDb((prisma) => namesByEmail(prisma, shown.map((r) => r.claimedBy)));
  const steps = await sendStepsOf(shown.filter((r) => r.status === CorrectionStatus.SENDING).map((r) => r.id));
  return {
    items: shown.map((r) =>
      queueItem(r, now, { claimedByName: r.claimedBy ? (names.get(r.claimedBy) ?? null) : null, send: sendStateOf(r.status, steps.get(r.id), recipientsOf(r).length) }),
    ),
    nextCursor: matching.length > shown.length ? (shown.at(-1)?.id ?? null) : null,
    counts,
    canHandle: can(actor.role, "correction.handle"),
    me: actor.email,
  };
}

/**
 * Corrections per state over the whole table (the filter chips), counted in SQL: one row per status
 * and held-or-not, never a row per correction. The same for everyone, so concurrent callers share
 * one read that began after they asked.
 */
const sharedStateCounts = sharedReadPer(async (prisma: PrismaClient): Promise<Record<CorrectionState, number>> => {
  const rows = await readRows<{ status: string; held: unknown; n: unknown }>(
    prisma,
    Prisma.sql`SELECT "status", CASE WHEN "claimedBy" IS NULL THEN 0 ELSE 1 END AS "held", COUNT(*) AS "n" FROM "Correction" GROUP BY 1, 2`,
  );
  const counts = Object.fromEntries(Object.values(CorrectionState).map((s) => [s, 0])) as Record<CorrectionState, number>;
  for (const r of rows) counts[correctionState({ status: r.status, claimedBy: countOf(r.held) === 1 ? "held" : null })] += countOf(r.n);
  return counts;
});
