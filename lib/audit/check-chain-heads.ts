/**
 * Checks a saved heads file (exportChainHeads) against the log as it is now. Chains only grow, so
 * each saved head must still be in its chain: the link at the saved seq, with the saved hash. A chain
 * rewritten since (even consistently, every hash recomputed) has another hash there; a chain cut
 * short has no link there; a deleted chain has no links at all. Chains begun after the file was saved
 * are not in it; verification covers them.
 */
import { z } from "zod";
import { requireUser } from "@/lib/auth/current-user";
import { IsoDate } from "@/lib/api/schemas/saga";
import { withDb } from "@/lib/dashboard/context";
import type { Db } from "@/lib/db/dialect";
import { chainHeadsDigest, type ChainHead, type ChainHeadsFile } from "./export-chain-heads";

/** The largest heads file accepted (about 400,000 chains). */
export const MAX_HEADS_FILE_BYTES = 64 * 1024 * 1024;

/** Saved heads looked up per query (two parameters each: SQLite takes at most 999 per statement). */
const CHECK_BATCH = 200;

/** Changed chains reported in full; more are only counted. */
export const MAX_REPORTED_CHANGES = 100;

/** How a chain no longer matches its saved head. */
export const HeadChange = {
  /** The link at the saved seq has another hash: the chain was rewritten. */
  REWRITTEN: "rewritten",
  /** The chain ends before the saved seq: its last links were deleted. */
  TRUNCATED: "truncated",
  /** The chain has no links any more. */
  GONE: "gone",
} as const;
export type HeadChange = (typeof HeadChange)[keyof typeof HeadChange];

/** One chain that no longer matches its saved head. */
export const ZChangedChain = z.object({
  /** The chain. */
  scope: z.string(),
  /** The saved head's seq. */
  savedSeq: z.number().int(),
  /** The saved head's hash. */
  savedHash: z.string(),
  /** What changed. */
  change: z.enum(HeadChange),
  /** The hash of the link at the saved seq now (REWRITTEN), else null. */
  currentHash: z.string().nullable(),
  /** The chain's last seq now (null when it is gone). */
  currentSeq: z.number().int().nullable(),
  /** What changed, in words. */
  message: z.string(),
});
/** One chain that no longer matches its saved head. */
export type ChangedChain = z.infer<typeof ZChangedChain>;

/** What checking a heads file found. */
export const ZChainHeadsCheck = z.object({
  /** True when the file's digest fits its heads and every saved head is still in its chain. */
  matches: z.boolean(),
  /** Whether the file's digest is the digest of its heads (false: the file was edited or damaged). */
  digestMatches: z.boolean(),
  /** When the file was saved. */
  savedAt: IsoDate,
  /** Heads in the file. */
  checked: z.number().int(),
  /** Heads still in their chains. */
  matching: z.number().int(),
  /** Chains that no longer match. */
  changedCount: z.number().int(),
  /** The first of them (at most MAX_REPORTED_CHANGES), in the file's order. */
  changed: z.array(ZChangedChain),
});
/** What checking a heads file found. */
export type ChainHeadsCheck = z.infer<typeof ZChainHeadsCheck>;

function changeOf(head: ChainHead, current: { hash: string } | undefined, lastSeq: number | null): ChangedChain | null {
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

async function checkBatch(db: Db, heads: readonly ChainHead[]): Promise<ChangedChain[]> {
  const links = await db.auditEvent.findMany({ where: { OR: heads.map((h) => ({ scope: h.scope, seq: h.seq })) }, select: { scope: true, seq: true, hash: true } });
  const found = new Map(links.map((l) => [`${l.seq}:${l.scope}`, l]));
  const missing = heads.filter((h) => !found.has(`${h.seq}:${h.scope}`));
  const lastSeqs = new Map<string, number>();
  if (missing.length > 0) {
    const groups = await db.auditEvent.groupBy({ by: ["scope"], where: { scope: { in: missing.map((h) => h.scope) } }, _max: { seq: true }, orderBy: { scope: "asc" } });
    for (const g of groups) if (g._max.seq !== null) lastSeqs.set(g.scope, g._max.seq);
  }
  return heads.flatMap((h) => changeOf(h, found.get(`${h.seq}:${h.scope}`), lastSeqs.get(h.scope) ?? null) ?? []);
}

/** Checks `file` (already parsed with ZChainHeadsFile) against the log now. Changes nothing. */
export async function checkChainHeads(file: ChainHeadsFile): Promise<ChainHeadsCheck> {
  await requireUser("read");
  const digestMatches = chainHeadsDigest(file.heads) === file.digest;
  const changed: ChangedChain[] = [];
  let changedCount = 0;
  for (let i = 0; i < file.heads.length; i += CHECK_BATCH) {
    const batch = file.heads.slice(i, i + CHECK_BATCH);
    const found = await withDb((prisma) => checkBatch(prisma, batch));
    changedCount += found.length;
    changed.push(...found.slice(0, MAX_REPORTED_CHANGES - changed.length));
  }
  return {
    matches: digestMatches && changedCount === 0,
    digestMatches,
    savedAt: file.exportedAt,
    checked: file.heads.length,
    matching: file.heads.length - changedCount,
    changedCount,
    changed,
  };
}
