/**
 * The one rule for finishing a run, whoever finishes it (the engine's `completeRun`, the agent API's
 * status move): its log must say it is finished. One code, RUN_NOT_SETTLED, for every way it is not.
 */
import { compensationStillOut } from "./step-standing";
import { SagaError } from "./errors";
import type { SagaStore } from "./store";
import { EscalationStatus, RunStatus, StepStatus, UNSETTLED_STATUSES } from "./vocabulary";

/** The finished statuses a run may be moved to only when its log agrees. */
export type FinishedRunStatus = typeof RunStatus.COMPLETED | typeof RunStatus.UNWOUND;

/** What the agent should do about a step that keeps its run from finishing, by the step's status. */
function unsettledAdvice(status: StepStatus): string {
  if (status === StepStatus.INTENDED) {
    return "its outcome was never reported. Report it (an engine of this process may still hold it: flush it), or call the tool again at that step so it is looked up by its key, or let a worker reconcile it.";
  }
  return "nobody knows whether it happened. Call the tool again at that step so it is looked up by its key, or let a worker or a person reconcile it.";
}

/**
 * Refuses (RUN_NOT_SETTLED) while a step is unsettled (its outcome is not known, so neither are the
 * run's effects); for UNWOUND also while anything is left out there: a confirmed effect neither
 * compensated nor answered by a person, a failed compensation without a manual repair, an open item
 * for people.
 */
export async function assertRunSettled(store: Pick<SagaStore, "listSteps" | "listEscalations">, runId: string, to: FinishedRunStatus): Promise<void> {
  const steps = await store.listSteps(runId);
  const open = steps.find((s) => UNSETTLED_STATUSES.includes(s.status));
  if (open) {
    throw new SagaError("RUN_NOT_SETTLED", `Run ${runId} cannot be ${to}: step ${open.stepIdx} (${open.tool}) is ${open.status}: ${unsettledAdvice(open.status)}`, [
      { path: "to", message: `step ${open.stepIdx} (${open.tool}) is ${open.status}` },
    ]);
  }
  if (to !== RunStatus.UNWOUND) return;
  const left = steps.find((s) => s.status === StepStatus.CONFIRMED || compensationStillOut(s));
  if (left) {
    throw new SagaError("RUN_NOT_SETTLED", `Run ${runId} cannot be UNWOUND: step ${left.stepIdx} (${left.tool}) is ${left.status}, so its effect is still out there; compensate it, or leave the run NEEDS_ATTENTION for a person.`, [
      { path: "to", message: `step ${left.stepIdx} is not undone` },
    ]);
  }
  const people = await store.listEscalations({ runId, status: [EscalationStatus.OPEN, EscalationStatus.CLAIMED] });
  if (people.length > 0) {
    throw new SagaError("RUN_NOT_SETTLED", `Run ${runId} cannot be UNWOUND while ${people.length} item(s) wait for people (${people[0]!.kind}); it is NEEDS_ATTENTION until they are resolved.`, [
      { path: "to", message: "open escalations" },
    ]);
  }
}
