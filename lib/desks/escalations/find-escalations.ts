import { z } from "zod";
import type { Prisma } from "@/generated/prisma";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan, can } from "@/lib/server/auth/roles";
import { mayWorkEscalation } from "./escalation-access";
import { clockFromRows, nowQuery } from "@/lib/core/db/dialect";
import { ZEscalationKind } from "@/packages/client/src/protocol/schemas/saga";
import { EscalationKind, EscalationStatus } from "@/packages/client/src/saga/vocabulary";
import { withDb } from "@/lib/desks/dashboard/context";
import { ESCALATION_INCLUDE, queueItem, toolSystems } from "./escalation-view";
import type { TEscalationQueue } from "@/lib/desks/escalations/views";

/** The largest page a caller may ask for. */
export const MAX_ESCALATIONS_PAGE = 200;

/** Which part of the queue to show. */
export const EscalationQueueView = {
  /** Waiting for a person or held by one (the queue). */
  open: "open",
  /** Done. */
  resolved: "resolved",
  /** Everything. */
  all: "all",
} as const;

/** Filters and paging of the escalation queue. */
export const ZFindEscalationsRequest = z.object({
  /** Which part of the queue (default: open). */
  view: z.enum(EscalationQueueView).default("open"),
  /** Only this kind. */
  kind: ZEscalationKind.optional(),
  /** Only items the signed-in user holds. */
  mine: z.boolean().default(false),
  /** The `nextCursor` of the previous page (an escalation id). */
  cursor: z.string().trim().min(1).max(80).optional(),
  /** Page size. */
  take: z.number().int().min(1).max(MAX_ESCALATIONS_PAGE).default(50),
});
/** What callers pass to `findEscalations` (every field optional). */
export type TFindEscalationsRequest = z.input<typeof ZFindEscalationsRequest>;

const UNRESOLVED = [EscalationStatus.OPEN, EscalationStatus.CLAIMED];

/**
 * The escalation queue: items of every kind with their age, owner (the tool's owner) and who holds
 * them. Open items come oldest first (the order to work them in), resolved ones newest first.
 */
export async function findEscalations({ actor, ...request }: PersonRequest<TFindEscalationsRequest>): Promise<TEscalationQueue> {
  assertCan(actor, "read");
  const { view, kind, mine, cursor, take } = ZFindEscalationsRequest.parse(request);
  const me = actor.email;
  const where: Prisma.EscalationWhereInput = {};
  if (view === "open") where.status = { in: UNRESOLVED };
  if (view === "resolved") where.status = EscalationStatus.RESOLVED;
  if (kind) where.kind = kind;
  if (mine) where.claimedBy = me;
  const order: Prisma.SortOrder = view === "open" ? "asc" : "desc";

  const [rows, grouped, unclaimed, mineCount, now] = await withDb((prisma) =>
    prisma.$transaction([
      prisma.escalation.findMany({
        where,
        include: ESCALATION_INCLUDE,
        // createdAt ties are broken by id so pages never overlap or skip.
        orderBy: [{ createdAt: order }, { id: order }],
        ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
        take: take + 1,
      }),
      prisma.escalation.groupBy({ by: ["kind"], where: { status: { in: UNRESOLVED } }, orderBy: { kind: "asc" }, _count: { _all: true } }),
      prisma.escalation.count({ where: { status: EscalationStatus.OPEN } }),
      prisma.escalation.count({ where: { status: EscalationStatus.CLAIMED, claimedBy: me } }),
      prisma.$queryRaw<{ now: string }[]>(nowQuery(prisma)),
    ]),
  );
  const clock = clockFromRows(now);
  const openByKind = Object.fromEntries(Object.values(EscalationKind).map((k) => [k, 0])) as Record<EscalationKind, number>;
  for (const g of grouped) {
    const parsed = ZEscalationKind.safeParse(g.kind);
    const count = typeof g._count === "object" ? (g._count._all ?? 0) : 0;
    if (parsed.success) openByKind[parsed.data] = count;
  }
  const page = rows.slice(0, take);
  const systems = await toolSystems(page);
  const last = page.at(-1);
  // The role read once above: asking `userCan` would read the User row again for each button.
  // Support staff may work the items support teams own: the queue offers Claim per item (canWork).
  const [canClaim, canResolve] = [can(actor.role, "escalation.claim") || actor.role === "support", can(actor.role, "escalation.resolve") || actor.role === "support"];
  return {
    items: page.map((row) => {
      const item = queueItem(row, clock, systems);
      return { ...item, canWork: mayWorkEscalation(actor.role, { owner: item.owner, kind: row.kind }) };
    }),
    nextCursor: rows.length > take && last ? last.id : null,
    openByKind,
    unclaimed,
    mine: mineCount,
    me,
    now: clock.toISOString(),
    abilities: { canClaim, canResolve },
  };
}
