/**
 * When a run that needed people is finished: an unwind that left work for people ends in
 * NEEDS_ATTENTION, and once people have done all of it (every escalation resolved, every unsettled
 * step settled, every failed compensation repaired by hand, every correction sent or dismissed) the
 * run is UNWOUND, so the queue and the runs list can read as finished. Framework-free.
 */
import { compensationStillOut } from "./step-standing";
import type { Actor, CorrectionRecord, EscalationRecord, RunRecord, SagaStore, StepRecord } from "./store";
import { CorrectionStatus, EscalationStatus, RunStatus, StepStatus, UNSETTLED_STATUSES } from "./vocabulary";

/** One thing still waiting for a person on a run. */
export type AttentionItem =
  | { kind: "open_escalation"; escalationId: string; escalationKind: string }
  | { kind: "unsettled_step"; stepId: string; stepIdx: number; status: StepStatus }
  | { kind: "unrepaired_compensation"; stepId: string; stepIdx: number }
  | { kind: "correction"; correctionId: string; status: string };

/** What is still left for people on a run, from its log (empty: nothing is left out there). */
export function attentionLeft(run: { steps: readonly StepRecord[]; escalations: readonly EscalationRecord[]; corrections: readonly CorrectionRecord[] }): AttentionItem[] {
  const left: AttentionItem[] = [];
  for (const e of run.escalations) {
    if (e.status !== EscalationStatus.RESOLVED) left.push({ kind: "open_escalation", escalationId: e.id, escalationKind: e.kind });
  }
  for (const s of run.steps) {
    if (UNSETTLED_STATUSES.includes(s.status)) left.push({ kind: "unsettled_step", stepId: s.id, stepIdx: s.stepIdx, status: s.status });
    else if (compensationStillOut(s)) left.push({ kind: "unrepaired_compensation", stepId: s.id, stepIdx: s.stepIdx });
  }
  for (const c of run.corrections) {
    if (c.status === CorrectionStatus.DRAFT || c.status === CorrectionStatus.SENDING) left.push({ kind: "correction", correctionId: c.id, status: c.status });
  }
  return left;
}

/** What `finishUnwoundRun` found. */
export interface FinishUnwoundRunResult {
  /** The run as it is now. */
  run: RunRecord | null;
  /** True when this call moved it to UNWOUND. */
  finished: boolean;
  /** What still waits for people (empty when finished). */
  left: AttentionItem[];
}

/**
 * Moves a NEEDS_ATTENTION run to UNWOUND when nothing is left for people; otherwise says what is.
 * Call it after a person's resolution has committed: it reads after that write, so of two
 * resolutions committing at the same time at least the later one sees both, and the status move is
 * fenced on NEEDS_ATTENTION, so it happens once. Any other run status is left alone.
 */
export async function finishUnwoundRun(store: SagaStore, runId: string, actor: Actor): Promise<FinishUnwoundRunResult> {
  const run = await store.getRun(runId);
  if (!run || run.status !== RunStatus.NEEDS_ATTENTION) return { run, finished: false, left: [] };
  const [steps, escalations, corrections] = [await store.listSteps(runId), await store.listEscalations({ runId }), await store.listCorrections(runId)];
  const left = attentionLeft({ steps, escalations, corrections });
  if (left.length > 0) return { run, finished: false, left };
  const moved = await store.setRunStatus(runId, [RunStatus.NEEDS_ATTENTION], RunStatus.UNWOUND, {
    type: "run.settled",
    actor,
    data: { from: RunStatus.NEEDS_ATTENTION, to: RunStatus.UNWOUND, why: "every item people had to handle is resolved" },
  });
  return { run: moved ?? (await store.getRun(runId)), finished: moved !== null, left: [] };
}
