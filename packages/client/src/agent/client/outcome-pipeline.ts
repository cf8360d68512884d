/**
 * One request per step, when the caller opts in (`outcomeLingerMs` > 0; the default is 0, every
 * outcome durable before `call()` returns): a confirmed call's outcome waits here and goes to the
 * server with the run's next command (its next call, or its completion) as `previous`, instead of in
 * a request of its own. The server records it first, as its own commit, so the log's guarantees are
 * those of two requests: an outcome not yet sent is a step in flight, reconciled by its key if this
 * process dies (the server's sweep of silent steps gives it to a worker).
 *
 * An outcome never waits longer than `lingerMs`: an agent that thinks (a model's turn takes seconds)
 * gets it sent alone meanwhile, off its critical path. Anything else the process asks the server
 * (a pivot, an unwind, a read, a completion) first sends every waiting outcome of every pipeline of
 * the process (`flushProcess`), so two engines on one run read and finish on each other's writes.
 * Only confirmations wait: a failure or an unknown outcome is reported at once, after every waiting
 * outcome, as the agent is told. A process that ends sends what waits first (process-flush.ts).
 */
import type { z } from "zod";
import type { ZPreviousOutcome } from "../../protocol/schemas/calls";
import { watchPipelines, type ExitRequest } from "./process-flush";

/** A confirmed outcome waiting for its run's next command. */
export type WaitingOutcome = z.input<typeof ZPreviousOutcome>;

/** How long a confirmed outcome may wait for the run's next command before it is sent alone (ms): 0, none. */
export const DEFAULT_LINGER_MS = 0;

/** Every pipeline of this process that holds an outcome not yet answered by the server. */
const busy = new Set<OutcomePipeline>();

/**
 * Sends every waiting outcome of every pipeline of this process but `except`, and waits for the
 * answers. `refusals: "throw"` throws the first refusal (a read or command that must not go on past
 * it); "keep" leaves each for its run's next command to throw.
 */
export async function flushProcess(options: { except?: OutcomePipeline; refusals?: "throw" | "keep" } = {}): Promise<void> {
  const pipelines = [...busy].filter((p) => p !== options.except);
  if (options.refusals === "keep") {
    await Promise.all(pipelines.map((p) => p.send()));
    return;
  }
  const results = await Promise.allSettled(pipelines.map((p) => p.flush()));
  const refused = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (refused) throw refused.reason;
}

/** The outcomes of this process the server has not answered, as requests a process that is ending can still send. */
export function unansweredRequests(): ExitRequest[] {
  return [...busy].flatMap((p) => p.unansweredRequests());
}

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
    /** The same request described for another process to send, when this one is ending (null: it cannot be). */
    private readonly describe: (previous: WaitingOutcome) => ExitRequest | null = () => null,
  ) {}

  /** Outcomes held and not yet answered by the server (waiting, being sent, or riding on a command in flight). */
  private readonly unanswered = new Set<WaitingOutcome>();

  /** Every unanswered outcome as a request another process can send. */
  unansweredRequests(): ExitRequest[] {
    return [...this.unanswered].flatMap((previous) => this.describe(previous) ?? []);
  }

  /** The server answered the command that carried `previous` (recorded, or refused): it no longer needs sending. */
  answered(previous: WaitingOutcome): void {
    this.unanswered.delete(previous);
    if (this.unanswered.size === 0) busy.delete(this);
  }

  /** Whether outcomes wait for the next command at all. */
  get on(): boolean {
    return this.lingerMs > 0;
  }

  /** Keeps a confirmed outcome for the run's next command; sent alone after `lingerMs`. */
  hold(runId: string, previous: WaitingOutcome): void {
    this.unanswered.add(previous);
    busy.add(this);
    watchPipelines({ flushProcess: () => flushProcess({ refusals: "keep" }), unansweredRequests });
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
    await this.send();
    const [first] = [...this.refused];
    if (first) {
      this.refused.delete(first[0]);
      throw first[1];
    }
  }

  /** Sends every waiting outcome now, each alone, and waits for all being sent; a refusal waits for its run's next command. */
  async send(): Promise<void> {
    for (const [runId, waiting] of [...this.waiting]) {
      clearTimeout(waiting.timer);
      this.waiting.delete(runId);
      this.startSending(runId, waiting.previous);
    }
    await Promise.all([...this.sending.values()]);
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
        () => this.answered(previous),
        (e: unknown) => {
          if (answeredRefusal(e)) {
            this.answered(previous);
            this.refused.set(runId, e);
          } else this.giveBack(runId, previous);
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
