import * as z from "zod";
import { Prisma, type PrismaClient, type Revoke, type Step, type ToolPolicy } from "@/generated/prisma";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { type CurrentUser, type PersonRequest, userActor } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { dashboardEngine } from "@/lib/desks/dashboard/context";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { databaseNow } from "@/lib/core/db/dialect";
import { getPrisma } from "@/lib/core/db/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import { SagaError } from "@/packages/client/src/saga/errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import { runScope, type Actor, type RunRecord } from "@/packages/client/src/saga/store";
import { audienceRank, EscalationKind, RunStatus, StepStatus, ToolClass, UNSETTLED_STATUSES } from "@/packages/client/src/saga/vocabulary";
import { enqueueTask } from "@/lib/server/worker/enqueue-task";
import { WorkerTaskKind } from "@/packages/client/src/protocol/tasks/vocabulary";
import { revokeRolesOf, revokeWindow, stepsBeyondRole, summarizeRevokes } from "./revoke-rules";
import { RevokeKind, type TPullResult } from "./views";
import { actorAttributes, inRunSpan, traceEscalationRaised } from "@/lib/core/observability/people-spans";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";

const Reason = z.string().trim().min(1, "Say why it is pulled back: the reason goes into the record and to whoever handles it.").max(2000);

/** Pull back one confirmed step. */
export const ZPullStepRevokeRequest = z.object({ stepId: z.string().trim().min(1).max(80), reason: Reason });
/** Pull back a whole run, last step first. */
export const ZPullRunRevokeRequest = z.object({ runId: z.string().trim().min(1).max(80), reason: Reason });


function stepKeyOf(stepId: string): string {
  return `revoke:step:${stepId}`;
}

function runKeyOf(runId: string): string {
  return `revoke:run:${runId}`;
}

/** The role check the tool's row makes, as a 403 naming who may. */
function assertMayPull(user: CurrentUser, step: Pick<Step, "tool">, policy: ToolPolicy | null): void {
  const roles = revokeRolesOf(policy);
  if (!roles.includes(user.role)) {
    throw new ApiError("FORBIDDEN", `The tool table lets only ${roles.join(" or ") || "nobody"} pull back ${step.tool}; your role is ${user.role}. Ask someone with that role, or an admin to change the tool's row.`);
  }
}

/** The revoke kind a step gets now: its compensation, a correction, or an escalation past its window. */
function kindFor(step: Step, policy: ToolPolicy | null, now: Date): { kind: RevokeKind; windowEndsAt: Date | null } {
  const window = revokeWindow(step, policy, now);
  if (!window.open) return { kind: RevokeKind.OUT_OF_WINDOW, windowEndsAt: window.endsAt };
  return { kind: step.toolClass === ToolClass.IRREVERSIBLE ? RevokeKind.CORRECTION : RevokeKind.COMPENSATE, windowEndsAt: window.endsAt };
}

/** A revoke row (unique per step or run: of two people pulling at once, one creates it) and its audit event. */
async function insertRevoke(prisma: PrismaClient, now: Date, data: Omit<Prisma.RevokeUncheckedCreateInput, "requestedAt">, actor: Actor): Promise<{ revoke: Revoke; created: boolean }> {
  try {
    const revoke = await writeTransaction(prisma, async (tx) => {
      const row = await tx.revoke.create({ data: { ...data, requestedAt: now } });
      await appendAuditLink(tx, now, {
        scope: runScope(row.runId),
        runId: row.runId,
        stepId: row.stepId,
        type: row.kind === RevokeKind.RUN ? "revoke.run_pulled" : "revoke.pulled",
        actor,
        data: { revokeId: row.id, kind: row.kind, tool: row.tool, reason: row.reason, role: row.role, windowEndsAt: row.windowEndsAt?.toISOString() ?? null },
      });
      return row;
    });
    return { revoke, created: true };
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    return { revoke: await prisma.revoke.findUniqueOrThrow({ where: { dedupeKey: data.dedupeKey } }), created: false };
  }
}

/**
 * Makes sure a step's revoke has its effect (idempotent, so a repeat pull mends a crash between the
 * row and the effect): the COMPENSATE task for the worker, the correction draft, or the escalation.
 */
