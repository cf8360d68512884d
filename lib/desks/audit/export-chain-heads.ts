/**
 * The head of every audit chain (its last seq and hash) and one digest over them all, as a file to
 * keep somewhere else. A chain verifies link by link, but someone who can write the table can also
 * rewrite a whole chain consistently (new content, every hash recomputed); the saved head then no
 * longer matches the link at its seq, and `checkChainHeads` says so. The digest lets the file itself
 * be checked (a copy of the 64 characters in a ticket, an email, a signed note).
 *
 * Heads are read through the (scope, seq) index: the chains in scope order, a page at a time, each
 * page's last seq per chain and then those links' hashes.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { Prisma } from "@/generated/prisma";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { IsoDate } from "@/lib/protocol/schemas/saga";
import { withDb } from "@/lib/desks/dashboard/context";
import { databaseNow, type Db } from "@/lib/core/db/dialect";
import { canonicalJson } from "@/lib/saga/keys";

/** The file format's name and version. */
export const CHAIN_HEADS_FORMAT = "sagaboard.audit-chain-heads/1";

/**
 * Chains per page of the heads read. Large, because PostgreSQL answers each page's GROUP BY by
 * reading the rest of the table (its plan for `scope > $1`), so fewer pages are fewer scans.
 */
const HEADS_PAGE = 5000;

/** Heads whose hashes are read per query (two parameters each: SQLite takes at most 999 per statement). */
const LOOKUP_BATCH = 200;

/** The last link of one chain. */
export const ZChainHead = z.object({
  /** The chain. */
  scope: z.string().min(1),
  /** Its last seq. */
  seq: z.number().int().positive(),
  /** That link's hash. */
  hash: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lower-case hex characters"),
  /** That link's time (informative; not covered by the digest). */
  at: IsoDate.optional(),
  /** That link's event id (informative; not covered by the digest). */
  eventId: z.number().int().optional(),
});
/** The last link of one chain. */
export type ChainHead = z.infer<typeof ZChainHead>;

/** A heads file. */
export const ZChainHeadsFile = z.object({
  /** Always CHAIN_HEADS_FORMAT. */
  format: z.literal(CHAIN_HEADS_FORMAT, { error: `is not a Sagaboard chain heads file (format ${CHAIN_HEADS_FORMAT})` }),
  /** When it was made (database clock). */
  exportedAt: IsoDate,
  /** How many chains it holds. */
  chains: z.number().int().nonnegative(),
  /** sha256 of the canonical JSON of [[scope, seq, hash], ...] in scope order (`chainHeadsDigest`). */
  digest: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lower-case hex characters"),
  /** The heads, in scope order. */
  heads: z.array(ZChainHead),
});
/** A heads file. */
export type ChainHeadsFile = z.infer<typeof ZChainHeadsFile>;

/** The digest of a list of heads: what a heads file's `digest` must be. */
export function chainHeadsDigest(heads: readonly Pick<ChainHead, "scope" | "seq" | "hash">[]): string {
  const sorted = [...heads].sort((a, b) => (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0));
  return createHash("sha256").update(canonicalJson(sorted.map((h) => [h.scope, h.seq, h.hash]))).digest("hex");
}

/** The heads of every chain now, in scope order. No authorisation (for this folder's use cases). */
export async function readChainHeads(db: Db): Promise<ChainHead[]> {
  const heads: ChainHead[] = [];
  let after: string | null = null;
  for (;;) {
    const where: Prisma.AuditEventWhereInput = after === null ? {} : { scope: { gt: after } };
    const groups = await db.auditEvent.groupBy({
      by: ["scope"],
      where,
      _max: { seq: true },
      orderBy: { scope: "asc" },
      take: HEADS_PAGE,
    });
    if (groups.length === 0) break;
    for (let i = 0; i < groups.length; i += LOOKUP_BATCH) {
      const batch = groups.slice(i, i + LOOKUP_BATCH);
      const links = await db.auditEvent.findMany({
        where: { OR: batch.map((g) => ({ scope: g.scope, seq: g._max.seq ?? 0 })) },
        select: { id: true, scope: true, seq: true, hash: true, at: true },
      });
      for (const link of links) heads.push({ scope: link.scope, seq: link.seq, hash: link.hash, at: link.at.toISOString(), eventId: link.id });
    }
    after = groups.at(-1)!.scope;
    if (groups.length < HEADS_PAGE) break;
  }
  return heads.sort((a, b) => (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0));
}

/** The heads file of every chain as it is now. Changes nothing. */
export async function exportChainHeads({ actor }: PersonRequest): Promise<ChainHeadsFile> {
  assertCan(actor, "read");
  const { exportedAt, heads } = await withDb(async (prisma) => ({ exportedAt: await databaseNow(prisma), heads: await readChainHeads(prisma) }));
  return { format: CHAIN_HEADS_FORMAT, exportedAt: exportedAt.toISOString(), chains: heads.length, digest: chainHeadsDigest(heads), heads };
}
