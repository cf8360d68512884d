/**
 * A run's status as the end of "The run is …", so every sentence that names a run's status reads
 * as English ("the run is waiting for people", never "the run is needs attention").
 */
import type { RunStatus } from "@/packages/client/src/saga/vocabulary";

const RUN_STATUS_WORDS: Record<RunStatus, string> = {
  RUNNING: "running (its agent is staging)",
  AWAITING_PIVOT: "waiting for a reviewer's decision",
  COMMITTING: "committing its approved plan",
  COMPLETED: "complete",
  UNWINDING: "being unwound",
  UNWOUND: "unwound",
  NEEDS_ATTENTION: "waiting for people",
};

/** "waiting for people" for NEEDS_ATTENTION; an unknown status in lower-case words. */
export function runStatusInWords(status: string): string {
  return RUN_STATUS_WORDS[status as RunStatus] ?? status.replaceAll("_", " ").toLowerCase();
}