async function ensureStepEffect(prisma: PrismaClient, revoke: Revoke, step: Step, policy: ToolPolicy | null, actor: Actor): Promise<Revoke> {
  const store = sharedSagaStore(prisma);
  if (revoke.kind === RevokeKind.COMPENSATE && !revoke.taskId && !revoke.parentId) {
    const { task } = await enqueueTask(prisma, {
      kind: WorkerTaskKind.COMPENSATE,
      runId: step.runId,
      stepId: step.id,
      tools: [step.tool],
      payload: { reason: revoke.reason, draftedBy: `revoke:${revoke.id}` },
      dedupeKey: stepKeyOf(step.id),
      actor,
    });
    return prisma.revoke.update({ where: { id: revoke.id }, data: { taskId: task.id } });
  }
  if (revoke.kind === RevokeKind.CORRECTION && !revoke.correctionId) {
    // No connector is needed to draft a correction: the engine writes the step's pre-written draft.
    await (await dashboardEngine()).compensateStep(step.id, actor, `revoke:${revoke.id}`);
    let correction = await prisma.correction.findUnique({ where: { stepId: step.id }, select: { id: true } });
    if (!correction) {
      const audience = Array.isArray(step.audience) ? step.audience.filter((a): a is string => typeof a === "string") : [];
      correction = await store.createCorrection(
        {
          id: randomIds.next("cor"),
          runId: step.runId,
          stepId: step.id,
          audience: audience.length > 0 ? audience : ["customer"],
          rank: audienceRank(audience.length > 0 ? audience : ["customer"]),
          subject: `About our earlier message (${step.tool})`,
          body: `[Support: ${step.tool} had no correction template. Write what was wrong and what happens now.] Reason it was pulled back: ${revoke.reason}`,
          draftedBy: `revoke:${revoke.id}`,
        },
        { type: "correction.drafted", actor, data: { stepIdx: step.stepIdx, audience, revokeId: revoke.id } },
      );
    }
    return prisma.revoke.update({ where: { id: revoke.id }, data: { correctionId: correction.id } });
  }
  if (revoke.kind === RevokeKind.OUT_OF_WINDOW && !revoke.escalationId) {
    const { escalation, created } = await store.createEscalation(
      {
        id: randomIds.next("esc"),
        runId: step.runId,
        stepId: step.id,
        kind: EscalationKind.REVOKE_OUT_OF_WINDOW,
        title: `Pull back ${step.tool} (step ${step.stepIdx})? Its revocation window closed ${revoke.windowEndsAt ? `at ${revoke.windowEndsAt.toISOString().slice(0, 16).replace("T", " ")} UTC` : "(the tool has none)"}`,
        detail: {
          tool: step.tool,
          stepKey: step.stepKey,
          externalRef: step.externalRef,
          askedBy: revoke.requestedBy,
          reason: revoke.reason,
          windowEndsAt: revoke.windowEndsAt?.toISOString() ?? null,
          revokeId: revoke.id,
        },
        owner: policy?.owner ?? null,
        dedupeKey: `revoke-late:${step.id}`,
      },
      { type: "escalation.raised", actor, data: { kind: EscalationKind.REVOKE_OUT_OF_WINDOW, stepIdx: step.stepIdx, revokeId: revoke.id } },
    );
    if (created) await traceEscalationRaised(prisma, escalation, "revoke", actorAttributes("user", revoke.role));
    return prisma.revoke.update({ where: { id: revoke.id }, data: { escalationId: escalation.id } });
  }
  return revoke;
}

async function readStep(prisma: PrismaClient, stepId: string): Promise<{ step: Step; policy: ToolPolicy | null }> {
  const step = await onConnection(prisma, () => prisma.step.findUnique({ where: { id: stepId } }));
  if (!step) throw new SagaError("STEP_NOT_FOUND", `Step ${stepId} does not exist; open its run from the runs list.`);
  const policy = await onConnection(prisma, () => prisma.toolPolicy.findUnique({ where: { name: step.tool } }));
  return { step, policy };
}

