/**
 * The engine of a process that holds the saga store itself (the server's dashboard, its scripts and
 * sweeps, a test): everything `SagaEngine` does, plus the decisions only people make (a pivot, a held
 * call, an unknown outcome, a manual resolution). An agent's engine talks to a Sagaboard server, which
 * never lets it decide these, so they are not on `SagaEngine`, and `@sagaboard/client` does not export
 * this class.
 */
import { decidePivot } from "./decide-pivot";
import { SagaEngine, type SagaEngineOptions } from "./engine";
import { SagaError } from "./errors";
import type { Actor, EscalationRecord, PivotRecord, SagaStore } from "./store";
import type { Json } from "./tools";
import { EscalationKind, EscalationStatus, StepStatus, UNSETTLED_STATUSES, type PivotRejectionCode } from "./vocabulary";

/** Options of a reviewer's engine: an engine's, on a store this process holds. */
export interface ReviewerEngineOptions extends SagaEngineOptions {
  /** The store the engine and the people's decisions write (never a server: a server decides for itself). */
  store: SagaStore;
}

/** An engine on this process's store that also takes the decisions people make at the dashboard. */
export class ReviewerEngine extends SagaEngine {
  private readonly store: SagaStore;

  constructor(options: ReviewerEngineOptions) {
    super(options);
    this.store = options.store;
  }

  /**
   * A reviewer's decision on a pivot, bound to the plan hash the reviewer saw (`decidePivot`,
   * decide-pivot.ts): a rejection may carry a code for the agent. Refused with PIVOT_CONFLICT when it
   * was already decided, the plan changed since, or the run stopped waiting.
   */
  async decidePivot(
    pivotId: string,
    decision: { approve: boolean; actor: Actor; planHash: string; reason?: string | null; reasonCode?: PivotRejectionCode | null },
  ): Promise<PivotRecord> {
    return decidePivot({ store: this.store }, { pivotId, ...decision });
  }

  /** A reviewer approves or rejects a call held in the escalation queue (APPROVAL_REQUIRED). */
  async decideHeldCall(escalationId: string, decision: { approve: boolean; actor: Actor; note?: string }): Promise<EscalationRecord> {
    const escalation = await this.getOpenEscalation(escalationId, EscalationKind.APPROVAL_REQUIRED);
    return this.resolve(escalation, decision.actor, { approved: decision.approve, note: decision.note ?? null });
  }

  /**
   * A person settles an UNKNOWN outcome with evidence: CONFIRMED (with the external ref found) or
   * NOT_EXECUTED (a retry may then reuse the key). Writes back to the saga log.
   */
  async settleUnknown(
    escalationId: string,
    decision: { outcome: "CONFIRMED" | "NOT_EXECUTED"; evidence: string; externalRef?: string | null; actor: Actor },
  ): Promise<EscalationRecord> {
    if (!decision.evidence.trim()) {
      throw new SagaError("INVALID_ARGS", "Settling an unknown outcome needs evidence (what you saw in the real system).", [{ path: "evidence", message: "required" }]);
    }
    const escalation = await this.getOpenEscalation(escalationId, EscalationKind.OUTCOME_UNKNOWN);
    if (!escalation.stepId) throw new SagaError("STEP_NOT_FOUND", `Escalation ${escalationId} names no step.`);
    const patch =
      decision.outcome === "CONFIRMED"
        ? { status: StepStatus.CONFIRMED, externalRef: decision.externalRef ?? null, result: { settledBy: decision.actor.id, evidence: decision.evidence } }
        : { status: StepStatus.NOT_EXECUTED };
    const step = await this.store.updateStep(escalation.stepId, { status: UNSETTLED_STATUSES }, patch, {
      type: "step.settled",
      actor: decision.actor,
      data: { outcome: decision.outcome, evidence: decision.evidence, externalRef: decision.externalRef ?? null, escalationId },
    });
    if (!step) throw new SagaError("CONFLICT", `The step of escalation ${escalationId} is no longer unsettled; reload it.`);
    return this.resolve(escalation, decision.actor, { outcome: decision.outcome, evidence: decision.evidence });
  }

  /** Records a manual resolution (a repaired compensation, a decided stuck step) with a note. */
  async resolveEscalation(escalationId: string, decision: { actor: Actor; note: string; resolution?: Json }): Promise<EscalationRecord> {
    if (!decision.note.trim()) throw new SagaError("INVALID_ARGS", "A resolution needs a note saying what was done.", [{ path: "note", message: "required" }]);
    const escalation = await this.getOpenEscalation(escalationId, null);
    return this.resolve(escalation, decision.actor, { note: decision.note, ...(decision.resolution && typeof decision.resolution === "object" && !Array.isArray(decision.resolution) ? decision.resolution : {}) });
  }

  private async getOpenEscalation(escalationId: string, kind: EscalationKind | null): Promise<EscalationRecord> {
    const escalation = await this.store.getEscalation(escalationId);
    if (!escalation) throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${escalationId} does not exist.`);
    if (kind && escalation.kind !== kind) {
      throw new SagaError("ESCALATION_CONFLICT", `Escalation ${escalationId} is ${escalation.kind}, not ${kind}; use the resolution for its kind.`);
    }
    if (escalation.status === EscalationStatus.RESOLVED) {
      throw new SagaError("ESCALATION_CONFLICT", `Escalation ${escalationId} was already resolved by ${escalation.resolvedBy ?? "someone"}.`);
    }
    return escalation;
  }

  private async resolve(escalation: EscalationRecord, actor: Actor, resolution: Json): Promise<EscalationRecord> {
    const resolved = await this.store.resolveEscalation(
      escalation.id,
      { resolvedBy: actor.id, resolution },
      { type: "escalation.resolved", actor, data: { escalationId: escalation.id, kind: escalation.kind, resolution } },
    );
    if (!resolved) throw new SagaError("ESCALATION_CONFLICT", `Escalation ${escalation.id} was resolved by someone else first.`);
    return resolved;
  }
}
