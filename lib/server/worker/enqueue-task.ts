/** Enqueues a worker task, once per purpose: the dedupe key's unique constraint, not a pre-check, decides. */
import { z } from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { ZJson } from "@/packages/client/src/protocol/schemas/saga";
import { SagaError } from "@/packages/client/src/saga/errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { Actor } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { currentTraceparent, withTaskTrace } from "@/packages/client/src/protocol/trace-scope";
import { runTraceparent } from "@/lib/core/observability/run-trace";
import { tracingOn } from "@/packages/client/src/protocol/tracing";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { appendTaskAudit, jsonIn, readTx, toTaskRecord } from "./task-record";
import { writeTransaction } from "@/lib/core/db/transactions";
import { WorkerTaskKind, WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { QUEUE_ACTOR, type WorkerTaskRecord, ZUnwindPayload, ZCommitPlanPayload } from "@/packages/client/src/protocol/tasks/task";

const actorSchema = z.object({ type: z.enum(["agent", "user", "system"]), id: z.string().trim().min(1) });

/** What `enqueueTask` takes. */
export const ZEnqueueTaskRequest = z
  .object({
    /** What to do. */
    kind: z.enum(WorkerTaskKind),
    /** The run. */
    runId: z.string().trim().min(1),
    /** The step (required for RECONCILE and COMPENSATE, absent for UNWIND). */
    stepId: z.string().trim().min(1).nullish(),
    /** Tools whose connectors the worker needs (stored sorted, without repeats). */
    tools: z.array(z.string().trim().min(1)).max(100),
    /** Kind-specific input (UNWIND: `{ reason }`). */
    payload: ZJson,
    /** One task per purpose (`unwind:<runId>`, `reconcile:<stepId>`): a second enqueue returns the first task. */
    dedupeKey: z.string().trim().min(1).max(300),
    /** Who asked (audit); the task queue's system actor when absent. */
    actor: actorSchema.optional(),
  })
  .superRefine((input, ctx) => {
    if (input.kind === WorkerTaskKind.UNWIND) {
      if (input.stepId) ctx.addIssue({ code: "custom", path: ["stepId"], message: "an UNWIND task is about a whole run: leave stepId out" });
      if (!ZUnwindPayload.safeParse(input.payload).success) {
        ctx.addIssue({ code: "custom", path: ["payload", "reason"], message: "an UNWIND task needs payload.reason (a non-empty string)" });
      }
    } else if (input.kind === WorkerTaskKind.COMMIT_PLAN) {
      if (input.stepId) ctx.addIssue({ code: "custom", path: ["stepId"], message: "a COMMIT_PLAN task is about a whole run's plan: leave stepId out" });
      if (!ZCommitPlanPayload.safeParse(input.payload).success) {
        ctx.addIssue({ code: "custom", path: ["payload", "pivotId"], message: "a COMMIT_PLAN task needs payload.pivotId (the approved pivot)" });
      }
    } else if (input.kind === WorkerTaskKind.SEND_CORRECTION) {
      // The send step does not exist yet: the worker's call writes it.
      if (input.stepId) ctx.addIssue({ code: "custom", path: ["stepId"], message: "a SEND_CORRECTION task is about its correction run: leave stepId out" });
    } else if (!input.stepId) {
      ctx.addIssue({ code: "custom", path: ["stepId"], message: `a ${input.kind} task is about one step: stepId is required` });
    }
  });

/**
 * The trace context a new task carries (tracing on only): the work in progress's (the person's
 * decision or revoke that asked for the task, the agent's request), else the run's kept one. The
 * worker sends it with the task's requests, so its spans join the run's trace. Off: none, no read.
 */
async function taskTraceparent(prisma: PrismaClient, runId: string): Promise<string | undefined> {
  if (!tracingOn()) return undefined;
  return currentTraceparent() ?? (await runTraceparent(prisma, runId));
}

/** What callers pass to `enqueueTask`. */
export type TEnqueueTaskRequest = z.input<typeof ZEnqueueTaskRequest>;

/** The task, and whether this call created it (false: the dedupe key already named a task). */
export interface EnqueueTaskResult {
  /** True when this call created the task. */
  created: boolean;
  /** The new task, or the one already holding the dedupe key (whatever its status). */
  task: WorkerTaskRecord;
}

/**
 * Enqueues a PENDING task and appends `task.enqueued` to the run's audit chain. A dedupe key already
 * in use returns the existing task (`created: false`), found after the unique constraint refused
 * the insert (P2002): two concurrent enqueues make one task. Throws a ZodError for malformed input,
 * SagaError RUN_NOT_FOUND / STEP_NOT_FOUND when the run or step does not exist.
 */
export async function enqueueTask(prisma: PrismaClient, request: TEnqueueTaskRequest): Promise<EnqueueTaskResult> {
  const input = ZEnqueueTaskRequest.parse(request);
  const actor: Actor = input.actor ?? QUEUE_ACTOR;
  const tools = [...new Set(input.tools)].sort();
  const stepId = input.stepId ?? null;
  const payload = withTaskTrace(input.payload as Json, await taskTraceparent(prisma, input.runId));
  try {
    const task = await writeTransaction(prisma, async (tx, now) => {
      // The insert first: it takes the write lock (and the unique index decides dedupe).
      const row = await tx.workerTask.create({
        data: {
          id: randomIds.next("tsk"),
          kind: input.kind,
          runId: input.runId,
          stepId,
          tools,
          status: WorkerTaskStatus.PENDING,
          attempt: 0,
          dedupeKey: input.dedupeKey,
          payload: jsonIn(payload),
          createdAt: now,
          updatedAt: now,
        },
      });
      // WorkerTask has no foreign keys (see the report): check the parents under the write lock.
      const run = await tx.run.findUnique({ where: { id: input.runId }, select: { id: true } });
      if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${input.runId} does not exist; a task must name an existing run.`);
      if (stepId) {
        const step = await tx.step.findUnique({ where: { id: stepId }, select: { runId: true } });
        if (!step || step.runId !== input.runId) {
          throw new SagaError("STEP_NOT_FOUND", `Step ${stepId} does not exist in run ${input.runId}.`);
        }
      }
      const record = toTaskRecord(row);
      await appendTaskAudit(tx, now, record, "task.enqueued", actor, {
        taskId: record.id,
        kind: record.kind,
        dedupeKey: record.dedupeKey,
        tools,
      });
      return record;
    });
    return { created: true, task };
  } catch (e) {
    if (isUniqueViolation(e)) {
      // The transaction rolled back; the task holding the key is committed.
      const existing = await readTx(prisma, (tx) => tx.workerTask.findUnique({ where: { dedupeKey: input.dedupeKey } }));
      if (existing) return { created: false, task: toTaskRecord(existing) };
    }
    throw e;
  }
}
