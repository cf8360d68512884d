/**
 * A person's answer to an approved run whose agent went quiet: let a worker commit the approved plan
 * (a COMMIT_PLAN task), or unwind the run instead (an UNWIND task). Each is one task per purpose
 * (dedupe key), audited as `task.enqueued` with the person as actor.
 */
import type { PrismaClient } from "@/generated/prisma";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaError } from "@/packages/client/src/saga/errors";
import type { Actor } from "@/packages/client/src/saga/store";
import { PivotStatus, RunStatus } from "@/packages/client/src/saga/vocabulary";
import { enqueueTask, type EnqueueTaskResult } from "./enqueue-task";
import { WorkerTaskKind } from "@/packages/client/src/protocol/tasks/vocabulary";

/** The dedupe key of a pivot's commit task: one per approved plan, whoever asks. */
export function planCommitDedupeKey(pivotId: string): string {
  return `commit:${pivotId}`;
}

/**
 * Enqueues the commit of the run's approved plan for a worker holding the plan's tools. Refused
 * (PIVOT_NOT_APPROVED) when the run's latest pivot is not approved, PLAN_ALREADY_COMMITTED when the
 * run is COMPLETED, RUN_CLOSED when it is being unwound or is finished otherwise.
 */
export async function enqueuePlanCommit(prisma: PrismaClient, input: { runId: string; actor: Actor; reason: string }): Promise<EnqueueTaskResult & { pivotId: string }> {
  const store = sharedSagaStore(prisma);
  const run = await store.getRun(input.runId);
  if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${input.runId} does not exist.`);
  const pivot = (await store.listPivots(input.runId)).at(-1);
  if (!pivot || pivot.status !== PivotStatus.APPROVED) {
    throw new SagaError("PIVOT_NOT_APPROVED", `Run ${input.runId} has no approved plan${pivot ? ` (its latest pivot is ${pivot.status.toLowerCase()})` : ""}: there is nothing for a worker to commit. Unwind it instead.`);
  }
  if (run.status === RunStatus.COMPLETED) throw new SagaError("PLAN_ALREADY_COMMITTED", `Run ${input.runId} is COMPLETED: its plan was committed already.`);
  if (run.status !== RunStatus.COMMITTING) {
    throw new SagaError("RUN_CLOSED", `Run ${input.runId} is ${run.status}, not COMMITTING: a worker may commit a plan only while the run waits for its commit.`);
  }
  const tools = [...new Set(pivot.plan.map((item) => item.tool))];
  const result = await enqueueTask(prisma, {
    kind: WorkerTaskKind.COMMIT_PLAN,
    runId: input.runId,
    tools,
    payload: { pivotId: pivot.id, reason: input.reason },
    dedupeKey: planCommitDedupeKey(pivot.id),
    actor: input.actor,
  });
  return { ...result, pivotId: pivot.id };
}

/** Enqueues the run's unwind for a worker holding its steps' tools (one task per run, as an agent's request). */
export async function enqueueRunUnwind(prisma: PrismaClient, input: { runId: string; actor: Actor; reason: string }): Promise<EnqueueTaskResult> {
  const store = sharedSagaStore(prisma);
  const tools = [...new Set((await store.listSteps(input.runId)).map((s) => s.tool))];
  return enqueueTask(prisma, { kind: WorkerTaskKind.UNWIND, runId: input.runId, tools, payload: { reason: input.reason }, dedupeKey: `unwind:${input.runId}`, actor: input.actor });
}
