/** The effect ledger: the ground truth of what happened in the world, which tests assert against. */
import { systemClock, type Clock } from "@/packages/client/src/saga/clock";

/** How an attempt ended; only "effect" changed the world. */
export type Outcome = "effect" | "rejected" | "replayed" | "not_found";

/** One attempted operation, whatever the caller was told about it. */
export interface LedgerEntry {
  /** Total order across all systems, because `at` ties under a manual clock. */
  seq: number;
  /** When the system saw the attempt, by the injected clock. */
  at: Date;
  /** Which simulated service, so one shared ledger tells the whole story. */
  system: string;
  /** Qualified name ("payments.charge"), the same vocabulary the fault injector uses. */
  op: string;
  /** The saga key the request carried (header, label, metadata), for per-key effect counts. */
  key?: string;
  /** The external object touched or created, for asserting on one ticket or one charge. */
  ref?: string;
  /** A copy of the request, so later mutation by the caller cannot rewrite history. */
  args: unknown;
  /** What really happened, as opposed to what the caller was told. */
  outcome: Outcome;
  /** The error code returned when the attempt did not take effect. */
  error?: string;
}

/** Narrows ledger queries; every field given must match. */
export interface LedgerFilter {
  /** Only this system. */
  system?: string;
  /** Only this qualified op. */
  op?: string;
  /** Only attempts carrying this key. */
  key?: string;
  /** Only attempts touching this object. */
  ref?: string;
  /** Only this outcome. */
  outcome?: Outcome;
}

/** Append-only log shared by every system of a World. */
export class Ledger {
  private readonly entries: LedgerEntry[] = [];

  constructor(private readonly clock: Clock = systemClock) {}

  /** Appends an attempt; called by the systems, never by code under test. */
  record(entry: Omit<LedgerEntry, "seq" | "at">): LedgerEntry {
    const full: LedgerEntry = {
      ...entry,
      args: structuredClone(entry.args),
      seq: this.entries.length + 1,
      at: this.clock.now(),
    };
    this.entries.push(full);
    return full;
  }

  /** Every attempt matching `filter`, in order, including the ones that changed nothing. */
  operations(filter: LedgerFilter = {}): LedgerEntry[] {
    return this.entries.filter(
      (e) =>
        (filter.system === undefined || e.system === filter.system) &&
        (filter.op === undefined || e.op === filter.op) &&
        (filter.key === undefined || e.key === filter.key) &&
        (filter.ref === undefined || e.ref === filter.ref) &&
        (filter.outcome === undefined || e.outcome === filter.outcome),
    );
  }

  /** Only the attempts that changed the world. */
  effects(filter: Omit<LedgerFilter, "outcome"> = {}): LedgerEntry[] {
    return this.operations({ ...filter, outcome: "effect" });
  }

  /** Number of effects matching `filter` (or of attempts with `filter.outcome`, when given). */
  count(filter: LedgerFilter = {}): number {
    return this.operations({ outcome: "effect", ...filter }).length;
  }

  /** Effects per key (optionally for one op); keyless effects are not counted. */
  effectsPerKey(op?: string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const e of this.effects({ op })) {
      if (e.key !== undefined) counts.set(e.key, (counts.get(e.key) ?? 0) + 1);
    }
    return counts;
  }

  /** Keys with more than one effect of `op`: the double charges and double tickets the saga must prevent. */
  duplicates(op: string): string[] {
    return [...this.effectsPerKey(op)].filter(([, n]) => n > 1).map(([key]) => key);
  }
}
