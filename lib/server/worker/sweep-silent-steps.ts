/**
 * A call in flight whose agent went silent is settled without it. An agent (a TypeScript or Python
 * client, the MCP gateway) that dies between a call and its outcome leaves the step INTENDED or
 * UNKNOWN; if it never comes back, nothing would ever say whether the effect happened. A step is
 * silent when nothing has been written to its run's chain for `silentAfterMs` (the agent's last
 * contact, on the database clock). Then, once per step:
 *
 * - its tool can be looked up by key: a RECONCILE task (dedupe key `silent:<stepId>`) asks a worker
 *   holding the tool's connector to reconcile it, which settles it CONFIRMED or NOT_EXECUTED (absence
 *   proved twice, with the lag pause) exactly as the agent would have;
 * - it cannot, or no worker did within another `silentAfterMs`: it is recorded UNKNOWN and raised as
 *   OUTCOME_UNKNOWN for a person (the escalation closes itself if a reconcile finds the effect later).
 *
 * Pick `silentAfterMs` longer than the slowest tool call an agent waits on (default five minutes):
 * a call still running is silent too, and only its lookup, never a guess, settles it. Several
 * sweepers at once do each thing once: the task's and the escalation's dedupe keys are unique.
 */
import type { PrismaClient } from "@/generated/prisma";
import { databaseNow } from "@/lib/core/db/dialect";
import { sharedSagaStore } from "@/lib/core/db/prisma-saga-store";
import { onConnection } from "@/lib/core/db/transactions";
import { recordReconcile } from "@/packages/client/src/saga/calls";
import { randomIds } from "@/packages/client/src/saga/ids";
import { routedOwner } from "@/packages/client/src/saga/tool-table";
import { runScope } from "@/packages/client/src/saga/store";
import { EscalationStatus, RunStatus, UNSETTLED_STATUSES } from "@/packages/client/src/saga/vocabulary";
import { WorkerTaskKind, WorkerTaskStatus } from "@/packages/client/src/protocol/tasks/vocabulary";
import { enqueueTask } from "./enqueue-task";

/** How long a run may go without a word while a call is in flight, when nothing is configured: 5 minutes. */
export const DEFAULT_SILENT_STEP_MS = 5 * 60_000;

/** The environment variable that sets it, in milliseconds. */
export const SILENT_STEP_ENV = "SAGABOARD_SILENT_STEP_MS";

/** Below a second every call in flight would be "silent". */
const MIN_SILENT_STEP_MS = 1_000;

/** The configured silence, or 5 minutes; throws with what to set when the value is not a whole number of at least 1000. */
export function silentStepMs(env: Record<string, string | undefined> = process.env): number {
  const raw = env[SILENT_STEP_ENV]?.trim();
  if (!raw) return DEFAULT_SILENT_STEP_MS;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < MIN_SILENT_STEP_MS) {
    throw new Error(`${SILENT_STEP_ENV} must be a whole number of milliseconds, at least ${MIN_SILENT_STEP_MS} (got "${raw}"); unset it for the default of ${DEFAULT_SILENT_STEP_MS} (5 minutes).`);
  }
  return value;
}

/** Runs that can still have a call in flight. */
const LIVE_RUNS = [RunStatus.RUNNING, RunStatus.AWAITING_PIVOT, RunStatus.COMMITTING, RunStatus.UNWINDING];

/** What one sweep did. */
export interface SweepSilentStepsResult {
  /** Steps in flight it looked at. */
  looked: number;
  /** Steps given to a worker to reconcile (RECONCILE tasks enqueued). */
  reconciling: string[];
  /** Steps raised for a person (OUTCOME_UNKNOWN). */
  escalated: string[];
}

/** Settles calls in flight whose agent went silent (see the file's comment). */
export async function sweepSilentSteps(prisma: PrismaClient, options: { sweeperId: string; silentAfterMs?: number; limit?: number }): Promise<SweepSilentStepsResult> {
  const silentAfterMs = options.silentAfterMs ?? silentStepMs();
  const actor = { type: "system" as const, id: options.sweeperId };
  const result: SweepSilentStepsResult = { looked: 0, reconciling: [], escalated: [] };
  const now = await databaseNow(prisma);
  const cutoff = new Date(now.getTime() - silentAfterMs);
  const steps = await onConnection(prisma, () =>
    prisma.step.findMany({
      where: { status: { in: [...UNSETTLED_STATUSES] }, createdAt: { lt: cutoff }, run: { status: { in: LIVE_RUNS } } },
      orderBy: { createdAt: "asc" },
      take: options.limit ?? 200,
      select: { id: true, runId: true, tool: true },
    }),
  );
  const store = sharedSagaStore(prisma);
  for (const candidate of steps) {
    result.looked++;
    const [last, open, row, task] = await onConnection(prisma, async () => [
      await prisma.auditEvent.findFirst({ where: { scope: runScope(candidate.runId) }, orderBy: { seq: "desc" }, select: { at: true } }),
      await prisma.escalation.findFirst({ where: { stepId: candidate.id, status: { in: [EscalationStatus.OPEN, EscalationStatus.CLAIMED] } }, select: { id: true } }),
      await prisma.toolPolicy.findUnique({ where: { name: candidate.tool }, select: { lookupAvailable: true, owner: true, status: true } }),
      await prisma.workerTask.findUnique({ where: { dedupeKey: `silent:${candidate.id}` }, select: { status: true, createdAt: true } }),
    ] as const);
    if ((last && last.at > cutoff) || open) continue; // the run is alive, or a person has it
    if (row?.lookupAvailable && !task) {
      await enqueueTask(prisma, {
        kind: WorkerTaskKind.RECONCILE,
        runId: candidate.runId,
        stepId: candidate.id,
        tools: [candidate.tool],
        payload: { reason: `the agent went silent for ${Math.round(silentAfterMs / 1000)} s with this call in flight` },
        dedupeKey: `silent:${candidate.id}`,
        actor,
      });
      result.reconciling.push(candidate.id);
      continue;
    }
    const waiting = task && (task.status === WorkerTaskStatus.PENDING || task.status === WorkerTaskStatus.CLAIMED);
    if (waiting && task.createdAt > cutoff) continue; // a worker may still reconcile it
    if (task && !waiting) continue; // the worker's reconcile ran; what it recorded (or raised) stands
    const step = await store.getStep(candidate.id);
    if (!step || !UNSETTLED_STATUSES.includes(step.status)) continue;
    const why = row?.lookupAvailable
      ? `no worker holding ${candidate.tool}'s connector reconciled it within ${Math.round(silentAfterMs / 1000)} s`
      : `${candidate.tool} cannot be looked up by key`;
    await recordReconcile(
      { store, ids: randomIds },
      {
        step,
        report: { kind: "lookup_failed", message: `The agent went silent with this call in flight, and ${why}: whether it happened is for a person to check.`, attempts: 1 },
        actor,
        owner: row ? routedOwner(row) : null,
      },
    );
    result.escalated.push(candidate.id);
  }
  return result;
}
