/**
 * The intent guard and the step fence, stated once for the stores that decide them in code: the
 * memory store, and the SQLite write path (lib/core/db/step-log-sqlite.ts), which reads what the guard
 * asks about inside its write transaction and asks this module. PostgreSQL decides both in its one
 * statement's WHERE (lib/core/db/step-log-postgres.ts), the fence's SQL shared with SQLite
 * (lib/core/db/step-log-sql.ts `fenceConditions`); the store contract suite holds every store to the
 * same answers.
 */
import type { IntentGuard, StepFence } from "./store";
import { UNSETTLED_STATUSES, type CompensationState, type StepStatus } from "./vocabulary";

/**
 * What an intent guard looks at, read lazily: a store reads a fact only when the guard asks for it
 * (a guard without `appendOnly` never counts the run's steps).
 */
export interface IntentGuardFacts {
  /** The run as it is now. */
  run: { status: string; updatedAt: Date; agent: string };
  /** The highest stepIdx the run has, or null when it has no step. */
  lastStepIdx(): number | null;
  /** Whether a step of the run is INTENDED or UNKNOWN. */
  hasUnsettledStep(): boolean;
  /** Whether the run has any pivot. */
  hasPivot(): boolean;
  /** Whether the tool table has this row at this class and version (false in a store without a tool table). */
  toolPolicyMatches(policy: NonNullable<IntentGuard["toolPolicy"]>): boolean;
  /** Whether this agent token exists unrevoked (false in a store without a token table). */
  tokenActive(tokenId: string): boolean;
}

/** Whether an intent at `stepIdx` may be written under `guard`. */
export function intentGuardHolds(guard: IntentGuard, stepIdx: number, facts: IntentGuardFacts): boolean {
  const { run } = facts;
  if (!(guard.runStatus as readonly string[]).includes(run.status)) return false;
  if (guard.runUpdatedAt && guard.runUpdatedAt.getTime() !== run.updatedAt.getTime()) return false;
  if (guard.runAgent !== undefined && guard.runAgent !== run.agent) return false;
  if (guard.appendOnly && (stepIdx !== (facts.lastStepIdx() ?? -1) + 1 || facts.hasUnsettledStep())) return false;
  if (guard.noPivot && facts.hasPivot()) return false;
  if (guard.toolPolicy && !facts.toolPolicyMatches(guard.toolPolicy)) return false;
  if (guard.activeToken !== undefined && !facts.tokenActive(guard.activeToken)) return false;
  return true;
}

/** Whether a step status counts as unsettled (what `appendOnly` refuses). */
export function isUnsettled(status: string): boolean {
  return (UNSETTLED_STATUSES as readonly string[]).includes(status);
}

/** What a step fence looks at besides the step's own columns. */
export interface StepFenceFacts {
  /** The agent that started the step's run. */
  runAgent(): string | undefined;
  /** Whether this agent token exists unrevoked (false in a store without a token table). */
  tokenActive(tokenId: string): boolean;
}

/** Whether a transition fenced by `fence` may change `step`. */
export function stepFenceHolds(fence: StepFence, step: { status: StepStatus; compensationState: CompensationState; tool: string }, facts: StepFenceFacts): boolean {
  if (fence.status && !fence.status.includes(step.status)) return false;
  if (fence.compensationState && !fence.compensationState.includes(step.compensationState)) return false;
  if (fence.tools && !fence.tools.includes(step.tool)) return false;
  if (fence.runAgent !== undefined && facts.runAgent() !== fence.runAgent) return false;
  if (fence.activeToken !== undefined && !facts.tokenActive(fence.activeToken)) return false;
  return true;
}
