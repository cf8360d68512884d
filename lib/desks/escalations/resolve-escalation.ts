import { z } from "zod";
import { assertEscalationWorker } from "./escalation-access";
import { getPrisma } from "@/lib/core/db/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaError } from "@/packages/client/src/saga/errors";
import type { Actor, EscalationRecord } from "@/packages/client/src/saga/store";
import { enqueuePlanCommit, enqueueRunUnwind } from "@/lib/server/worker/enqueue-plan-commit";
import { finishUnwoundRun } from "@/packages/client/src/saga/finish-unwound-run";
import { recordManualRepair } from "@/packages/client/src/saga/record-manual-repair";
import { EscalationKind, EscalationStatus, PIVOT_REJECTION_CODES, StepStatus } from "@/packages/client/src/saga/vocabulary";
import { ZEscalationId } from "./claim-escalation";
import { expireIfDue } from "@/lib/server/sla/sweep-slas";
import { dashboardEngine, withDb } from "@/lib/desks/dashboard/context";
import { type CurrentUser, type PersonRequest, userActor } from "@/lib/server/auth/current-user";
import { ESCALATION_INCLUDE, queueItem, toolSystems } from "./escalation-view";
import type { TResolveResult } from "@/lib/desks/escalations/views";
import { actorAttributes, escalationAttributes, inRunSpan } from "@/lib/core/observability/people-spans";

const note = (what: string) => z.string().trim().min(1, what).max(4000);

/** What a stuck post-pivot step can be decided as. */
export const StuckDecision = {
  /** A person did what the step should have done, by hand. */
  completed_manually: "completed_manually",
  /** The step will not be done; the agent's owner follows up (unwind, or answer the customer). */
  abandoned: "abandoned",
  /** The agent is gone: a worker holding the plan's tools commits the approved plan (a COMMIT_PLAN task). */
  commit_by_worker: "commit_by_worker",
  /** Do not commit: a worker unwinds the run instead (an UNWIND task). */
  unwind: "unwind",
} as const;
export type StuckDecision = (typeof StuckDecision)[keyof typeof StuckDecision];

/** A resolution, one form per escalation kind. */
export const ZEscalationResolution = z.discriminatedUnion("kind", [
  z
    .object({
      kind: z.literal(EscalationKind.APPROVAL_REQUIRED),
      /** Let the held call run (once), or refuse it. */
      approve: z.boolean(),
      /** Why; required when refusing (the agent is told). */
      note: z.string().trim().max(4000).optional(),
      /** A refusal's code, from the same closed list as a pivot's rejection: what the agent should do next. */
      reasonCode: z.enum(PIVOT_REJECTION_CODES).optional(),
    })
    .refine((r) => r.approve || Boolean(r.note), { path: ["note"], message: "say why the call is refused: the agent is told" }),
  z.object({
    kind: z.literal(EscalationKind.OUTCOME_UNKNOWN),
    /** What the real system shows. */
    outcome: z.enum([StepStatus.CONFIRMED, StepStatus.NOT_EXECUTED]),
    /** What you saw, where (a lookup result, a screenshot reference). */
    evidence: note("evidence is required: say what you saw in the real system"),
    /** The effect's external id, when CONFIRMED. */
    externalRef: z.string().trim().min(1).max(200).nullable().optional(),
  }),
  z.object({
    kind: z.literal(EscalationKind.COMPENSATION_FAILED),
    /** What was done by hand to answer the effect. */
    note: note("say what was repaired and how"),
    /** The external id of the manual repair (a refund made in the provider's console), if any. */
    repairRef: z.string().trim().min(1).max(200).nullable().optional(),
  }),
  z.object({
    kind: z.literal(EscalationKind.STUCK_AFTER_PIVOT),
    /** What happens to the step. */
    decision: z.enum(StuckDecision),
    /** Why, and what was done. */
    note: note("say what was decided and why"),
  }),
  z.object({
    kind: z.literal(EscalationKind.REVOKE_OUT_OF_WINDOW),
    /** What was done instead of the revoke. */
    note: note("say what was done instead"),
  }),
]);
/** A resolution as a form sends it. */
export type TEscalationResolution = z.input<typeof ZEscalationResolution>;
type Resolution = z.output<typeof ZEscalationResolution>;