/**
 * The signed-in person pulls back one confirmed step. Within the tool's window (database clock) the
 * worker runs the pre-written compensation under its own key (or, for an irreversible effect, a
 * correction is drafted for support); past it, an escalation opens instead. Only roles the tool's
 * row names may pull it (403). Pulling twice, or two people at once, gives one revoke: the second
 * is answered with the first (`created: false`).
 */
export async function pullStepRevoke({ actor, ...request }: PersonRequest<z.input<typeof ZPullStepRevokeRequest>>): Promise<TPullResult> {
  assertCan(actor, "revoke.pull");
  const { stepId, reason } = ZPullStepRevokeRequest.parse(request);
  const prisma = await getPrisma();
  const by = userActor(actor);
  const { step, policy } = await readStep(prisma, stepId);
  assertMayPull(actor, step, policy);
  const attributes = { "sagaboard.revoke.scope": "step", "sagaboard.step.id": step.id, "gen_ai.tool.name": step.tool, ...actorAttributes("user", actor.role) };
  return inRunSpan(prisma, "revoke", step.runId, attributes, () => pullStep(prisma, actor, by, step, policy, reason), revokeAttributes);
}

/** What a revoke span says came of the pull: whether this person's pull made it, and what it became (in its window or past it). */
function revokeAttributes(result: TPullResult): Record<string, string | boolean | number> {
  const late = result.steps.filter((s) => s.kind === RevokeKind.OUT_OF_WINDOW).length;
  return {
    "sagaboard.revoke.created": result.created,
    "sagaboard.revoke.kind": result.revoke.kind.toLowerCase(),
    ...(result.revoke.kind === RevokeKind.RUN
      ? { "sagaboard.revoke.steps_in_window": result.steps.length - late, "sagaboard.revoke.steps_out_of_window": late }
      : { "sagaboard.revoke.in_window": result.revoke.kind !== RevokeKind.OUT_OF_WINDOW }),
  };
}

/** The step's pull once the person may: the row (once, whoever pulls at once) and its effect. */
async function pullStep(prisma: PrismaClient, user: CurrentUser, actor: Actor, step: Step, policy: ToolPolicy | null, reason: string): Promise<TPullResult> {
  let existing = await onConnection(prisma, () => prisma.revoke.findUnique({ where: { dedupeKey: stepKeyOf(step.id) } }));
  if (!existing && step.status !== StepStatus.CONFIRMED) {
    throw new ApiError(
      "INVALID_TRANSITION",
      step.status === StepStatus.COMPENSATED
        ? `Step ${step.stepIdx} (${step.tool}) was already compensated; there is nothing left to pull back.`
        : `Step ${step.stepIdx} (${step.tool}) is ${step.status}: only a confirmed effect can be pulled back${UNSETTLED_STATUSES.includes(step.status as StepStatus) ? " (reconcile it first)" : " (nothing happened in the real system)"}.`,
      { details: [{ path: "stepId", message: `step is ${step.status}` }] },
    );
  }
  let created = false;
  if (!existing) {
    const now = await onConnection(prisma, () => databaseNow(prisma));
    const { kind, windowEndsAt } = kindFor(step, policy, now);
    const inserted = await insertRevoke(
      prisma,
      now,
      { id: randomIds.next("rvk"), runId: step.runId, stepId: step.id, tool: step.tool, kind, requestedBy: user.email, role: user.role, reason, windowEndsAt, dedupeKey: stepKeyOf(step.id) },
      actor,
    );
    existing = inserted.revoke;
    created = inserted.created;
  }
  const revoke = await ensureStepEffect(prisma, existing, step, policy, actor);
  const [summary] = await summarizeRevokes(prisma, [revoke]);
  if (!summary) throw new Error("unreachable: a revoke without its summary");
  return {
    created,
    revoke: summary,
    steps: [],
    message: created
      ? summary.kind === RevokeKind.OUT_OF_WINDOW
        ? `Nothing was undone: the window had closed, so your request went to a person. ${summary.outcomeText}`
        : `Pulled back by you: ${summary.outcomeText}`
      : `Already pulled back by ${revoke.requestedBy} at ${revoke.requestedAt.toISOString().slice(0, 19).replace("T", " ")} UTC (${revoke.reason}); nothing was pulled twice.`,
  };
}

