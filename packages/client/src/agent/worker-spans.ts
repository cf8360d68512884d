/**
 * A worker's own span per task it runs, `worker_task <kind>`: a child of the trace context the task
 * carries (the person's action, the agent's request, else the run's kept context: trace-scope.ts),
 * and the parent of what the task does, since its requests carry this span's context (the server's
 * `compensate` and `execute_tool` spans) and an in-process engine's spans start under it
 * (saga-spans.ts). It covers the task's work and its settle, and says what became of the task.
 *
 * Pass it as `new Worker({ ..., traceTask: traceWorkerTask })` in a process that traces (the
 * OTLP endpoint set in its environment). Off, the work runs under the task's own context, as
 * without it. The packaged worker (@sagaboard/client) does not bundle this file: it has no
 * OpenTelemetry SDK in it, and a team that traces its workers passes a TaskTracer of its own.
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { TaskTracer } from "./worker";
import { taskTraceparent } from "../protocol/trace-scope";
import { activeTracer, contextOf, traceparentOf } from "../protocol/tracing";

/** Outcomes of a task that a person reading the trace should see as errors. */
const FAILED_OUTCOMES: ReadonlySet<string> = new Set(["failed", "unsettled"]);

/** Runs a task's work inside its `worker_task` span while tracing is on. */
export const traceWorkerTask: TaskTracer = async (task, work) => {
  const parent = taskTraceparent(task.payload);
  const tracer = activeTracer();
  if (!tracer) return work(parent);
  const span = tracer.startSpan(
    `worker_task ${task.kind.toLowerCase()}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        "sagaboard.operation": "worker_task",
        "sagaboard.task.id": task.id,
        "sagaboard.task.kind": task.kind.toLowerCase(),
        "sagaboard.task.attempt": task.attempt,
        "sagaboard.run.id": task.runId,
        ...(task.stepId ? { "sagaboard.step.id": task.stepId } : {}),
      },
    },
    contextOf(parent),
  );
  try {
    const outcome = await work(traceparentOf(span.spanContext()));
    span.setAttribute("sagaboard.task.outcome", outcome.outcome);
    if (FAILED_OUTCOMES.has(outcome.outcome)) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
    return outcome;
  } catch (e) {
    // The worker died in the task (a simulated crash in tests): the task stays claimed.
    span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
    throw e;
  } finally {
    span.end();
  }
};
