/**
 * The runs list's and the run page's data as JSON, with the schemas that check it: pure (zod and
 * types only), so the browser parses what it polls with the same schemas the endpoint contracts use.
 */
import type { StepStanding } from "@/packages/client/src/saga/step-standing";
import { z } from "zod";
import type { AuditEvent, Correction, Escalation, Pivot, Run, Step } from "@/generated/prisma";
import { ZEscalationKind, ZIsoDate } from "@/packages/client/src/protocol/schemas/saga";
import { ZRunProgress, type TRunProgress } from "./describe-run-progress";

/** One row of the runs list. */
export const ZRunListItem = z.object({
  /** `run_...` */
  id: z.string(),
  /** What the run is for. */
  title: z.string(),
  /** The agent running it. */
  agent: z.string(),
  /** The customer or user the agent acts for. */
  onBehalfOf: z.string().nullable(),
  /** Where the run stands (RunStatus; shown as stored). */
  status: z.string(),
  /** Created (database clock). */
  createdAt: ZIsoDate,
  /** Last changed (database clock). */
  updatedAt: ZIsoDate,
  /** Saga log rows of the run. */
  stepCount: z.number().int(),
  /** Escalations still waiting for (or held by) a person. */
  openEscalationCount: z.number().int(),
  /** Correction drafts waiting for support staff. */
  correctionDraftCount: z.number().int(),
  /** The pivot waiting for a reviewer, if any. */
  pendingPivotId: z.string().nullable(),
});
/** One row of the runs list. */
export type TRunListItem = z.infer<typeof ZRunListItem>;

/** What waits for people, across all runs. */
export const ZWaitingCounts = z.object({
  /** Pivots waiting for a reviewer (their run still waits). */
  pendingPivots: z.number().int(),
  /** Unresolved escalations per kind. */
  openEscalations: z.record(ZEscalationKind, z.number().int()),
  /** Unresolved escalations in total. */
  openEscalationTotal: z.number().int(),
  /** Correction drafts waiting for support staff. */
  correctionDrafts: z.number().int(),
});
/** What waits for people. */
export type TWaitingCounts = z.infer<typeof ZWaitingCounts>;

/** One page of runs, newest first, with what waits for people. */
export const ZRunsPage = z.object({
  /** The runs of this page. */
  runs: z.array(ZRunListItem),
  /** Pass as `cursor` to get the next page; null on the last page. */
  nextCursor: z.string().nullable(),
  /** What waits for people across all runs (whatever the filters). */
  waiting: ZWaitingCounts,
});
/** One page of runs. */
export type TRunsPage = z.infer<typeof ZRunsPage>;

// JSON columns come back from Prisma as values. A read-only view must still show a row whose JSON is
// not what we expect (an older writer, a hand edit), so the schemas below fall back instead of throwing.

/** Who could see an effect; anything unreadable is shown as-is. */
export const ZAudience = z.array(z.string()).catch((ctx) => [JSON.stringify(ctx.value)]);

/** A step's pre-written compensation. */
export const ZTimelineCompensation = z
  .object({ tool: z.string(), args: z.unknown() })
  .nullable()
  .catch((ctx) => ({ tool: "(unreadable compensation)", args: ctx.value }));

/** One call of a pivot's commit plan. */
export const ZTimelinePlanItem = z.object({
  tool: z.string().catch("(unknown tool)"),
  args: z.unknown(),
  argsHash: z.string().catch(""),
  policyVersion: z.number().nullable().catch(null),
  toolClass: z.string().catch("(unknown class)"),
});
export const ZPlan = z.array(ZTimelinePlanItem).catch([]);

/** A step's pre-written compensation, as shown on the timeline. */
export type TTimelineCompensation = z.output<typeof ZTimelineCompensation>;
/** One item of a pivot's commit plan, as shown on the timeline. */
export type TTimelinePlanItem = z.output<typeof ZTimelinePlanItem>;

/** A saga log row with its JSON columns read. */
export type TimelineStep = Omit<Step, "audience" | "compensation"> & {
  /** Where it stands for a person: its status, or REPAIRED_BY_HAND (the one rule, packages/client/src/saga/step-standing.ts). */
  standing: StepStanding;
  /** Who could see the effect. */
  audience: string[];
  /** The pre-written compensation, if any. */
  compensation: TTimelineCompensation;
};

/** A pivot with its plan read. */
export type TimelinePivot = Omit<Pivot, "plan"> & {
  /** The commit plan the reviewer approves. */
  plan: TTimelinePlanItem[];
};

/** A correction draft with its audience read. */
export type TimelineCorrection = Omit<Correction, "audience"> & {
  /** Who would receive it. */
  audience: string[];
};

/** Everything the run page shows about one run. */
export interface RunTimeline {
  /** The run. */
  run: Run;
  /** Its saga log, by stepIdx. */
  steps: TimelineStep[];
  /** Its pivots, oldest first. */
  pivots: TimelinePivot[];
  /** Its escalations, oldest first. */
  escalations: Escalation[];
  /** Its correction drafts, lowest blast radius first. */
  corrections: TimelineCorrection[];
  /** Its audit events, in append order. */
  auditEvents: AuditEvent[];
  /** Irreversible steps that may have happened before the pivot; by construction this is 0. */
  irreversibleBeforePivot: number;
  /** Irreversible steps of the run in all (those after the approval are the approved ones). */
  irreversibleSteps: number;
  /** Whether anything is happening: the agent's last contact and what is expected next. */
  progress: TRunProgress;
}

/** A value as JSON carries it: dates become ISO strings (what the page's first paint and its polling share). */
export type Jsonified<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Jsonified<U>[]
    : T extends object
      ? { [K in keyof T]: Jsonified<T[K]> }
      : T;

/** The run timeline as JSON, for the page and its live updates. */
export type RunTimelineView = Jsonified<RunTimeline>;

const ZRow = z.looseObject({ id: z.union([z.string(), z.number()]) });

/** The timeline's shape on the wire (rows are checked by id; their other fields pass through). */
export const ZRunTimelineView = z.object({
  run: z.looseObject({ id: z.string(), title: z.string(), status: z.string() }),
  steps: z.array(ZRow),
  pivots: z.array(ZRow),
  escalations: z.array(ZRow),
  corrections: z.array(ZRow),
  auditEvents: z.array(ZRow),
  irreversibleBeforePivot: z.number().int(),
  irreversibleSteps: z.number().int(),
  progress: ZRunProgress,
});

/**
 * The run timeline as the browser receives it: checked by `ZRunTimelineView` (rows by id, the
 * progress in full), typed as the page renders it.
 */
export const ZRunTimelineWire = z.custom<RunTimelineView>((value) => ZRunTimelineView.safeParse(value).success, {
  message: "The run timeline answer does not have the expected shape (run, steps, pivots, escalations, corrections, auditEvents, progress).",
});
