/**
 * "Check the real system": looks an escalated step's key up with the tool's own lookup, and reports
 * what it found. Changes nothing: settling the outcome with this as evidence is a separate, audited
 * decision (resolve-escalation).
 *
 * The lookup runs where the tool's connector is. A server that holds one (the demo's simulated
 * systems, lib/demo/connectors/server-connectors.ts) looks the key up while the person waits. In a real
 * deployment the credentials live with the workers, so the server enqueues a LOOKUP task for the
 * step's tool; a worker holding the connector claims it, runs the lookup (with the search-lag
 * recheck) and completes the task, and `getRealSystemCheck` reads its answer back.
 */
import { reconcileBody, reconcileReport } from "@/packages/client/src/protocol/schemas/calls";
import { serverSearchLagMs } from "@/lib/demo/connectors/server-connectors";
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import type { ReconcileReport } from "@/packages/client/src/saga/messages";
import type { Json } from "@/packages/client/src/saga/tools";
import { systemClock } from "@/packages/client/src/saga/clock";
import { SagaError } from "@/packages/client/src/saga/errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import { lookUpStep } from "@/packages/client/src/saga/reconcile";
import type { StepRecord } from "@/packages/client/src/saga/store";
import { enqueueTask } from "@/lib/server/worker/enqueue-task";
import { ZLookupPayload, ZLookupResult, type TLookupPayload } from "@/packages/client/src/protocol/tasks/lookup-task";
import { jsonIn, toTaskRecord } from "@/lib/server/worker/task-record";
import { writeTransaction } from "@/lib/core/db/transactions";
import { WorkerTaskKind, WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { ZEscalationId } from "./claim-escalation";
import { connectorRegistry, withDb } from "@/lib/desks/dashboard/context";
import { assertEscalationWorker } from "./escalation-access";
import { type PersonRequest, userActor } from "@/lib/server/auth/current-user";
import { systemInWords, systemOfTool } from "@/lib/server/tools/tool-systems";
import type { TRealSystemCheck, TRealSystemCheckState } from "@/lib/desks/escalations/views";
import { type WorkerTaskRecord } from "@/packages/client/src/protocol/tasks/task";

/** The longest pause before the second lookup (the engine's reconcile re-checks after 2 s). */
const MAX_RECHECK_MS = 2_000;

/** What this server says it is, as the place a lookup ran. */
const THIS_SERVER = "this server";

/** The escalation's step and the system its tool acts on (the tool table's word, else its name's). */
async function escalatedStep(prisma: PrismaClient, escalationId: string): Promise<{ step: StepRecord; system: string }> {
  const store = sharedSagaStore(prisma);
  const escalation = await store.getEscalation(escalationId);
  if (!escalation) throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${escalationId} does not exist; reload the queue.`);
  if (!escalation.stepId) {
    throw new SagaError("STEP_NOT_FOUND", `Escalation ${escalationId} is about a call that was held before it ran; there is no effect to look up.`);
  }
  const step = await store.getStep(escalation.stepId);
  if (!step) throw new SagaError("STEP_NOT_FOUND", `The step of escalation ${escalationId} does not exist.`);
  const row = await withDb((db) => db.toolPolicy.findUnique({ where: { name: step.tool }, select: { system: true } }));
  return { step, system: systemOfTool(row?.system) };
}

/** A lookup's report as the check a person reads. */
function toCheck(escalationId: string, step: StepRecord, system: string, report: ReconcileReport, checkedAt: Date, checkedBy: string): TRealSystemCheck {
  return {
    escalationId,
    tool: step.tool,
    system,
    stepKey: step.stepKey,
    found: report.kind === "found",
    externalRef: report.kind === "found" ? report.externalRef : null,
    result: report.kind === "found" ? report.result : null,
    lookups: report.kind === "lookup_failed" ? report.attempts : report.lookups,
    error: report.kind === "lookup_failed" ? report.message : null,
    checkedAt: checkedAt.toISOString(),
    stepStatus: step.status,
    checkedBy,
  };
}

/** Where a LOOKUP task stands, as the person reads it. */
function taskState(task: WorkerTaskRecord, escalationId: string, step: StepRecord, system: string): TRealSystemCheckState {
  const payload = ZLookupPayload.safeParse(task.payload);
  if (task.status === WorkerTaskStatus.PENDING || task.status === WorkerTaskStatus.CLAIMED) {
    return {
      state: "waiting",
      taskId: task.id,
      tool: step.tool,
      system,
      askedAt: task.createdAt.toISOString(),
      askedBy: payload.success ? payload.data.askedBy : "someone",
      claimedBy: task.status === WorkerTaskStatus.CLAIMED ? task.claimedBy : null,
    };
  }
  const result = task.status === WorkerTaskStatus.DONE ? ZLookupResult.safeParse(task.result) : null;
  if (result?.success) {
    return { state: "checked", check: toCheck(escalationId, step, system, reconcileReport(result.data.lookup), task.updatedAt, task.claimedBy ?? "a worker") };
  }
  const error = task.error && typeof task.error === "object" && !Array.isArray(task.error) && typeof task.error.message === "string" ? task.error.message : null;
  return {
    state: "failed",
    taskId: task.id,
    tool: step.tool,
    system,
    error: result ? `the worker's answer could not be read (${result.error.issues[0]?.message ?? "bad shape"})` : (error ?? "the worker gave no reason"),
    at: task.updatedAt.toISOString(),
  };
}

