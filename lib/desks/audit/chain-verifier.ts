/**
 * Checks audit hash chains link by link, fed one event at a time in id order (append order: within
 * a chain, ids grow with seq, because a chain's appends are serialised). No database: the use cases
 * stream rows into it, so memory holds one small state per chain, never the events.
 *
 * Each link must continue its chain: seq one more than the previous link's (1 for the first), prevHash
 * the previous link's hash (64 zeros for the first), and hash = auditHash(prevHash, content) with the
 * content recomputed from the row. When a link fails, the verifier says what is wrong in words and,
 * where the chain itself can tell, which field was changed:
 * - a link that continues ANOTHER chain (its seq and prevHash fit that chain): its scope was changed;
 * - a wrong seq on a link whose prevHash still names the previous link: its seq was changed;
 * - a seq gap where prevHash names a link that is not there: links were deleted;
 * - a right seq with a prevHash that names no previous link: its prevHash was changed;
 * - seq and prevHash fine but the hash does not match the content: the next link decides. If it names
 *   the hash the content has now, the stored hash was changed; if it names the stored hash, the
 *   content was (type, actor, data, time, run, step); on the last link the chain cannot tell.
 * After a break the chain goes on from the broken link, so one tampered row is one break, not a
 * cascade. A full, consistent rewrite of a chain passes here: that is what saved heads catch.
 */
import { auditHash } from "@/packages/client/src/saga/keys";
import { ChainBreakKind, MAX_REPORTED_BREAKS } from "./views";
import { auditHashedContent, GENESIS_HASH } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";


/** The first broken link of a chain. */
export interface ChainBreak {
  /** The chain the link sits in now. */
  scope: string;
  /** The link's seq, as stored. */
  seq: number;
  /** The event's id. */
  eventId: number;
  /** Its time, as stored (ISO). */
  at: string;
  /** What is wrong. */
  kind: ChainBreakKind;
  /** What is wrong, in words. */
  message: string;
  /** For a moved link: the chain it continues (where it was written). */
  belongsTo: string | null;
}

/** An AuditEvent row, as the verifier reads it. */
export interface ChainRow {
  id: number;
  scope: string;
  seq: number;
  runId: string | null;
  stepId: string | null;
  type: string;
  actor: string;
  data: unknown;
  at: Date;
  prevHash: string;
  hash: string;
}

/** Where a chain stands after the links read so far. */
interface ChainState {
  /** The last link's seq. */
  seq: number;
  /** What the next link's prevHash must be: the last link's stored hash... */
  hash: string;
  /** ...or the hash its content has, when the two differ (see the CONTENT break). */
  altHash: string | null;
  /** The last link's time (ms), to see a time that is out of order. */
  atMs: number;
  /** A CONTENT break on the last link, which the next link decides. */
  pending: { brk: ChainBreak; storedHash: string; contentHash: string; prevAtMs: number | null } | null;
  /** Links read. */
  events: number;
  /** Whether a break was found in it. */
  broken: boolean;
}


/** What a verification found. */
export interface ChainVerification {
  /** Chains read (distinct scopes). */
  chains: number;
  /** Events read. */
  events: number;
  /** Chains with at least one break. */
  brokenChains: number;
  /** The first break of each broken chain, in append order, up to MAX_REPORTED_BREAKS. */
  breaks: ChainBreak[];
  /** Chains by kind (the scope up to its first colon: `run`, `user`, `agent-token`, `tool`). */
  chainsByKind: Record<string, number>;
  /** The largest event id read (null when none). */
  lastEventId: number | null;
}

const short = (hash: string) => `${hash.slice(0, 12)}…`;

function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** Feeds links in id order; `result()` says what was found. */
export class ChainVerifier {
  private readonly chains = new Map<string, ChainState>();

  /**
   * `startFrom`: the heads of chains whose earlier links were moved to an archive (ArchivedChain):
   * such a chain's first link in the table must continue the archived head, not the genesis hash.
   */
  constructor(private readonly startFrom: ReadonlyMap<string, { seq: number; hash: string }> = new Map()) {}
  private readonly breaks: ChainBreak[] = [];
  private brokenChains = 0;
  private events = 0;
  private lastEventId: number | null = null;

