/**
 * One request per step: a confirmed call's outcome waits here and goes to the server with the run's
 * next command (its next call, or its completion) as `previous`, instead of in a request of its own.
 * The server records it first, as its own commit, so the log's guarantees are those of two requests:
 * an outcome not yet sent is a step in flight, reconciled by its key if this process dies.
 *
 * An outcome never waits longer than `lingerMs`: an agent that thinks (a model's turn takes seconds)
 * gets it sent alone meanwhile, off its critical path. Anything else the process asks the server
 * (a pivot, an unwind, a read) first sends every waiting outcome (`flush`), so it reads its own writes.
 * Only confirmations wait: a failure or an unknown outcome is reported at once, as the agent is told.
 */
import type { z } from "zod";
import type { ZPreviousOutcome } from "@/lib/protocol/schemas/calls";

/** A confirmed outcome waiting for its run's next command. */
export type WaitingOutcome = z.input<typeof ZPreviousOutcome>;

/** How long a confirmed outcome may wait for the run's next command before it is sent alone (ms). */
export const DEFAULT_LINGER_MS = 250;

interface Waiting {
  previous: WaitingOutcome;
  /** Sends it alone when the run has no next command in time (none for an outcome given back). */
  timer?: ReturnType<typeof setTimeout>;
}

export class OutcomePipeline {
  /** Per run: the outcome waiting for that run's next command. */
  private readonly waiting = new Map<string, Waiting>();
  /** Per run: an outcome being sent alone (the next command waits for it, or its begin would find the step in flight). */
  private readonly sending = new Map<string, Promise<void>>();
  /** Per run: the server's refusal of an outcome sent alone, for the run's next command to throw. */
  private readonly refused = new Map<string, unknown>();

  constructor(
    /** 0: every outcome is its own request (the two-request path). */
    readonly lingerMs: number,
    /** Sends one outcome in its own request (POST /steps/{id}/outcome). */
    private readonly sendAlone: (previous: WaitingOutcome) => Promise<void>,
  ) {}

  /** Whether outcomes wait for the next command at all. */
  get on(): boolean {
    return this.lingerMs > 0;
  }

  /** Keeps a confirmed outcome for the run's next command; sent alone after `lingerMs`. */
  hold(runId: string, previous: WaitingOutcome): void {
    const earlier = this.waiting.get(runId);
    if (earlier) {
      // Two waiting outcomes of one run (two contexts on one run): the earlier goes now, alone.
      clearTimeout(earlier.timer);
      this.startSending(runId, earlier.previous);
    }
    const timer = setTimeout(() => {
      if (this.waiting.get(runId)?.previous !== previous) return;
      this.waiting.delete(runId);
      this.startSending(runId, previous);
    }, this.lingerMs);
    this.waiting.set(runId, { previous, timer });
  }

  /**
   * The run's waiting outcome for its next command (removed: the caller sends it), once any outcome
   * of the run being sent alone is answered. Throws the server's refusal of one sent alone: the log
   * says something else happened to that step, and the agent must hear it before it goes on.
   */
  async take(runId: string): Promise<WaitingOutcome | undefined> {
    await this.sending.get(runId);
    if (this.refused.has(runId)) {
      const refusal = this.refused.get(runId);
      this.refused.delete(runId);
      throw refusal;
    }
    const waiting = this.waiting.get(runId);
    if (!waiting) return undefined;
    clearTimeout(waiting.timer);
    this.waiting.delete(runId);
    return waiting.previous;
  }

  /**
   * Puts back an outcome whose command got no answer (the network, a 5xx): it may or may not be
   * recorded, and sending it again is answered from the log either way. It goes with the run's next
   * command or flush; it is not sent alone again, so a process whose server is away can still end.
   */
  giveBack(runId: string, previous: WaitingOutcome): void {
    if (!this.waiting.has(runId)) this.waiting.set(runId, { previous });
  }

  /** Sends every waiting outcome now, each alone, and waits for all being sent; throws the first refusal. */
  async flush(): Promise<void> {
    for (const [runId, waiting] of [...this.waiting]) {
      clearTimeout(waiting.timer);
      this.waiting.delete(runId);
      this.startSending(runId, waiting.previous);
    }
    await Promise.all([...this.sending.values()]);
    const [first] = [...this.refused];
    if (first) {
      this.refused.delete(first[0]);
      throw first[1];
    }
  }

  /** Whether any outcome waits or is being sent. */
  get idle(): boolean {
    return this.waiting.size === 0 && this.sending.size === 0;
  }

  /** Sends one outcome alone; a failure without an answer gives it back, a refusal is kept for the run's next command. */
  private startSending(runId: string, previous: WaitingOutcome): void {
    const before = this.sending.get(runId) ?? Promise.resolve();
    const settled: Promise<void> = before
      .then(() => this.sendAlone(previous))
      .then(
        () => undefined,
        (e: unknown) => {
          if (answeredRefusal(e)) this.refused.set(runId, e);
          else this.giveBack(runId, previous);
        },
      )
      .finally(() => {
        if (this.sending.get(runId) === settled) this.sending.delete(runId);
      });
    this.sending.set(runId, settled);
  }
}

/**
 * Whether the server answered the request with a refusal (a 4xx: it decided, and sending again would
 * be refused again) rather than not answering or failing (the network, a 5xx: it may be recorded or not).
 */
export function answeredRefusal(e: unknown): boolean {
  const status = (e as { httpStatus?: unknown; status?: unknown } | null)?.httpStatus ?? (e as { status?: unknown } | null)?.status;
  return typeof status === "number" && status >= 400 && status < 500;
}
