import * as z from "zod";
import type { Prisma } from "@/generated/prisma";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { getPrisma } from "@/lib/core/db/prisma";
import { onConnection } from "@/lib/core/db/transactions";
import { summarizeRevokes } from "./revoke-rules";
import { RevokeOutcome, ZRevokeSummary } from "./views";

/** The revoke records' filters. */
export const ZFindRevokesRequest = z.object({
  /** Who pulled (email). */
  person: z.string().trim().min(1).max(320).optional(),
  /** Which tool. */
  tool: z.string().trim().min(1).max(80).optional(),
  /** How it ended. */
  outcome: z.enum(RevokeOutcome).optional(),
  /** Pulled at or after / before (ISO time). */
  from: z.iso.datetime().optional(),
  to: z.iso.datetime().optional(),
  /** The `nextCursor` of the previous page. */
  cursor: z.string().trim().min(1).max(80).optional(),
  take: z.number().int().min(1).max(200).default(50),
});
/** The revoke records' filters. */
export type TFindRevokesRequest = z.input<typeof ZFindRevokesRequest>;

/** One page of revoke records, newest first. */
export const ZRevokePage = z.object({
  revokes: z.array(ZRevokeSummary.extend({ runTitle: z.string() })),
  nextCursor: z.string().nullable(),
  /** People who have pulled triggers, for the filter. */
  people: z.array(z.string()),
});
/** One page of revoke records. */
export type TRevokePage = z.infer<typeof ZRevokePage>;

/**
 * Who pulled what, when and why, and how it ended, newest first (the (requestedAt, id) index).
 * The outcome is read from what each revoke led to, so its filter applies to the page read.
 */
export async function findRevokes({ actor, ...request }: PersonRequest<TFindRevokesRequest>): Promise<TRevokePage> {
  assertCan(actor, "read");
  const { person, tool, outcome, from, to, cursor, take } = ZFindRevokesRequest.parse(request);
  const prisma = await getPrisma();
  const where: Prisma.RevokeWhereInput = {
    ...(person ? { requestedBy: person } : {}),
    ...(tool ? { tool } : {}),
    ...(from || to ? { requestedAt: { ...(from ? { gte: new Date(from) } : {}), ...(to ? { lt: new Date(to) } : {}) } } : {}),
  };
  // An outcome filter reads further to fill a page; bounded so one request never reads everything.
  const read = outcome ? Math.min(take * 10, 2000) : take + 1;
  const [rows, people] = await onConnection(prisma, async () => [
    await prisma.revoke.findMany({ where, orderBy: [{ requestedAt: "desc" }, { id: "desc" }], take: read, ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}), include: { run: { select: { title: true } } } }),
    (await prisma.revoke.findMany({ distinct: ["requestedBy"], select: { requestedBy: true }, orderBy: { requestedBy: "asc" }, take: 200 })).map((r) => r.requestedBy),
  ] as const);
  const summaries = await summarizeRevokes(prisma, rows);
  const matching = summaries.map((s, i) => ({ ...s, runTitle: rows[i]?.run.title ?? s.runId })).filter((s) => !outcome || s.outcome === outcome);
  const page = matching.slice(0, take);
  const more = outcome ? rows.length === read || matching.length > take : rows.length > take;
  return { revokes: page, nextCursor: more ? (page.at(-1)?.id ?? rows.at(-1)?.id ?? null) : null, people };
}
