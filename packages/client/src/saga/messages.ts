/**
 * The messages the call and unwind commands exchange with whoever drives them (the engine in
 * process, the server's agent API, an agent or worker over HTTP): answers, reports and the actions an
 * unwind asks a connector for. Types only, with no behaviour, so the ports (store.ts, agent-port.ts)
 * and the commands (calls.ts, unwind-commands.ts, unwind.ts) can all name them without importing
 * each other.
 */
import type { StepRecord } from "./store";
import type { CompensationPlan, Json } from "./tools";
import type { ApprovalReason, RunStatus } from "./vocabulary";

/** The answer of `beginCall`. `cursor` is where the caller stands afterwards. */
export type BeginCallAnswer =
  | { kind: "call"; step: StepRecord; cursor: number }
  | { kind: "replay"; step: StepRecord; cursor: number }
  | { kind: "failed"; step: StepRecord; cursor: number }
  | { kind: "reconcile"; step: StepRecord; cursor: number }
  | { kind: "held"; reason: ApprovalReason; message: string; escalationId: string | null; pivotId: string | null; cursor: number };

/** A plan item of an approved pivot: how a commit addresses a call instead of a cursor. */
export interface PlanItemAddress {
  /** The approved pivot. */
  pivotId: string;
  /** The item's place in the pivot's plan (0-based). */
  index: number;
}

/** What the provider answered for a step in flight. */
export type CallOutcomeReport =
  | { kind: "confirmed"; externalRef: string | null; result: Json }
  | { kind: "failed"; reason: string; message: string; retryable: boolean }
  | { kind: "unknown"; message: string };

/** What looking a step's key up found. */
export type ReconcileReport =
  | { kind: "found"; externalRef: string | null; result: Json; lookups: number }
  | { kind: "absent"; lookups: number; recheckAfterMs: number }
  | { kind: "lookup_failed"; message: string; attempts: number };

/** What an unwind did, step by step. */
export interface UnwindReport {
  /** The run. */
  runId: string;
  /** Final run status: UNWOUND, or NEEDS_ATTENTION when people must act. */
  status: RunStatus;
  /** Steps whose compensation was confirmed (stepIdx). */
  compensated: number[];
  /** Steps whose compensation failed and were escalated. */
  compensationFailed: number[];
  /** Steps whose outcome is still unknown (escalated). */
  unresolved: number[];
  /** Steps answered by a correction draft, in rank order. */
  corrections: number[];
  /** Steps with nothing to undo (failed, not executed). */
  skipped: number[];
}

/** What the worker is asked to do next. */
export type UnwindAction =
  | { kind: "reconcile"; step: StepRecord }
  | {
      kind: "compensate";
      step: StepRecord;
      compensation: CompensationPlan;
      compensationKey: string;
      /** A compensation was requested before (a crash): read the real system back before sending it again. */
      verifyFirst: boolean;
    }
  | { kind: "done"; report: UnwindReport };

/** What the worker is asked to do next to pull back one step. */
export type StepCompensateAction = ConnectorAction | { kind: "done"; step: StepRecord };

/** An action only a connector can do. */
export type ConnectorAction = Exclude<UnwindAction, { kind: "done" }>;

/** What the worker found after sending (or re-checking) a compensation. */
export type CompensationReport =
  | { done: true; compensationRef: string | null; how: string }
  | { done: false; reason: string; message: string; remaining: Json | null };