/** Runs the engine's decision for the resolution's kind (row, saga log and audit event together). */
async function decide(user: CurrentUser, escalationId: string, r: Resolution): Promise<EscalationRecord> {
  const engine = await dashboardEngine();
  const actor = userActor(user);
  switch (r.kind) {
    case EscalationKind.APPROVAL_REQUIRED:
      if (!r.approve && r.reasonCode) {
        // The held call's refusal with its code in the resolution the agent reads back.
        const store = sharedSagaStore(await getPrisma());
        const resolution = { approved: false, note: r.note ?? null, reasonCode: r.reasonCode };
        const resolved = await store.resolveEscalation(escalationId, { resolvedBy: actor.id, resolution }, {
          type: "escalation.resolved",
          actor,
          data: { escalationId, kind: r.kind, resolution },
        });
        if (!resolved) throw new SagaError("ESCALATION_CONFLICT", `Escalation ${escalationId} was resolved by someone else first.`);
        return resolved;
      }
      return engine.decideHeldCall(escalationId, { approve: r.approve, actor, ...(r.note ? { note: r.note } : {}) });
    case EscalationKind.OUTCOME_UNKNOWN:
      return engine.settleUnknown(escalationId, { outcome: r.outcome, evidence: r.evidence, externalRef: r.externalRef ?? null, actor });
    case EscalationKind.COMPENSATION_FAILED:
      // Written back to the step too (who, when, reference), so the saga log shows it was answered.
      return (await recordManualRepair(sharedSagaStore(await getPrisma()), { escalationId, note: r.note, repairRef: r.repairRef ?? null, actor })).escalation;
    case EscalationKind.STUCK_AFTER_PIVOT:
      return engine.resolveEscalation(escalationId, { actor, note: r.note, resolution: { decision: r.decision, ...(await stuckTask(escalationId, r.decision, r.note, actor)) } });
    case EscalationKind.REVOKE_OUT_OF_WINDOW:
      return engine.resolveEscalation(escalationId, { actor, note: r.note, resolution: { revoke: "handled_outside_window" } });
  }
}

/**
 * The worker task a stuck run's decision asks for, enqueued before the escalation is resolved (the
 * task is deduplicated, so a resolution that loses a race leaves one task, not two). Committing is
 * for a run whose agent went quiet (a run-level escalation); a failed step needs a person's decision.
 */