  /** Checks the next link (in id order). */
  push(row: ChainRow): void {
    this.events++;
    this.lastEventId = row.id;
    const state = this.chains.get(row.scope) ?? this.archivedHead(row.scope);
    if (state?.pending) this.decidePending(state, row.prevHash, row.at.getTime());

    const expectedSeq = (state?.seq ?? 0) + 1;
    const expectedPrev = state?.hash ?? GENESIS_HASH;
    const prevOk = row.prevHash === expectedPrev || (state?.altHash != null && row.prevHash === state.altHash);
    const seqOk = row.seq === expectedSeq;
    const contentHash = auditHash(row.prevHash, auditHashedContent({ ...row, data: row.data as Json }));
    const hashOk = contentHash === row.hash;
    if (seqOk && prevOk && hashOk) {
      this.advance(row.scope, row.seq, row.hash, null, row.at);
      return;
    }

    const at = row.at.toISOString();
    const brk = (kind: ChainBreakKind, message: string, belongsTo: string | null = null): ChainBreak => ({ scope: row.scope, seq: row.seq, eventId: row.id, at, kind, message, belongsTo });

    if (!seqOk || !prevOk) {
      const home = this.chainContinuedBy(row);
      if (home !== null && home !== row.scope) {
        this.record(home, brk(ChainBreakKind.SCOPE, `It sits in chain ${row.scope}, but its seq and prevHash continue chain ${home} after its link ${row.seq - 1}: its scope was changed from ${home}.`, home));
        this.advance(home, row.seq, row.hash, null, row.at);
        return;
      }
      if (!seqOk && prevOk) {
        const what = expectedSeq === 1 ? "it is the chain's first link (its prevHash is the genesis hash)" : `it follows link ${expectedSeq - 1} (its prevHash names that link)`;
        this.record(row.scope, brk(ChainBreakKind.SEQ, `Its seq is ${row.seq}, but ${what}, so it should be ${expectedSeq}: its seq was changed.`));
        this.advance(row.scope, expectedSeq, row.hash, contentHash, row.at);
        return;
      }
      if (!seqOk && row.seq > expectedSeq) {
        const gap = row.seq - 1 === expectedSeq ? `Link ${expectedSeq} is` : `Links ${expectedSeq} to ${row.seq - 1} are`;
        const start = state ? "" : " (the chain starts here)";
        this.record(row.scope, brk(ChainBreakKind.MISSING, `${gap} missing before it${start}, and its prevHash names a link that is no longer there: they were deleted.`));
        this.advance(row.scope, row.seq, row.hash, contentHash, row.at);
        return;
      }
      if (!seqOk) {
        this.record(row.scope, brk(ChainBreakKind.SEQ, `Its seq ${row.seq} repeats or goes back (link ${expectedSeq} comes next), and it does not link to link ${expectedSeq - 1}: it was copied in, or its seq was changed.`));
        this.advance(row.scope, expectedSeq, row.hash, contentHash, row.at);
        return;
      }
      const rewritten = hashOk ? " Its own hash was recomputed to match, so it and the links after it were rewritten." : "";
      const previous = expectedSeq === 1 ? "the genesis hash (it is the chain's first link)" : `link ${expectedSeq - 1} (${short(expectedPrev)})`;
      this.record(row.scope, brk(ChainBreakKind.PREV_HASH, `Its prevHash ${short(row.prevHash)} does not name ${previous}: its prevHash was changed, or the link before it was replaced.${rewritten}`));
      this.advance(row.scope, row.seq, row.hash, contentHash, row.at);
      return;
    }

    // Seq and prevHash continue the chain; the content does not match the stored hash.
    if (row.scope.startsWith("run:") && row.runId !== row.scope.slice("run:".length)) {
      this.record(row.scope, brk(ChainBreakKind.RUN, `Its run (${row.runId ?? "none"}) is not the run of its chain (${row.scope}): its run was changed after it was written.`));
      this.advance(row.scope, row.seq, row.hash, contentHash, row.at);
      return;
    }
    const b = brk(ChainBreakKind.CONTENT_OR_HASH, "");
    this.record(row.scope, b);
    const prevAtMs = state ? state.atMs : null;
    this.advance(row.scope, row.seq, row.hash, contentHash, row.at);
    const next = this.chains.get(row.scope)!;
    next.pending = { brk: b, storedHash: row.hash, contentHash, prevAtMs };
    b.message = this.contentMessage(next.pending, row.at.getTime(), null, null);
  }

  /** The state of a chain not read yet that continues an archived head (null: it starts at genesis). */
  private archivedHead(scope: string): ChainState | undefined {
    const head = this.startFrom.get(scope);
    if (!head) return undefined;
    const state: ChainState = { seq: head.seq, hash: head.hash, altHash: null, atMs: 0, pending: null, events: 0, broken: false };
    this.chains.set(scope, state);
    return state;
  }

