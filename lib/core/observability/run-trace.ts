/**
 * The trace a run belongs to, kept so that what happens to the run later, outside the agent's
 * requests (a reviewer's approval hours after the pivot request, an escalation worked the next day,
 * a revoke, a worker's task), joins the agent's trace.
 *
 * Where it is kept, and why there. One `RunTrace` row per run (runId, traceparent), written only while
 * tracing is on and only by requests that are once per run or per pivot, never by a logged call:
 * - creating a run (`createRun`) records the agent's own traceparent, so a run that never asks for a
 *   pivot still has one;
 * - requesting a pivot (`requestPivot`) rewrites it with the `request_pivot` span's context, so the
 *   decision on that pivot (and what a person does after it) is a child of the request for it.
 * The step hot path (begin a call, report its outcome) writes nothing more: its two commits stay two
 * (lib/core/db/step-log-*.ts is untouched), whatever tracing does. The row has no foreign key to Run and
 * is written beside the run's statements, after the answer, as a single upsert; a write that fails is
 * logged and the request still succeeds (a missing row only makes the later spans start a trace of
 * their own). The Run row itself is not touched: its `updatedAt` is the run's version, which the
 * careful insert and the decisions are fenced on.
 *
 * A span made from the kept context is a child of it, not a span link: trace backends assemble a
 * trace by its trace id, so a child shows in the agent's trace (the decision under the request that
 * asked for it), where a link would start a trace of its own that a person reading the agent's trace
 * never sees. That the parent ended hours before is expected of asynchronous work.
 */
import type { PrismaClient } from "@/generated/prisma";
import { onConnection } from "@/lib/core/db/transactions";
import { isTraceparent } from "@/packages/client/src/protocol/trace-scope";

/** Keeps `traceparent` as the trace context of `runId` (a malformed one is ignored: it would only break the later spans). */
export async function recordRunTrace(prisma: PrismaClient, runId: string, traceparent: string | null | undefined): Promise<void> {
  if (!isTraceparent(traceparent)) return;
  const updatedAt = new Date();
  await onConnection(prisma, () =>
    prisma.runTrace.upsert({ where: { runId }, create: { runId, traceparent, updatedAt }, update: { traceparent, updatedAt }, select: { runId: true } }),
  );
}

/** The trace context kept for `runId`, or undefined when none was (an in-process run, tracing off when it ran). */
export async function runTraceparent(prisma: PrismaClient, runId: string): Promise<string | undefined> {
  const row = await onConnection(prisma, () => prisma.runTrace.findUnique({ where: { runId }, select: { traceparent: true } }));
  return row?.traceparent;
}