/**
 * The run's revoke and one row per confirmed step, in one transaction: whoever reads the run's row
 * (a second person pulling at once) reads its steps' rows too. A step pulled back on its own before
 * keeps its revoke. Two pulls at once: one commits, the other reads its rows (`created: false`).
 */
async function insertRunRevoke(
  prisma: PrismaClient,
  runId: string,
  confirmed: readonly Step[],
  policyOf: (tool: string) => ToolPolicy | null,
  user: CurrentUser,
  reason: string,
  actor: Actor,
): Promise<{ revoke: Revoke; created: boolean }> {
  for (let attempt = 0; ; attempt++) {
    const pulledAlone = new Set(
      (await onConnection(prisma, () => prisma.revoke.findMany({ where: { stepId: { in: confirmed.map((s) => s.id) } }, select: { stepId: true } }))).map((r) => r.stepId),
    );
    try {
      const revoke = await writeTransaction(prisma, async (tx, now) => {
        const who = { requestedBy: user.email, role: user.role, reason, requestedAt: now };
        const row = await tx.revoke.create({ data: { id: randomIds.next("rvk"), runId, kind: RevokeKind.RUN, ...who, dedupeKey: runKeyOf(runId) } });
        const kinds: Record<string, string> = {};
        for (const step of confirmed) {
          if (pulledAlone.has(step.id)) continue;
          const { kind, windowEndsAt } = kindFor(step, policyOf(step.tool), now);
          kinds[step.stepIdx] = kind;
          await tx.revoke.create({ data: { id: randomIds.next("rvk"), runId, stepId: step.id, parentId: row.id, tool: step.tool, kind, ...who, windowEndsAt, dedupeKey: stepKeyOf(step.id) } });
        }
        await appendAuditLink(tx, now, { scope: runScope(runId), runId, stepId: null, type: "revoke.run_pulled", actor, data: { revokeId: row.id, reason, role: user.role, steps: kinds } });
        return row;
      });
      return { revoke, created: true };
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      const winner = await prisma.revoke.findUnique({ where: { dedupeKey: runKeyOf(runId) } });
      if (winner) return { revoke: winner, created: false };
      // A step was pulled back on its own meanwhile: read again and leave it out.
      if (attempt >= 2) throw e;
    }
  }
}

/** Run statuses a whole run may be pulled back from: in progress (the agent is stopped) or finished. */
const PULLABLE_RUN: readonly string[] = [RunStatus.RUNNING, RunStatus.AWAITING_PIVOT, RunStatus.COMMITTING, RunStatus.COMPLETED, RunStatus.NEEDS_ATTENTION];

/**
 * The signed-in person pulls back a whole run: the agent's next call is refused (the run is
 * UNWINDING), and the worker unwinds it last step first (reconciling what is unsettled), each step by
 * its own window: steps past it are left alone and escalated (REVOKE_OUT_OF_WINDOW). Every confirmed
 * step gets a revoke row of its own under the run's. 403 when the tool table lets the person pull
 * back only some of its tools (nothing is pulled then). Pulling twice gives one revoke.
 */
