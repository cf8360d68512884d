/** What every simulated service shares: faults, ledger, search lag, native idempotency, id minting. */
import { systemClock, type Clock } from "@/packages/client/src/saga/clock";
import { CrashPoint, SimulatedCrash } from "@/packages/client/src/saga/crash-points";
import { ProviderError, ProviderRejection, ProviderTimeout } from "./errors";
import { errorBeforeEffect, FaultInjector, malformAnswer } from "./faults";
import { Ledger, type Outcome } from "./ledger";

/** Wiring for one system; a World passes shared instances so all systems tell one story. */
export interface SimOptions {
  /** Drives search lag, slow faults and ledger times; tests pass a ManualClock. */
  clock?: Clock;
  /** Where attempts are logged; a private one is made when the system stands alone. */
  ledger?: Ledger;
  /** Where faults are armed; a private one is made when the system stands alone. */
  faults?: FaultInjector;
  /** How far search trails writes, like Stripe search or a JQL index (default 0). */
  searchLagMs?: number;
}

/** Idempotency option of the services that support it natively (Stripe's Idempotency-Key header). */
export interface IdempotencyOpts {
  /** Same key and same request returns the first result; same key and another request is refused. */
  idempotencyKey?: string;
}

/** What an operation did, so `mutate` can log it truthfully before deciding what the caller hears. */
export interface Applied<T> {
  /** The response a successful call returns. */
  value: T;
  /** The object created or touched, for the ledger. */
  ref?: string;
  /** Served from the idempotency store: logged as "replayed", no new effect. */
  replayed?: boolean;
  /** Side effects logged after the main one (a receipt follows its charge). */
  after?: () => void;
}

/** JSON with sorted keys, so a replay with reordered fields still counts as the same request. */
function fingerprint(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Base class of the simulated services. */
export abstract class SimSystem {
  /** Shared with the World, so lag and slow faults follow the test's clock. */
  readonly clock: Clock;
  /** Shared with the World, so one log covers every system. */
  readonly ledger: Ledger;
  /** Shared with the World, so a scenario arms faults in one place. */
  readonly faults: FaultInjector;
  /** Settable at any time, so a test can make an object appear in search mid-scenario. */
  searchLagMs: number;
  private counter = 0;
  private readonly idempotency = new Map<string, { request: string; value: unknown; ref?: string }>();

  protected constructor(
    /** Prefix of op names and the ledger's `system` field. */
    readonly system: string,
    opts: SimOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.ledger = opts.ledger ?? new Ledger(this.clock);
    this.faults = opts.faults ?? new FaultInjector();
    this.searchLagMs = opts.searchLagMs ?? 0;
  }

  /** Mints a prefixed id ("pi_000001"); deterministic so scenarios and demos are repeatable. */
  protected nextId(prefix: string): string {
    this.counter += 1;
    return `${prefix}${String(this.counter).padStart(6, "0")}`;
  }

  /** Whether search can see an object yet: only once it is older than the lag. */
  protected searchable(createdAt: Date): boolean {
    return createdAt.getTime() <= this.clock.now().getTime() - this.searchLagMs;
  }

  /** A read: never logged, never faulted, returns a copy so callers cannot edit the world. */
  protected async read<T>(fn: () => T): Promise<T> {
    await Promise.resolve();
    return structuredClone(fn());
  }

  /** Native idempotency: replays the stored first result, refuses a reused key with other params. */
  protected idempotent<T>(key: string | undefined, op: string, params: unknown, apply: () => Applied<T>): Applied<T> {
    if (key === undefined) return apply();
    const request = fingerprint({ op, params });
    const stored = this.idempotency.get(key);
    if (stored) {
      if (stored.request !== request) {
        throw new ProviderRejection(400, "idempotency_key_reused", "key was used with different parameters");
      }
      return { value: structuredClone(stored.value) as T, ref: stored.ref, replayed: true };
    }
    const applied = apply();
    this.idempotency.set(key, { request, value: structuredClone(applied.value), ref: applied.ref });
    return applied;
  }

  /**
   * One mutating call: consume a fault, log the attempt with its true outcome, then tell the caller
   * what the fault says it is told (which after the effect is a 504 or a crash, not the result).
   */
  protected async mutate<T>(
    op: string,
    args: unknown,
    ids: { key?: string; ref?: string },
    apply: () => Applied<T>,
  ): Promise<T> {
    const name = `${this.system}.${op}`;
    await Promise.resolve();
    const fault = this.faults.take(name, args);
    const log = (outcome: Outcome, ref?: string, error?: string) =>
      this.ledger.record({ system: this.system, op: name, key: ids.key, ref, args, outcome, error });
    if (fault?.kind === "slow") await this.clock.sleep(fault.ms);
    const early = fault && errorBeforeEffect(fault);
    if (early) {
      log("rejected", ids.ref, early.code);
      throw early;
    }
    let applied: Applied<T>;
    try {
      applied = apply();
    } catch (err) {
      if (err instanceof ProviderError) log(err.status === 404 ? "not_found" : "rejected", ids.ref, err.code);
      throw err;
    }
    log(applied.replayed ? "replayed" : "effect", applied.ref ?? ids.ref);
    if (!applied.replayed) applied.after?.();
    if (fault?.kind === "timeout_after_effect") throw new ProviderTimeout();
    if (fault?.kind === "crash_after_effect") throw new SimulatedCrash(CrashPoint.AFTER_EFFECT);
    // The caller is told something that is not this call's result (a fault of the answer, not of the effect).
    if (fault?.kind === "malformed_after_effect") return malformAnswer(fault.shape, structuredClone(applied.value), ids.key) as T;
    return structuredClone(applied.value);
  }

  /** The 404 every service answers for an id it never issued. */
  protected notFound(what: string, id: string): ProviderRejection {
    return new ProviderRejection(404, "not_found", `${what} ${id} does not exist`);
  }
}