async function stuckTask(escalationId: string, decision: StuckDecision, note: string, actor: Actor): Promise<Record<string, string>> {
  if (decision !== StuckDecision.commit_by_worker && decision !== StuckDecision.unwind) return {};
  const prisma = await getPrisma();
  const escalation = await sharedSagaStore(prisma).getEscalation(escalationId);
  if (!escalation) throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${escalationId} does not exist; reload the queue.`);
  if (decision === StuckDecision.unwind) {
    const { task } = await enqueueRunUnwind(prisma, { runId: escalation.runId, actor, reason: note });
    return { taskId: task.id };
  }
  if (escalation.stepId !== null) {
    throw new SagaError(
      "INVALID_ARGS",
      "A worker cannot commit past a step the provider refused: decide that step (done by hand, abandon, or unwind the run).",
      [{ path: "decision", message: "commit_by_worker is for an approved run whose agent went quiet" }],
    );
  }
  const { task, pivotId } = await enqueuePlanCommit(prisma, { runId: escalation.runId, actor, reason: note });
  return { taskId: task.id, pivotId };
}

/** A resolution in one low-cardinality word, for its trace span: approved, rejected, confirmed, repaired, commit_by_worker... */
function decisionOf(r: Resolution): string {
  switch (r.kind) {
    case EscalationKind.APPROVAL_REQUIRED:
      return r.approve ? "approved" : "rejected";
    case EscalationKind.OUTCOME_UNKNOWN:
      return r.outcome.toLowerCase();
    case EscalationKind.COMPENSATION_FAILED:
      return "repaired";
    case EscalationKind.STUCK_AFTER_PIVOT:
      return r.decision;
    case EscalationKind.REVOKE_OUT_OF_WINDOW:
      return "handled_outside_window";
  }
}

/**
 * Resolves an escalation the signed-in user holds, with the form of its kind: approve or reject a
 * held call, settle an unknown outcome with evidence (written back to the step), record a manual
 * repair of a failed compensation (written back to the step), decide a stuck post-pivot step, answer
 * a revoke past its window. A NEEDS_ATTENTION run with nothing left for people becomes UNWOUND.
 * Only the claimer may resolve: anyone else gets `{ ok: false, reason: "not_claimer", heldBy }`.
 * The engine writes the resolution, the saga log change and the audit event together; with tracing
 * on, a `resolve_escalation` span in the run's trace (a worker task it asks for is the span's child).
 */
export async function resolveEscalation({ actor, escalationId, ...request }: PersonRequest<{ escalationId: string } & TEscalationResolution>): Promise<TResolveResult> {
  const id = ZEscalationId.parse(escalationId);
  await assertEscalationWorker(actor, id);
  const resolution = ZEscalationResolution.parse(request);
  const store = sharedSagaStore(await getPrisma());
  const escalation = await store.getEscalation(id);
  if (!escalation) throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${id} does not exist; reload the queue.`);
  if (escalation.status === EscalationStatus.RESOLVED) return { ok: false, reason: "resolved", resolvedBy: escalation.resolvedBy };
  // Only the claimer's own release can change a claim, so this check cannot go stale under them.
  if (escalation.status !== EscalationStatus.CLAIMED || escalation.claimedBy !== actor.email) {
    return { ok: false, reason: "not_claimer", heldBy: escalation.claimedBy };
  }
  if (escalation.kind !== resolution.kind) {
    throw new SagaError("ESCALATION_CONFLICT", `Escalation ${id} is ${escalation.kind}, not ${resolution.kind}; use the resolution form of its kind.`);
  }
  // A held call past its SLA's expiry (database clock) is rejected by it, never approved, whether or not a sweep has run.
  if (resolution.kind === EscalationKind.APPROVAL_REQUIRED && resolution.approve && (await expireIfDue(await getPrisma(), store, id))) {
    return { ok: false, reason: "resolved", resolvedBy: (await store.getEscalation(id))?.resolvedBy ?? null };
  }
  const attributes = { ...escalationAttributes(escalation), "sagaboard.escalation.decision": decisionOf(resolution), ...actorAttributes("user", actor.role) };
  try {
    await inRunSpan(await getPrisma(), "resolve_escalation", escalation.runId, attributes, async () => {
      await decide(actor, id, resolution);
      // The run is finished when this was the last thing people had to do for it.
      await finishUnwoundRun(store, escalation.runId, userActor(actor));
    });
  } catch (e) {
    if (!(e instanceof SagaError) || e.code !== "ESCALATION_CONFLICT") throw e;
    // Resolved meanwhile (a reconcile settled the step itself, or a double submit): say by whom.
    const current = await store.getEscalation(id);
    if (current?.status !== EscalationStatus.RESOLVED) throw e;
    return { ok: false, reason: "resolved", resolvedBy: current.resolvedBy };
  }
  const row = await withDb(async (prisma) => {
    const found = await prisma.escalation.findUniqueOrThrow({ where: { id }, include: ESCALATION_INCLUDE });
    return found;
  });
  return { ok: true, escalation: queueItem(row, row.resolvedAt ?? new Date(), await toolSystems([row])) };
}
