/**
 * Raises an escalation: a new `esc_...` row, once per dedupe key (a repeat returns the first), and
 * its `escalation.raised` audit event in the same write. One place for the four ways the saga asks a
 * person (a held call, a failure after the pivot, an outcome nobody can find out, a compensation
 * that failed), so each reads the same in the log and the queue.
 */
import type { EngineDeps } from "./deps";
import { observerOf, type EscalationSource } from "./observer";
import type { Actor, CreateEscalationResult, NewEscalation } from "./store";
import type { Json } from "./tools";

/** One escalation to raise. */
export interface RaiseEscalationInput extends Omit<NewEscalation, "id"> {
  /** Who raised it (the audit event's actor). */
  actor: Actor;
  /** What the audit event records beside the kind (`{ stepIdx }`, `{ tool, reason }`). */
  facts: Record<string, Json>;
  /** What raised it, for the observer (traces); not recorded. */
  source: EscalationSource;
}

/** Raises `input` once per dedupe key, with its audit event; the observer, if any, hears of a new one. */
export async function raiseEscalation(deps: Pick<EngineDeps, "store" | "ids" | "observer">, input: RaiseEscalationInput): Promise<CreateEscalationResult> {
  const { actor, facts, source, ...escalation } = input;
  const raised = await deps.store.createEscalation({ id: deps.ids.next("esc"), ...escalation }, { type: "escalation.raised", actor, data: { kind: escalation.kind, ...facts } });
  const observer = raised.created ? observerOf(deps) : undefined;
  if (observer?.escalationRaised) await observer.escalationRaised(raised.escalation, source, actor);
  return raised;
}