  /** What the links read so far say. */
  result(): ChainVerification {
    for (const state of this.chains.values()) if (state.pending) state.pending.brk.message = this.contentMessage(state.pending, Date.parse(state.pending.brk.at), null, null);
    const chainsByKind: Record<string, number> = {};
    for (const scope of this.chains.keys()) {
      const kind = scope.includes(":") ? scope.slice(0, scope.indexOf(":")) : scope;
      chainsByKind[kind] = (chainsByKind[kind] ?? 0) + 1;
    }
    return { chains: this.chains.size, events: this.events, brokenChains: this.brokenChains, breaks: [...this.breaks], chainsByKind, lastEventId: this.lastEventId };
  }

  /** The next link of a chain with a pending CONTENT break decides what was changed. */
  private decidePending(state: ChainState, nextPrevHash: string, nextAtMs: number): void {
    const pending = state.pending!;
    state.pending = null;
    const atMs = Date.parse(pending.brk.at);
    if (nextPrevHash === pending.contentHash) {
      pending.brk.kind = ChainBreakKind.HASH;
      pending.brk.message = `Its stored hash ${short(pending.storedHash)} was changed: its content is as written, and the next link names the hash that content has (${short(pending.contentHash)}).`;
    } else if (nextPrevHash === pending.storedHash) {
      pending.brk.kind = ChainBreakKind.CONTENT;
      pending.brk.message = this.contentMessage(pending, atMs, nextAtMs, "confirmed");
    } else {
      pending.brk.message = this.contentMessage(pending, atMs, nextAtMs, null);
    }
  }

  private contentMessage(pending: NonNullable<ChainState["pending"]>, atMs: number, nextAtMs: number | null, confirmed: "confirmed" | null): string {
    const outOfOrder = (pending.prevAtMs !== null && atMs < pending.prevAtMs) || (nextAtMs !== null && atMs > nextAtMs);
    const time = outOfOrder ? ` Its time (${utc(atMs)}) is out of order with the links around it, so the time is the likely change.` : "";
    if (confirmed) {
      return `Its content was changed after it was written: one of type, actor, data, time, run or step is not what was hashed (the next link still names the original hash).${time}`;
    }
    return `Its content no longer matches its stored hash: its content (type, actor, data, time, run or step) or the hash itself was changed. It is the last link the chain has to tell which; compare with a saved heads file.${time}`;
  }

  /**
   * The chain this link would continue, when it does not continue its own: its run's chain first
   * (a run event names its run), else any chain whose next link it would be. Only looked for while
   * breaks are still reported in full (it reads every chain's state).
   */
  private chainContinuedBy(row: ChainRow): string | null {
    const fits = (state: ChainState | undefined) => (state ? state.seq + 1 === row.seq && (state.hash === row.prevHash || state.altHash === row.prevHash) : row.seq === 1 && row.prevHash === GENESIS_HASH);
    if (row.runId !== null) {
      const own = `run:${row.runId}`;
      if (own !== row.scope && fits(this.chains.get(own))) return own;
    }
    if (this.breaks.length >= MAX_REPORTED_BREAKS || row.seq === 1) return null;
    for (const [scope, state] of this.chains) if (scope !== row.scope && fits(state)) return scope;
    return null;
  }

  /** The chain `scope` now ends at this link (`altHash`: the hash its content has, when it differs). */
  private advance(scope: string, seq: number, hash: string, altHash: string | null, at: Date): void {
    const state = this.chains.get(scope);
    if (state) {
      state.seq = seq;
      state.hash = hash;
      state.altHash = altHash;
      state.atMs = at.getTime();
      state.events++;
    } else {
      this.chains.set(scope, { seq, hash, altHash, atMs: at.getTime(), pending: null, events: 1, broken: false });
    }
  }

  private record(scope: string, brk: ChainBreak): void {
    let state = this.chains.get(scope);
    if (!state) {
      // A moved link's home chain, or a chain whose first link is broken: known from now on.
      state = { seq: 0, hash: GENESIS_HASH, altHash: null, atMs: Date.parse(brk.at), pending: null, events: 0, broken: false };
      this.chains.set(scope, state);
    }
    if (state.broken) return;
    state.broken = true;
    this.brokenChains++;
    if (this.breaks.length < MAX_REPORTED_BREAKS) this.breaks.push(brk);
  }
}
