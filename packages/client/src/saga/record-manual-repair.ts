/**
 * A person answered a failed compensation by hand (a refund made in the provider's console): the
 * repair is written back to the saga log row it answers (who, when, with what reference) together
 * with the escalation's resolution, and the run is finished when nothing else is left for people.
 * Framework-free: a store in.
 */
import { SagaError } from "./errors";
import { finishUnwoundRun, type FinishUnwoundRunResult } from "./finish-unwound-run";
import type { Actor, EscalationRecord, ManualRepair, SagaStore, StepRecord } from "./store";
import type { Json } from "./tools";
import { EscalationKind, EscalationStatus, StepStatus } from "./vocabulary";

/** A recorded manual repair. */
export interface RecordManualRepairInput {
  /** The COMPENSATION_FAILED escalation. */
  escalationId: string;
  /** What was done, in the person's words (required). */
  note: string;
  /** The repair's id in the external system, if any. */
  repairRef: string | null;
  /** The person. */
  actor: Actor;
}

/** What recording did. */
export interface RecordManualRepairResult {
  /** The step, with its manual repair. */
  step: StepRecord;
  /** The resolved escalation. */
  escalation: EscalationRecord;
  /** Whether the run is finished now, and what is left if not. */
  run: FinishUnwoundRunResult;
}

/**
 * Records the repair on the step and resolves the escalation in one store transaction, then
 * finishes the run if nothing else waits for people. Refused with ESCALATION_CONFLICT when the
 * escalation is not an unresolved COMPENSATION_FAILED one, or its step is no longer
 * COMPENSATION_FAILED (the worker's retry confirmed the compensation meanwhile).
 */
export async function recordManualRepair(store: SagaStore, input: RecordManualRepairInput): Promise<RecordManualRepairResult> {
  const note = input.note.trim();
  if (!note) throw new SagaError("INVALID_ARGS", "A manual repair needs a note saying what was done.", [{ path: "note", message: "required" }]);
  if (!store.recordManualRepair) throw new SagaError("INVALID_ARGS", "This store cannot record manual repairs (people record them on the server).");
  const escalation = await store.getEscalation(input.escalationId);
  if (!escalation) throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${input.escalationId} does not exist.`);
  if (escalation.kind !== EscalationKind.COMPENSATION_FAILED || !escalation.stepId) {
    throw new SagaError("ESCALATION_CONFLICT", `Escalation ${escalation.id} is ${escalation.kind}, not a failed compensation of a step; use the resolution for its kind.`);
  }
  if (escalation.status === EscalationStatus.RESOLVED) {
    throw new SagaError("ESCALATION_CONFLICT", `Escalation ${escalation.id} was already resolved by ${escalation.resolvedBy ?? "someone"}.`);
  }
  const repair: ManualRepair = {
    repairedBy: input.actor.id,
    repairedAt: new Date().toISOString(), // the store writes its own clock's time
    repairRef: input.repairRef?.trim() || null,
    note,
    escalationId: escalation.id,
  };
  const resolution = { repair: "manual", repairRef: repair.repairRef, note } satisfies Json;
  const done = await store.recordManualRepair(
    { escalationId: escalation.id, stepId: escalation.stepId, repair, resolution },
    {
      step: { type: "step.repaired_by_hand", actor: input.actor, data: { escalationId: escalation.id, repairRef: repair.repairRef, note } },
      escalation: { type: "escalation.resolved", actor: input.actor, data: { escalationId: escalation.id, kind: escalation.kind, resolution } },
    },
  );
  if (!done) {
    const [current, step] = [await store.getEscalation(escalation.id), await store.getStep(escalation.stepId)];
    if (current?.status === EscalationStatus.RESOLVED) {
      throw new SagaError("ESCALATION_CONFLICT", `Escalation ${escalation.id} was resolved by ${current.resolvedBy ?? "someone"} first.`);
    }
    throw new SagaError(
      "ESCALATION_CONFLICT",
      step?.status !== StepStatus.COMPENSATION_FAILED
        ? `Step ${step?.stepIdx ?? "?"} is ${step?.status ?? "gone"} now, not COMPENSATION_FAILED: the compensation settled meanwhile; reload the item.`
        : `The repair of escalation ${escalation.id} was not recorded; reload the item and try again.`,
    );
  }
  return { ...done, run: await finishUnwoundRun(store, escalation.runId, input.actor) };
}