/** The newest LOOKUP task for `stepId`, if any. */
async function latestLookup(stepId: string): Promise<WorkerTaskRecord | null> {
  const row = await withDb((db) => db.workerTask.findFirst({ where: { stepId, kind: WorkerTaskKind.LOOKUP }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] }));
  return row ? toTaskRecord(row) : null;
}

/** Who asked for a check, as the task's payload records it (`user:<email>`). */
function askedBy(user: Parameters<typeof userActor>[0]): string {
  const actor = userActor(user);
  return `${actor.type}:${actor.id}`;
}

/**
 * Keeps a check this server made with the escalation's step, as a LOOKUP task already done here: the
 * page shows the latest check after a reload (and to the next person) the same way it shows a
 * worker's answer, and nothing claims a task that is already DONE. Returns when it was recorded.
 */
async function keepCheck(prisma: PrismaClient, step: StepRecord, payload: TLookupPayload, report: ReconcileReport): Promise<Date> {
  return writeTransaction(prisma, async (tx, now) => {
    await tx.workerTask.create({
      data: {
        id: randomIds.next("tsk"),
        kind: WorkerTaskKind.LOOKUP,
        runId: step.runId,
        stepId: step.id,
        tools: [step.tool],
        status: WorkerTaskStatus.DONE,
        attempt: 1,
        claimedBy: THIS_SERVER,
        dedupeKey: `lookup:${step.id}:${randomIds.next("chk")}`,
        payload: jsonIn(payload),
        result: jsonIn({ stepId: step.id, lookup: reconcileBody(report) } as Json),
        createdAt: now,
        updatedAt: now,
      },
    });
    return now;
  });
}

/**
 * Checks the real system for escalation `escalationId`: here when this server holds the tool's
 * connector (the answer comes back at once), else by asking a worker that does (the answer is
 * `waiting`; read it with `getRealSystemCheck`). A check already waiting for a worker is not asked twice.
 */
export async function checkRealSystem({ actor, escalationId }: PersonRequest<{ escalationId: string }>): Promise<TRealSystemCheckState> {
  const id = ZEscalationId.parse(escalationId);
  await assertEscalationWorker(actor, id);
  const prisma = await getPrisma();
  const { step, system } = await escalatedStep(prisma, id);
  const registry = connectorRegistry();

  if (registry.has(step.tool)) {
    const def = registry.tool(step.tool);
    if (!def.lookup) throw new SagaError("INVALID_TOOL_DEFINITION", `${step.tool} has no lookup, so it cannot be looked up in ${systemInWords(system, step.tool)}; check ${systemInWords(system, step.tool)} by hand.`);
    const recheckAfterMs = Math.min(serverSearchLagMs() + 100, MAX_RECHECK_MS);
    const report = await lookUpStep({ maxAttempts: 1, backoffMs: 0, clock: systemClock, recheckAfterMs }, def, step);
    const checkedAt = await keepCheck(prisma, step, { escalationId: id, askedBy: askedBy(actor) }, report);
    return { state: "checked", check: toCheck(id, step, system, report, checkedAt, THIS_SERVER) };
  }

  const open = await latestLookup(step.id);
  if (open && (open.status === WorkerTaskStatus.PENDING || open.status === WorkerTaskStatus.CLAIMED)) return taskState(open, id, step, system);
  const payload: TLookupPayload = { escalationId: id, askedBy: askedBy(actor) };
  // enqueueTask takes the connection itself (writeTransaction): not inside withDb, which would wait on itself.
  const { task } = await enqueueTask(prisma, { kind: WorkerTaskKind.LOOKUP, runId: step.runId, stepId: step.id, tools: [step.tool], payload, dedupeKey: `lookup:${step.id}:${randomIds.next("chk")}`, actor: userActor(actor) });
  return taskState(task, id, step, system);
}

/** Where the latest check of escalation `escalationId`'s step through a worker stands (`none` before any). */
export async function getRealSystemCheck({ actor, escalationId }: PersonRequest<{ escalationId: string }>): Promise<TRealSystemCheckState> {
  const id = ZEscalationId.parse(escalationId);
  await assertEscalationWorker(actor, id);
  const prisma = await getPrisma();
  const { step, system } = await escalatedStep(prisma, id);
  const task = await latestLookup(step.id);
  return task ? taskState(task, id, step, system) : { state: "none" };
}
