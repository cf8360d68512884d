/**
 * What the engine tells the process about what it recorded, for traces: a step's outcome, reconcile
 * or compensation settled in this process, and an escalation it raised. The engine imports nothing to
 * do it (the app's observer, lib/core/observability/saga-spans.ts, makes the spans); without an observer
 * nothing of this runs.
 *
 * Two ways an observer reaches the engine's functions:
 * - an in-process engine's deps (`SagaEngineOptions.observer`): it sees steps and escalations, since
 *   no HTTP request records them (the dashboard's unwinds, a worker beside the database);
 * - a store's (`observeStore`), for the server's agent API, whose use cases build their deps per
 *   request: it sees escalations only, since the API traces a step's record from its answer.
 */
import type { Actor, EscalationRecord, StepRecord } from "./store";

/** The span a recorded step makes: its outcome, its reconcile, its compensation. */
export type StepOperation = "execute_tool" | "reconcile" | "compensate";

/** What raised an escalation, as a trace names it. */
export const EscalationSource = {
  /** The gate held a call for a person's approval. */
  held_call: "held_call",
  /** A call failed after the pivot: the approved plan cannot finish without a person. */
  failed_after_pivot: "failed_after_pivot",
  /** Reconcile could not ask the real system whether a call happened. */
  lookup_failed: "lookup_failed",
  /** A compensation failed (or there was none to run). */
  compensation_failed: "compensation_failed",
  /** The stuck-after-pivot sweep found an approved run gone quiet. */
  stuck_sweep: "stuck_sweep",
  /** A revoke past the step's window. */
  revoke: "revoke",
  /** The agent raised it through the API. */
  agent: "agent",
} as const;
export type EscalationSource = (typeof EscalationSource)[keyof typeof EscalationSource];

/** Told of what the engine recorded; each method optional, each awaited (an observer never throws). */
export interface SagaObserver {
  /** A step's outcome, reconcile or compensation was recorded by this call (`startedAt`: when the recording began). */
  stepRecorded?(operation: StepOperation, step: StepRecord, startedAt: Date): Promise<void>;
  /** An escalation was raised: created now, not a repeat answered with the existing row. */
  escalationRaised?(escalation: EscalationRecord, source: EscalationSource, actor: Actor): Promise<void>;
}

const storeObservers = new WeakMap<object, SagaObserver>();

/** Makes `observer` the one the engine's functions use on `store` when their deps name none. */
export function observeStore(store: object, observer: SagaObserver): void {
  storeObservers.set(store, observer);
}

/** The observer of `deps`: its own, else its store's, else none. */
export function observerOf(deps: { store: object; observer?: SagaObserver | undefined }): SagaObserver | undefined {
  return deps.observer ?? storeObservers.get(deps.store);
}

/** Tells the observer of `deps`, if it listens for steps, that this call recorded `step`. */
export async function tellStepRecorded(deps: { store: object; observer?: SagaObserver | undefined }, operation: StepOperation, step: StepRecord, startedAt: Date): Promise<void> {
  const observer = observerOf(deps);
  if (observer?.stepRecorded) await observer.stepRecorded(operation, step, startedAt);
}
