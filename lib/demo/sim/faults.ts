/** Fault injection: tests and the demo arm failures per operation, the systems consume them in order. */
import { ProviderRejection, ProviderServerError, ProviderTimeout, type ProviderError } from "./errors";

/** One failure to play on the next matching call; each kind is a distinct place the world can break. */
export type Fault =
  /** The provider says no before doing anything (4xx). */
  | { kind: "reject"; status?: number; code?: string }
  /** The provider breaks before doing anything, but the caller only sees a 5xx. */
  | { kind: "server_error"; status?: number }
  /** A 504 where the request never reached the effect. */
  | { kind: "timeout_before_effect" }
  /** The 504 after success: the effect is real, the caller is told nothing useful. */
  | { kind: "timeout_after_effect" }
  /** The effect is real and the caller dies before it can write that down. */
  | { kind: "crash_after_effect" }
  /** Latency only; lets tests race the clock without changing the outcome. */
  | { kind: "slow"; ms: number }
  /** The effect is real and the caller gets a broken answer instead of the result (`malformAnswer`). */
  | { kind: "malformed_after_effect"; shape: MalformedShape };

/** The broken answers a provider (or something between it and the caller) gives after a real effect. */
export const MALFORMED_SHAPES = [
  /** Not the answer at all: an HTML error page from a proxy. */
  "garbage",
  /** The answer's body cut off halfway (what a client that reads text on a JSON error passes on). */
  "truncated",
  /** A success without the provider's id. */
  "no_id",
  /** The id as a number, fields of the wrong types. */
  "wrong_type",
  /** The right answer inside a body of megabytes. */
  "huge",
  /** A well-formed answer about another request: another object's id, another caller's key. */
  "other_key",
] as const;
/** One of `MALFORMED_SHAPES`. */
export type MalformedShape = (typeof MALFORMED_SHAPES)[number];

/** Replaces every occurrence of `from` in the strings of `value` (ids, keys, labels, headers). */
function replaceDeep(value: unknown, from: string, to: string): unknown {
  if (typeof value === "string") return value.split(from).join(to);
  if (Array.isArray(value)) return value.map((v) => replaceDeep(v, from, to));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceDeep(v, from, to)]));
  return value;
}

/** What the caller receives instead of `value` (the real answer for the call under `key`). */
export function malformAnswer(shape: MalformedShape, value: unknown, key: string | undefined): unknown {
  const record = value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  switch (shape) {
    case "garbage":
      return "<html><body><h1>502 Bad Gateway</h1></body></html>";
    case "truncated": {
      const text = JSON.stringify(value);
      return text.slice(0, Math.floor(text.length / 2));
    }
    case "no_id": {
      const { id: _id, ...rest } = record;
      return rest;
    }
    case "wrong_type":
      return { ...record, id: 4242, status: ["ok"] };
    case "huge":
      return { ...record, debug: "x".repeat(2 * 1024 * 1024) };
    case "other_key": {
      const id = typeof record.id === "string" ? record.id : "";
      const otherKey = key ? `${key.slice(0, -4)}${key.endsWith("ffff") ? "eeee" : "ffff"}` : "";
      const answer = key ? replaceDeep(value, key, otherKey) : value;
      return id ? replaceDeep(answer, id, `${id}0`) : answer;
    }
  }
}

/** How often and for which calls a fault fires. */
export interface InjectOptions {
  /** Number of calls the fault applies to (default 1; `Infinity` for "until cleared"). */
  times?: number;
  /** Restricts the fault to calls whose request args match, e.g. one customer's charge. */
  when?: (args: unknown) => boolean;
}

interface Armed {
  fault: Fault;
  remaining: number;
  when?: (args: unknown) => boolean;
}

/** Armed faults, queued per qualified op name ("payments.charge"), consumed first-in first-out. */
export class FaultInjector {
  private readonly queues = new Map<string, Armed[]>();

  /** Arms `fault` for the next `times` calls of `op` (after any faults already queued for it). */
  inject(op: string, fault: Fault, opts: InjectOptions = {}): void {
    const times = opts.times ?? 1;
    if (times < 1) return;
    const queue = this.queues.get(op) ?? [];
    queue.push({ fault, remaining: times, when: opts.when });
    this.queues.set(op, queue);
  }

  /** Disarms everything, so one scenario's faults never leak into the next. */
  clear(): void {
    this.queues.clear();
  }

  /** Faults still armed (for `op`, or in total), so a test can prove its fault actually fired. */
  pending(op?: string): number {
    const queues = op === undefined ? [...this.queues.values()] : [this.queues.get(op) ?? []];
    return queues.flat().reduce((n, a) => n + a.remaining, 0);
  }

  /** Consumes the first armed fault for `op` that accepts `args`; the systems call this once per call. */
  take(op: string, args: unknown): Fault | undefined {
    const queue = this.queues.get(op);
    if (!queue) return undefined;
    const i = queue.findIndex((a) => !a.when || a.when(args));
    const armed = queue[i];
    if (!armed) return undefined;
    armed.remaining -= 1;
    if (armed.remaining <= 0) queue.splice(i, 1);
    return armed.fault;
  }
}

/** The error a fault raises before any effect, or undefined when the fault lets the effect happen. */
export function errorBeforeEffect(fault: Fault): ProviderError | undefined {
  switch (fault.kind) {
    case "reject":
      return new ProviderRejection(fault.status ?? 422, fault.code ?? "rejected");
    case "server_error":
      return new ProviderServerError(fault.status ?? 503);
    case "timeout_before_effect":
      return new ProviderTimeout();
    default:
      return undefined;
  }
}
