import { z } from "zod";
import { requireUser } from "@/lib/auth/current-user";
import { withDb } from "@/lib/dashboard/context";
import type { AuditEvent, Correction, Escalation, Pivot, Run, Step } from "@/generated/prisma";
import { SagaError, SagaErrorCode } from "@/lib/saga/errors";
import { irreversibleBeforePivot } from "@/lib/saga/metrics";
import { runScope } from "@/lib/saga/store";
import { Phase, StepStatus, ToolClass } from "@/lib/saga/vocabulary";
import { databaseNow } from "@/lib/db/dialect";
import { DEFAULT_STUCK_AFTER_PIVOT_MS, stuckAfterPivotMs } from "@/lib/worker/sweep-stuck-runs";
import { describeRunProgress, ZRunProgress, type RunProgress } from "./describe-run-progress";

// JSON columns come back from Prisma as values. A read-only view must still show a row whose JSON is
// not what we expect (an older writer, a hand edit), so the schemas below fall back instead of throwing.

/** Who could see an effect; anything unreadable is shown as-is. */
const ZAudience = z.array(z.string()).catch((ctx) => [JSON.stringify(ctx.value)]);

/** A step's pre-written compensation. */
const ZCompensation = z
  .object({ tool: z.string(), args: z.unknown() })
  .nullable()
  .catch((ctx) => ({ tool: "(unreadable compensation)", args: ctx.value }));

/** One call of a pivot's commit plan. */
const ZPlanItem = z.object({
  tool: z.string().catch("(unknown tool)"),
  args: z.unknown(),
  argsHash: z.string().catch(""),
  policyVersion: z.number().nullable().catch(null),
  toolClass: z.string().catch("(unknown class)"),
});
const ZPlan = z.array(ZPlanItem).catch([]);

/** A step's pre-written compensation, as shown on the timeline. */
export type TimelineCompensation = z.output<typeof ZCompensation>;
/** One item of a pivot's commit plan, as shown on the timeline. */
export type TimelinePlanItem = z.output<typeof ZPlanItem>;

/** A saga log row with its JSON columns read. */
export type TimelineStep = Omit<Step, "audience" | "compensation"> & {
  /** Who could see the effect. */
  audience: string[];
  /** The pre-written compensation, if any. */
  compensation: TimelineCompensation;
};

/** A pivot with its plan read. */
export type TimelinePivot = Omit<Pivot, "plan"> & {
  /** The commit plan the reviewer approves. */
  plan: TimelinePlanItem[];
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
  progress: RunProgress;
}

// The metric has one definition (lib/saga/metrics). Its input is the engine's vocabulary, so the
// database strings are read into it here; an unreadable value falls back to what keeps the count honest.
const ZMetricFields = z.object({
  /** A class we cannot read is not IRREVERSIBLE. */
  toolClass: z.enum(ToolClass).catch(ToolClass.PURE),
  /** A phase we cannot read is not STAGING. */
  phase: z.enum(Phase).catch(Phase.COMMIT),
  /** A status we cannot read may hide an effect, so it counts like UNKNOWN. */
  status: z.enum(StepStatus).catch(StepStatus.UNKNOWN),
});

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

/** One run with its whole history, as JSON. Throws SagaError RUN_NOT_FOUND when the run does not exist. */
export async function getRunTimeline(runId: string): Promise<RunTimelineView> {
  await requireUser("read");
  const timeline = await readRunTimeline(runId);
  return JSON.parse(JSON.stringify(timeline)) as RunTimelineView;
}

async function readRunTimeline(runId: string): Promise<RunTimeline> {
  // One read transaction, so the steps, metric and audit log describe the same moment.
  const [[run, auditEvents], now] = await withDb(async (prisma) => [await prisma.$transaction([
    prisma.run.findUnique({
      where: { id: runId },
      include: {
        steps: { orderBy: { stepIdx: "asc" } },
        pivots: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
        escalations: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
        corrections: { orderBy: [{ rank: "asc" }, { createdAt: "asc" }, { id: "asc" }] },
      },
    }),
    prisma.auditEvent.findMany({ where: { scope: runScope(runId) }, orderBy: { seq: "asc" } }),
  ]), await databaseNow(prisma)] as const);
  if (!run) {
    throw new SagaError(
      SagaErrorCode.RUN_NOT_FOUND,
      `Run ${runId} does not exist. Check the run id, or open the runs list to find it.`,
    );
  }
  const { steps, pivots, escalations, corrections, ...runRow } = run;
  const plans = pivots.map((p) => ({ ...p, plan: ZPlan.parse(p.plan) }));
  const progress = describeRunProgress({
    run: runRow,
    steps,
    pivots: plans,
    escalations,
    auditEvents,
    stepIdxById: new Map(steps.map((s) => [s.id, s.stepIdx])),
    now,
    stuckAfterMs: configuredStuckAfterMs(),
  });
  return {
    run: runRow,
    steps: steps.map((s) => ({ ...s, audience: ZAudience.parse(s.audience), compensation: ZCompensation.parse(s.compensation) })),
    pivots: plans,
    escalations,
    corrections: corrections.map((c) => ({ ...c, audience: ZAudience.parse(c.audience) })),
    auditEvents,
    irreversibleBeforePivot: irreversibleBeforePivot(steps.map((s) => ZMetricFields.parse(s))),
    irreversibleSteps: steps.filter((s) => s.toolClass === ToolClass.IRREVERSIBLE).length,
    progress,
  };
}

/** The worker's threshold; a value the worker would refuse shows the default here rather than breaking the page. */
function configuredStuckAfterMs(): number {
  try {
    return stuckAfterPivotMs();
  } catch {
    return DEFAULT_STUCK_AFTER_PIVOT_MS;
  }
}
