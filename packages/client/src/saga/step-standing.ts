/**
 * Where a step stands for everyone who reads it: the run page, the escalation queue and item, the
 * unwind, and the checks that finish a run. A failed compensation a person answered by hand
 * (packages/client/src/saga/record-manual-repair.ts) keeps its status COMPENSATION_FAILED in the log, because the
 * compensation did fail; what it leaves out there is nothing, so it stands REPAIRED_BY_HAND.
 */
import { StepStatus } from "./vocabulary";

/** A step's standing: its status, or REPAIRED_BY_HAND for a failed compensation a person answered. */
export const StepStanding = {
  ...StepStatus,
  /** The compensation failed and a person recorded a repair by hand: nothing is left out there. */
  REPAIRED_BY_HAND: "REPAIRED_BY_HAND",
} as const;
export type StepStanding = (typeof StepStanding)[keyof typeof StepStanding];

/** The fields the standing is read from. */
export interface StandingFields {
  /** The log's status. */
  status: string;
  /** The repair a person recorded, when there is one (any non-null value counts). */
  manualRepair?: unknown;
}

/** Whether a failed compensation was answered by a person (a recorded manual repair). */
export function repairedByHand(step: StandingFields): boolean {
  return step.status === StepStatus.COMPENSATION_FAILED && step.manualRepair !== null && step.manualRepair !== undefined;
}

/** The one rule: where a step stands. */
export function stepStanding(step: StandingFields): StepStanding {
  if (repairedByHand(step)) return StepStanding.REPAIRED_BY_HAND;
  return (Object.values(StepStatus) as string[]).includes(step.status) ? (step.status as StepStatus) : StepStatus.UNKNOWN;
}

/** Whether a failed compensation still leaves its effect out there (nobody has repaired it by hand). */
export function compensationStillOut(step: StandingFields): boolean {
  return step.status === StepStatus.COMPENSATION_FAILED && !repairedByHand(step);
}
