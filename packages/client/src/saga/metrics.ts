import type { StepRecord } from "./store";
import { Phase, StepStatus, ToolClass } from "./vocabulary";

/**
 * Irreversible steps whose call was made before the pivot without approval. The gate makes this 0 by
 * construction; counting it from the log (not from the gate) is what lets a test prove it.
 */
export function irreversibleBeforePivot(steps: readonly Pick<StepRecord, "toolClass" | "phase" | "status">[]): number {
  return steps.filter(
    (s) =>
      s.toolClass === ToolClass.IRREVERSIBLE &&
      s.phase === Phase.STAGING &&
      s.status !== StepStatus.NOT_EXECUTED &&
      s.status !== StepStatus.FAILED,
  ).length;
}
