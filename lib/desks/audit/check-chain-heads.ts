/**
 * Checks a saved heads file (exportChainHeads) against the log as it is now. Chains only grow, so
 * each saved head must still be in its chain: the link at the saved seq, with the saved hash. A chain
 * rewritten since (even consistently, every hash recomputed) has another hash there; a chain cut
 * short has no link there; a deleted chain has no links at all. Chains begun after the file was saved
 * are not in it; verification covers them. A chain retention moved to an archive file since
 * (ArchivedChain) is not deleted: its saved head is checked against the archived head.
 */
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { withDb } from "@/lib/desks/dashboard/context";
import type { Db } from "@/lib/core/db/dialect";
import { chainHeadsDigest } from "./export-chain-heads";
import { HeadChange, MAX_REPORTED_CHANGES, type TChainHeadsCheck, type TChangedChain, type TChainHead, type TChainHeadsFile } from "./views";

/** The largest heads file accepted (about 400,000 chains). */
export const MAX_HEADS_FILE_BYTES = 64 * 1024 * 1024;

/** Saved heads looked up per query (two parameters each: SQLite takes at most 999 per statement). */
const CHECK_BATCH = 200;


function changeOf(head: TChainHead, current: { hash: string } | undefined, lastSeq: number | null): TChangedChain | null {
  const base = { scope: head.scope, savedSeq: head.seq, savedHash: head.hash };
  if (current) {
    if (current.hash === head.hash) return null;
    return {
      ...base,
      change: HeadChange.REWRITTEN,
      currentHash: current.hash,
      currentSeq: lastSeq,
      message: `Link ${head.seq} of ${head.scope} now has hash ${current.hash.slice(0, 12)}…, not the saved ${head.hash.slice(0, 12)}…: the chain was rewritten at or before that link since the heads were saved.`,
    };
  }
  if (lastSeq === null) {
    return { ...base, change: HeadChange.GONE, currentHash: null, currentSeq: null, message: `${head.scope} has no links any more: the whole chain (${head.seq} links when saved) was deleted.` };
  }
  const cut = lastSeq + 1 === head.seq ? `link ${head.seq} was` : `links ${lastSeq + 1} to ${head.seq} were`;
  return { ...base, change: HeadChange.TRUNCATED, currentHash: null, currentSeq: lastSeq, message: `${head.scope} now ends at link ${lastSeq}: ${cut} deleted since the heads were saved.` };
}

async function checkBatch(db: Db, heads: readonly TChainHead[]): Promise<{ changed: TChangedChain[]; archived: number }> {
  const links = await db.auditEvent.findMany({ where: { OR: heads.map((h) => ({ scope: h.scope, seq: h.seq })) }, select: { scope: true, seq: true, hash: true } });
  const found = new Map(links.map((l) => [`${l.seq}:${l.scope}`, l]));
  const missing = heads.filter((h) => !found.has(`${h.seq}:${h.scope}`));
  const lastSeqs = new Map<string, number>();
  if (missing.length > 0) {
    const groups = await db.auditEvent.groupBy({ by: ["scope"], where: { scope: { in: missing.map((h) => h.scope) } }, _max: { seq: true }, orderBy: { scope: "asc" } });
    for (const g of groups) if (g._max.seq !== null) lastSeqs.set(g.scope, g._max.seq);
  }
  // A chain retention archived since the heads were saved: its saved head is checked against the
  // archived head when they are the same link; a later archived head is in the file (archive:verify).
  const archivedHeads = new Map<string, { seq: number; hash: string }>();
  const gone = missing.filter((h) => !lastSeqs.has(h.scope) || lastSeqs.get(h.scope)! < h.seq);
  if (gone.length > 0) {
    for (const a of await db.archivedChain.findMany({ where: { scope: { in: gone.map((h) => h.scope) } }, select: { scope: true, seq: true, hash: true } })) archivedHeads.set(a.scope, a);
  }
  let archived = 0;
  const changed = heads.flatMap((h) => {
    const a = archivedHeads.get(h.scope);
    if (a && !found.has(`${h.seq}:${h.scope}`) && (a.seq > h.seq || (a.seq === h.seq && a.hash === h.hash))) {
      archived++;
      return [];
    }
    return changeOf(h, found.get(`${h.seq}:${h.scope}`), lastSeqs.get(h.scope) ?? null) ?? [];
  });
  return { changed, archived };
}

/** Checks `file` (already parsed with ZChainHeadsFile) against the log now. Changes nothing. */
export async function checkChainHeads({ actor, file }: PersonRequest<{ file: TChainHeadsFile }>): Promise<TChainHeadsCheck> {
  assertCan(actor, "read");
  const digestMatches = chainHeadsDigest(file.heads) === file.digest;
  const changed: TChangedChain[] = [];
  let changedCount = 0;
  let archived = 0;
  for (let i = 0; i < file.heads.length; i += CHECK_BATCH) {
    const batch = file.heads.slice(i, i + CHECK_BATCH);
    const found = await withDb((prisma) => checkBatch(prisma, batch));
    changedCount += found.changed.length;
    archived += found.archived;
    changed.push(...found.changed.slice(0, MAX_REPORTED_CHANGES - changed.length));
  }
  return {
    matches: digestMatches && changedCount === 0,
    digestMatches,
    savedAt: file.exportedAt,
    checked: file.heads.length,
    matching: file.heads.length - changedCount,
    archived,
    changedCount,
    changed,
  };
}