export async function pullRunRevoke({ actor, ...request }: PersonRequest<z.input<typeof ZPullRunRevokeRequest>>): Promise<TPullResult> {
  assertCan(actor, "revoke.pull");
  const { runId, reason } = ZPullRunRevokeRequest.parse(request);
  const prisma = await getPrisma();
  const by = userActor(actor);
  const store = sharedSagaStore(prisma);
  const run = await store.getRun(runId);
  if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${runId} does not exist; open the runs list to find it.`);
  const steps = await onConnection(prisma, () => prisma.step.findMany({ where: { runId }, orderBy: { stepIdx: "desc" } }));
  const policies = await onConnection(prisma, () => prisma.toolPolicy.findMany({ where: { name: { in: [...new Set(steps.map((s) => s.tool))] } } }));
  const policyOf = (tool: string) => policies.find((p) => p.name === tool) ?? null;
  const refused = stepsBeyondRole(actor.role, steps, policyOf);
  if (refused.length > 0) {
    const named = refused.map((s) => `step ${s.stepIdx} (${s.tool}, ${s.status}, ${s.id})`).join(", ");
    throw new ApiError("FORBIDDEN", `The tool table does not let the ${actor.role} role pull back ${named}, so the run cannot be pulled back whole by you. Pull back the other steps one by one, or ask someone the table names.`);
  }
  const attributes = { "sagaboard.revoke.scope": "run", ...actorAttributes("user", actor.role) };
  return inRunSpan(prisma, "revoke", run.id, attributes, () => pullRun(prisma, actor, by, run, steps, policyOf, reason), revokeAttributes);
}

/** The run's pull once the person may pull all of it: its rows, the late steps' escalations, the agent stopped, the worker's UNWIND task. */
async function pullRun(
  prisma: PrismaClient,
  user: CurrentUser,
  actor: Actor,
  run: RunRecord,
  steps: readonly Step[],
  policyOf: (tool: string) => ToolPolicy | null,
  reason: string,
): Promise<TPullResult> {
  const runId = run.id;
  const store = sharedSagaStore(prisma);
  const confirmed = steps.filter((s) => s.status === StepStatus.CONFIRMED);
  let existing = await onConnection(prisma, () => prisma.revoke.findUnique({ where: { dedupeKey: runKeyOf(runId) } }));
  let created = false;
  if (!existing) {
    if (!PULLABLE_RUN.includes(run.status)) {
      throw new ApiError("INVALID_TRANSITION", `Run ${runId} is ${run.status}: ${run.status === RunStatus.UNWOUND ? "everything it did was already undone" : "it is already being unwound"}; there is nothing more to pull back.`);
    }
    const inserted = await insertRunRevoke(prisma, run.id, confirmed, policyOf, user, reason, actor);
    existing = inserted.revoke;
    created = inserted.created;
  }
  const parentId = existing.id;
  const children = await onConnection(prisma, () => prisma.revoke.findMany({ where: { parentId }, orderBy: { requestedAt: "asc" } }));
  for (const child of children) {
    const step = confirmed.find((s) => s.id === child.stepId) ?? steps.find((s) => s.id === child.stepId);
    if (child.kind === RevokeKind.OUT_OF_WINDOW && step) await ensureStepEffect(prisma, child, step, policyOf(step.tool), actor);
  }
  // The agent is stopped before anything is undone: its next call is told the run is being pulled back.
  const current = await store.getRun(runId);
  if (current && PULLABLE_RUN.includes(current.status)) {
    await store.setRunStatus(runId, null, RunStatus.UNWINDING, { type: "run.unwinding", actor, data: { reason, revokeId: existing.id } });
  }
  if (!existing.taskId) {
    const { task } = await enqueueTask(prisma, {
      kind: WorkerTaskKind.UNWIND,
      runId,
      tools: [...new Set(steps.map((s) => s.tool))],
      payload: { reason: `revoke: ${reason}`, skipStepIds: children.filter((c) => c.kind === RevokeKind.OUT_OF_WINDOW && c.stepId).map((c) => c.stepId as string), draftedBy: `revoke:${existing.id}` },
      dedupeKey: runKeyOf(runId),
      actor,
    });
    existing = await prisma.revoke.update({ where: { id: existing.id }, data: { taskId: task.id } });
  }
  const [summary, ...stepSummaries] = await summarizeRevokes(prisma, [existing, ...children]);
  if (!summary) throw new Error("unreachable: a revoke without its summary");
  const late = children.filter((c) => c.kind === RevokeKind.OUT_OF_WINDOW).length;
  return {
    created,
    revoke: summary,
    steps: stepSummaries,
    message: created
      ? `Pulling back the whole run, last step first: ${children.length - late} step(s) within their window${late > 0 ? `, ${late} past it (escalated instead)` : ""}.`
      : `Already pulled back by ${existing.requestedBy} at ${existing.requestedAt.toISOString().slice(0, 19).replace("T", " ")} UTC (${existing.reason}); nothing was pulled twice.`,
  };
}
