import { getPrisma } from "@/lib/core/db/prisma";
import { revealPersonal } from "@/lib/core/privacy/personal-data-vault";
import { z } from "zod";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { withDb } from "@/lib/desks/dashboard/context";
import { SagaError, SagaErrorCode } from "@/packages/client/src/saga/errors";
import { irreversibleBeforePivot } from "@/packages/client/src/saga/metrics";
import { runScope } from "@/packages/client/src/saga/store";
import { Phase, StepStatus, ToolClass } from "@/packages/client/src/saga/vocabulary";
import { databaseNow } from "@/lib/core/db/dialect";
import { DEFAULT_STUCK_AFTER_PIVOT_MS, stuckAfterPivotMs } from "@/lib/server/worker/sweep-stuck-runs";
import { describeRunProgress } from "./describe-run-progress";
import { stepStanding } from "@/packages/client/src/saga/step-standing";
import { ZAudience, ZTimelineCompensation, ZPlan, type RunTimeline, type RunTimelineView } from "./views";

export { ZRunTimelineView, type RunTimeline, type RunTimelineView, type TimelineStep, type TimelinePivot, type TimelineCorrection, type TTimelinePlanItem, type TTimelineCompensation, type Jsonified } from "./views";

// The metric has one definition (packages/client/src/saga/metrics). Its input is the engine's vocabulary, so the
// database strings are read into it here; an unreadable value falls back to what keeps the count honest.
const ZMetricFields = z.object({
  /** A class we cannot read is not IRREVERSIBLE. */
  toolClass: z.enum(ToolClass).catch(ToolClass.PURE),
  /** A phase we cannot read is not STAGING. */
  phase: z.enum(Phase).catch(Phase.COMMIT),
  /** A status we cannot read may hide an effect, so it counts like UNKNOWN. */
  status: z.enum(StepStatus).catch(StepStatus.UNKNOWN),
});

/** One run with its whole history, as JSON. Throws SagaError RUN_NOT_FOUND when the run does not exist. */
export async function getRunTimeline(request: PersonRequest<{ runId: string }>): Promise<RunTimelineView> {
  const view = await getRunTimelineStored(request);
  // Personal fields are stored sealed: opened here, or "erased on <date>" (lib/core/privacy/ARCHITECTURE.md).
  // Not inside withDb: the reveal queues its one read of the keys on the same connection itself.
  return revealPersonal(await getPrisma(), view);
}

async function getRunTimelineStored({ actor, runId }: PersonRequest<{ runId: string }>): Promise<RunTimelineView> {
  assertCan(actor, "read");
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
  // A revoked token never comes back: the page says the run waits for a person (read after the run, so never older).
  const token = await withDb((prisma) => prisma.agentToken.findUnique({ where: { name: run.agent }, select: { revokedAt: true } }));
  const plans = pivots.map((p) => ({ ...p, plan: ZPlan.parse(p.plan) }));
  const progress = describeRunProgress({
    run: runRow,
    steps,
    pivots: plans,
    escalations,
    corrections,
    auditEvents,
    stepIdxById: new Map(steps.map((s) => [s.id, s.stepIdx])),
    now,
    stuckAfterMs: configuredStuckAfterMs(),
    agentToken: token ? { revoked: token.revokedAt !== null } : null,
  });
  return {
    run: runRow,
    steps: steps.map((s) => ({ ...s, standing: stepStanding(s), audience: ZAudience.parse(s.audience), compensation: ZTimelineCompensation.parse(s.compensation) })),
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
