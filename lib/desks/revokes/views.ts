/**
 * The revoke trigger as people see it: what pulling a step back would do, the window left (by the
 * database clock), and how a pulled revoke ended. How it ended is read from the step, the escalation
 * or the correction it led to, never stored twice.
 */
import { repairedByHand } from "@/packages/client/src/saga/step-standing";
import { runStatusInWords } from "@/lib/desks/dashboard/run-status-words";
import * as z from "zod";
import type { Correction, Escalation, Revoke, Step } from "@/generated/prisma";
import { CompensationState, StepStatus } from "@/packages/client/src/saga/vocabulary";

/** What a revoke row is. */
export const RevokeKind = {
  /** The worker runs the step's pre-written compensation under its own key, then reads it back. */
  COMPENSATE: "COMPENSATE",
  /** An irreversible effect: a correction is drafted for the support desk; nothing silent happens. */
  CORRECTION: "CORRECTION",
  /** Past the tool's revocation window: an escalation instead of an action. */
  OUT_OF_WINDOW: "OUT_OF_WINDOW",
  /** A whole run pulled back, its steps in reverse order (each has a row of its own). */
  RUN: "RUN",
} as const;
export type RevokeKind = (typeof RevokeKind)[keyof typeof RevokeKind];

/** How a revoke ended (or stands). */
export const RevokeOutcome = {
  /** Queued for the worker, or sent and not yet read back. */
  requested: "requested",
  /** The compensation was read back from the external system. */
  confirmed: "confirmed",
  /** The compensation failed; a COMPENSATION_FAILED escalation says what is still out there. */
  failed: "failed",
  /** Past the window: a REVOKE_OUT_OF_WINDOW escalation holds it. */
  out_of_window: "out_of_window",
  /** A correction waits for the support desk. */
  correction_drafted: "correction_drafted",
  /** The correction was sent. */
  correction_sent: "correction_sent",
  /** Support dismissed the correction (the audience never saw the original, or it was handled). */
  correction_dismissed: "correction_dismissed",
  /** A whole run: still being pulled back. */
  unwinding: "unwinding",
  /** A whole run: every step answered. */
  done: "done",
} as const;
export type RevokeOutcome = (typeof RevokeOutcome)[keyof typeof RevokeOutcome];

/** One pulled revoke. */
export const ZRevokeSummary = z.object({
  id: z.string(),
  runId: z.string(),
  stepId: z.string().nullable(),
  parentId: z.string().nullable(),
  tool: z.string().nullable(),
  kind: z.enum(RevokeKind),
  requestedBy: z.string(),
  role: z.string(),
  reason: z.string(),
  requestedAt: z.iso.datetime(),
  windowEndsAt: z.iso.datetime().nullable(),
  outcome: z.enum(RevokeOutcome),
  /** How it ended, in a sentence. */
  outcomeText: z.string(),
  escalationId: z.string().nullable(),
  correctionId: z.string().nullable(),
});
/** One pulled revoke. */
export type TRevokeSummary = z.infer<typeof ZRevokeSummary>;

/** Where one step stands for the trigger. */
export const RevokeState = {
  /** Within its window, and the signed-in person may pull it. */
  pullable: "pullable",
  /** Past its window (or it has none): the button escalates instead. */
  out_of_window: "out_of_window",
  /** Already pulled back (the revoke says how it ended). */
  pulled: "pulled",
  /** The tool table does not let this person's role pull it back. */
  not_permitted: "not_permitted",
} as const;
export type RevokeState = (typeof RevokeState)[keyof typeof RevokeState];

/** One confirmed step as the trigger sees it. */
export const ZRevokeOption = z.object({
  stepId: z.string(),
  stepIdx: z.number().int(),
  tool: z.string(),
  toolClass: z.string(),
  status: z.string(),
  externalRef: z.string().nullable(),
  state: z.enum(RevokeState),
  /** When the window closes (null: the tool has none); seconds left by the database clock. */
  windowEndsAt: z.iso.datetime().nullable(),
  secondsLeft: z.number().int().nullable(),
  /** What pulling it back will do, which system, who will see it: the confirmation's sentence. */
  whatHappens: z.string(),
  /** Roles the tool table lets pull it back. */
  allowedRoles: z.array(z.string()),
  revoke: ZRevokeSummary.nullable(),
});
/** One confirmed step as the trigger sees it. */
export type TRevokeOption = z.infer<typeof ZRevokeOption>;

