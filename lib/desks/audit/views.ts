/**
 * What the audit screens read: an event, a page of the log, a verification of the chains, a file of
 * chain heads and a check of one. Pure (zod and constants only), so the browser parses the answers
 * with the same schemas the server answers with.
 */
import { z } from "zod";
import { ZIsoDate, ZAuditEventWire } from "@/packages/client/src/protocol/schemas/saga";

/** An audit event, as JSON: the agent API's event (ZAuditEventWire) and the row's id. */
export const ZAuditEventView = z.object({
  /** The row's id: grows with time, so it orders the whole log and pages it. */
  id: z.number().int(),
  ...ZAuditEventWire.shape,
});
/** An audit event, as JSON. */
export type TAuditEventView = z.infer<typeof ZAuditEventView>;

/** One page of the audit log. */
export const ZAuditEventsPage = z.object({
  /** The events of this page, newest first. */
  events: z.array(ZAuditEventView),
  /** Pass as `cursor` for older events; null when nothing older matches. */
  nextCursor: z.string().nullable(),
  /**
   * Set when the search window ran out before the page was full: events older than this one were
   * not searched yet (continue with `nextCursor`). Null when the page is full or the log is exhausted.
   */
  searchedBackTo: z.object({ eventId: z.number().int(), at: ZIsoDate }).nullable(),
  /** The chain the filters name (`run:<id>` for a run), read through its index; null for the whole log. */
  scope: z.string().nullable(),
});
/** One page of the audit log. */
export type TAuditEventsPage = z.infer<typeof ZAuditEventsPage>;

/** The chain heads file format's name and version. */
export const CHAIN_HEADS_FORMAT = "sagaboard.audit-chain-heads/1";

/** The last link of one chain. */
export const ZChainHead = z.object({
  /** The chain. */
  scope: z.string().min(1),
  /** Its last seq. */
  seq: z.number().int().positive(),
  /** That link's hash. */
  hash: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lower-case hex characters"),
  /** That link's time (informative; not covered by the digest). */
  at: ZIsoDate.optional(),
  /** That link's event id (informative; not covered by the digest). */
  eventId: z.number().int().optional(),
});
/** The last link of one chain. */
export type TChainHead = z.infer<typeof ZChainHead>;

/** A heads file. */
export const ZChainHeadsFile = z.object({
  /** Always CHAIN_HEADS_FORMAT. */
  format: z.literal(CHAIN_HEADS_FORMAT, { error: `is not a Sagaboard chain heads file (format ${CHAIN_HEADS_FORMAT})` }),
  /** When it was made (database clock). */
  exportedAt: ZIsoDate,
  /** How many chains it holds. */
  chains: z.number().int().nonnegative(),
  /** sha256 of the canonical JSON of [[scope, seq, hash], ...] in scope order (`chainHeadsDigest`). */
  digest: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lower-case hex characters"),
  /** The heads, in scope order. */
  heads: z.array(ZChainHead),
});
/** A heads file. */
export type TChainHeadsFile = z.infer<typeof ZChainHeadsFile>;

/** What is wrong with a broken link. */
export const ChainBreakKind = {
  /** Its scope was changed: it continues another chain (`belongsTo`). */
  SCOPE: "scope",
  /** Its seq was changed (it still links to the previous link), or repeats an earlier one. */
  SEQ: "seq",
  /** Links before it are missing: deleted. */
  MISSING: "missing",
  /** Its prevHash does not name the previous link. */
  PREV_HASH: "prevHash",
  /** Its stored hash was changed; its content is as written. */
  HASH: "hash",
  /** Its content (type, actor, data, time, run or step) was changed after it was written. */
  CONTENT: "content",
  /** Its run is not the run of its chain: the run id was changed. */
  RUN: "runId",
  /** The last link of a chain whose content or stored hash was changed (the chain cannot tell which). */
  CONTENT_OR_HASH: "content-or-hash",
} as const;
export type ChainBreakKind = (typeof ChainBreakKind)[keyof typeof ChainBreakKind];

/** The breaks kept in full (the first of each broken chain); more are only counted. */
export const MAX_REPORTED_BREAKS = 20;

/** The first broken link of a chain. */
export const ZChainBreak = z.object({
  /** The chain the link sits in now. */
  scope: z.string(),
  /** The link's seq, as stored. */
  seq: z.number().int(),
  /** The event's id. */
  eventId: z.number().int(),
  /** Its time, as stored. */
  at: ZIsoDate,
  /** What is wrong (ChainBreakKind). */
  kind: z.enum(ChainBreakKind),
  /** What is wrong, in words. */
  message: z.string(),
  /** For a moved link, the chain it continues (where it was written). */
  belongsTo: z.string().nullable(),
});

/** What a verification found. */
export const ZAuditVerification = z.object({
  /** True when every link of every chain read checks out. */
  verified: z.boolean(),
  /** The chain asked for, or null for all of them. */
  scope: z.string().nullable(),
  /** Chains read. */
  chains: z.number().int(),
  /** Events read. */
  events: z.number().int(),
  /** Chains by kind (`run`, `user`, `agent-token`, `tool`). */
  chainsByKind: z.record(z.string(), z.number().int()),
  /** Chains with a broken link. */
  brokenChains: z.number().int(),
  /** The first broken link of each broken chain, in append order (at most MAX_REPORTED_BREAKS). */
  breaks: z.array(ZChainBreak).max(MAX_REPORTED_BREAKS),
  /** Chains whose earlier links retention moved to archive files: the table's links continue their archived heads. */
  archivedChains: z.number().int().optional(),
  /** The last event read: events after it were appended during the verification and are not covered. */
  upToEventId: z.number().int().nullable(),
  /** When it started (database clock). */
  checkedAt: ZIsoDate,
  /** How long it took, in seconds. */
  seconds: z.number(),
});
/** What a verification found. */
export type TAuditVerification = z.infer<typeof ZAuditVerification>;

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
export type TChangedChain = z.infer<typeof ZChangedChain>;

/** What checking a heads file found. */
export const ZChainHeadsCheck = z.object({
  /** True when the file's digest fits its heads and every saved head is still in its chain. */
  matches: z.boolean(),
  /** Whether the file's digest is the digest of its heads (false: the file was edited or damaged). */
  digestMatches: z.boolean(),
  /** When the file was saved. */
  savedAt: ZIsoDate,
  /** Heads in the file. */
  checked: z.number().int(),
  /** Heads still in their chains. */
  matching: z.number().int(),
  /** Of those, heads of chains retention moved to archive files since (checked against the archived head; the file itself verifies with `npm run archive:verify`). */
  archived: z.number().int().optional(),
  /** Chains that no longer match. */
  changedCount: z.number().int(),
  /** The first of them (at most MAX_REPORTED_CHANGES), in the file's order. */
  changed: z.array(ZChangedChain),
});
/** What checking a heads file found. */
export type TChainHeadsCheck = z.infer<typeof ZChainHeadsCheck>;
