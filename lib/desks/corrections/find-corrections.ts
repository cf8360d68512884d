import { z } from "zod";
import type { Prisma } from "@/generated/prisma";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan, can } from "@/lib/server/auth/roles";
import { withDb } from "@/lib/desks/dashboard/context";
import { CorrectionStatus } from "@/lib/saga/vocabulary";
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
  /** At most this many rows (default 100). */
  take: z.coerce.number().int().min(1).max(500).default(100),
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
 * The correction queue, ranked by blast radius (internal 0 first, partner 1, customer 2 last, as
 * the saga orders an unwind's answers), oldest first within a rank, with age, SLA badge, holder and
 * where a send stands. Sends whose log is settled are marked SENT first, so the queue never shows a
 * sent message as still sending.
 */
export async function findCorrections({ actor, ...request }: PersonRequest<TFindCorrectionsRequest>): Promise<TCorrectionQueue> {
  assertCan(actor, "read");
  const input = ZFindCorrectionsRequest.parse(request);
  const sending = await withDb((prisma) =>
    prisma.correction.findMany({ where: { status: CorrectionStatus.SENDING }, include: CORRECTION_INCLUDE }),
  );
  await settleCorrectionSends(sending.map((r) => ({ id: r.id, expected: recipientsOf(r).length })));

  const { rows, all, now } = await withDb(async (prisma) => {
    const where: Prisma.CorrectionWhereInput = { ...statusWhere(input.status), ...(input.runId ? { runId: input.runId } : {}) };
    const rows = await prisma.correction.findMany({ where, include: CORRECTION_INCLUDE, orderBy: [{ rank: "asc" }, { createdAt: "asc" }, { id: "asc" }], take: input.audience ? 2000 : input.take });
    const all = await prisma.correction.findMany({ select: { status: true, claimedBy: true } });
    return { rows, all, now: new Date() };
  });
  const shown = (input.audience ? rows.filter((r) => Array.isArray(r.audience) && r.audience.includes(input.audience!)) : rows).slice(0, input.take);
  const names = await withDb((prisma) => namesByEmail(prisma, shown.map((r) => r.claimedBy)));
  const steps = await sendStepsOf(shown.filter((r) => r.status === CorrectionStatus.SENDING).map((r) => r.id));
  const counts = Object.fromEntries(Object.values(CorrectionState).map((s) => [s, 0])) as Record<CorrectionState, number>;
  for (const r of all) counts[correctionState(r)]++;
  return {
    items: shown.map((r) =>
      queueItem(r, now, { claimedByName: r.claimedBy ? (names.get(r.claimedBy) ?? null) : null, send: sendStateOf(r.status, steps.get(r.id), recipientsOf(r).length) }),
    ),
    counts,
    canHandle: can(actor.role, "correction.handle"),
    me: actor.email,
  };
}
