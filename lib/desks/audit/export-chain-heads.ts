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
import type { Prisma } from "@/generated/prisma";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { withDb } from "@/lib/desks/dashboard/context";
import { databaseNow, type Db } from "@/lib/core/db/dialect";
import { canonicalJson } from "@/packages/client/src/saga/keys";
import { CHAIN_HEADS_FORMAT, type TChainHead, type TChainHeadsFile } from "./views";

/**
 * Chains per page of the heads read. Large, because PostgreSQL answers each page's GROUP BY by
 * reading the rest of the table (its plan for `scope > $1`), so fewer pages are fewer scans.
 */
const HEADS_PAGE = 5000;

/** Heads whose hashes are read per query (two parameters each: SQLite takes at most 999 per statement). */
const LOOKUP_BATCH = 200;


/** The digest of a list of heads: what a heads file's `digest` must be. */
export function chainHeadsDigest(heads: readonly Pick<TChainHead, "scope" | "seq" | "hash">[]): string {
  const sorted = [...heads].sort((a, b) => (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0));
  return createHash("sha256").update(canonicalJson(sorted.map((h) => [h.scope, h.seq, h.hash]))).digest("hex");
}

/** The heads of every chain now, in scope order. No authorisation (for this folder's use cases). */
export async function readChainHeads(db: Db): Promise<TChainHead[]> {
  const heads: TChainHead[] = [];
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
export async function exportChainHeads({ actor }: PersonRequest): Promise<TChainHeadsFile> {
  assertCan(actor, "read");
  const { exportedAt, heads } = await withDb(async (prisma) => ({ exportedAt: await databaseNow(prisma), heads: await readChainHeads(prisma) }));
  return { format: CHAIN_HEADS_FORMAT, exportedAt: exportedAt.toISOString(), chains: heads.length, digest: chainHeadsDigest(heads), heads };
}