/** The trigger's view of a run. */
export const ZRevokeOptions = z.object({
  runId: z.string(),
  runStatus: z.string(),
  /** The database clock when this was read. */
  now: z.iso.datetime(),
  /** Whether the signed-in person's role can pull triggers at all. */
  canPull: z.boolean(),
  /** The whole-run revoke, once pulled. */
  runRevoke: ZRevokeSummary.nullable(),
  steps: z.array(ZRevokeOption),
});
/** The trigger's view of a run. */
export type TRevokeOptions = z.infer<typeof ZRevokeOptions>;

/** What a pull answered: a new revoke, or the one somebody pulled already (nothing pulled twice). */
export const ZPullResult = z.object({
  created: z.boolean(),
  revoke: ZRevokeSummary,
  /** For a whole run: the steps' own revokes. */
  steps: z.array(ZRevokeSummary),
  message: z.string(),
});
/** What a pull answered. */
export type TPullResult = z.infer<typeof ZPullResult>;

/** What a revoke's outcome is read from. */
export interface RevokeFacts {
  /** The step pulled back. */
  step: (Pick<Step, "status" | "compensationState" | "compensationRef"> & { manualRepair?: unknown }) | null;
  /** The escalation it opened (or the compensation failure's). */
  escalation: Pick<Escalation, "id" | "status" | "resolvedBy"> | null;
  /** The correction it drafted. */
  correction: Pick<Correction, "id" | "status"> | null;
  /** For a whole run: its status now. */
  runStatus?: string;
}

/** How a revoke ended, read from what it led to. */
export function revokeOutcome(revoke: Pick<Revoke, "kind">, facts: RevokeFacts): { outcome: RevokeOutcome; text: string } {
  switch (revoke.kind) {
    case RevokeKind.OUT_OF_WINDOW:
      return { outcome: RevokeOutcome.out_of_window, text: facts.escalation?.status === "RESOLVED" ? `Past the window; the escalation was resolved by ${facts.escalation.resolvedBy ?? "someone"}.` : "Past the window; an escalation waits for a person." };
    case RevokeKind.CORRECTION:
      if (facts.correction?.status === "SENT") return { outcome: RevokeOutcome.correction_sent, text: "Irreversible: the correction was sent." };
      if (facts.correction?.status === "DISMISSED") return { outcome: RevokeOutcome.correction_dismissed, text: "Irreversible: support dismissed the correction." };
      return { outcome: RevokeOutcome.correction_drafted, text: "Irreversible: a correction waits for the support desk." };
    case RevokeKind.RUN:
      return facts.runStatus === "UNWINDING"
        ? { outcome: RevokeOutcome.unwinding, text: "The run is being pulled back, last step first." }
        : { outcome: RevokeOutcome.done, text: `Every step was answered; the run is ${facts.runStatus ? runStatusInWords(facts.runStatus) : "done"}.` };
    default: {
      const step = facts.step;
      if (step?.status === StepStatus.COMPENSATED || step?.compensationState === CompensationState.CONFIRMED) {
        return { outcome: RevokeOutcome.confirmed, text: `Compensated and read back from the external system${step.compensationRef ? ` (${step.compensationRef})` : ""}.` };
      }
      if (step && repairedByHand(step)) {
        return { outcome: RevokeOutcome.failed, text: "The compensation failed; a person repaired it by hand, so nothing is left out there." };
      }
      if (step?.status === StepStatus.COMPENSATION_FAILED || step?.compensationState === CompensationState.FAILED) {
        return { outcome: RevokeOutcome.failed, text: "The compensation failed; an escalation says what is still out there." };
      }
      return { outcome: RevokeOutcome.requested, text: step?.compensationState === CompensationState.REQUESTED ? "Compensation sent; waiting to read it back." : "Queued for the worker." };
    }
  }
}

/** A stored revoke with its outcome, as the screens show it. */
export function toRevokeSummary(revoke: Revoke, facts: RevokeFacts): TRevokeSummary {
  const { outcome, text } = revokeOutcome(revoke, facts);
  return {
    id: revoke.id,
    runId: revoke.runId,
    stepId: revoke.stepId,
    parentId: revoke.parentId,
    tool: revoke.tool,
    kind: revoke.kind as RevokeKind,
    requestedBy: revoke.requestedBy,
    role: revoke.role,
    reason: revoke.reason,
    requestedAt: revoke.requestedAt.toISOString(),
    windowEndsAt: revoke.windowEndsAt?.toISOString() ?? null,
    outcome,
    outcomeText: text,
    escalationId: revoke.escalationId,
    correctionId: revoke.correctionId,
  };
}
