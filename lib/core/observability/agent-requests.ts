/**
 * The one hook on the agent API's requests (lib/delivery/route.ts wraps each handler's answer with it):
 * the request's time goes into the latency histogram; when tracing is on (tracing.ts) a logged
 * call's outcome becomes its span; at SAGABOARD_LOG_LEVEL=debug each answer is a log line with its
 * run, step and trace ids. Off, it costs two clock reads, an array write and a level check per request.
 * On, a handler that may enqueue a worker task or raise an escalation runs with the agent's
 * traceparent as the current trace context (the task carries it; the raise is its child), and the
 * requests that are once per run (creating it, asking for a
 * pivot) keep the run's trace context for what people and workers do later (run-trace.ts).
 */
import type { Logger } from "pino";
import type { Json } from "@/packages/client/src/saga/tools";
import type { SpanContext } from "@opentelemetry/api";
import { getPrisma } from "@/lib/core/db/prisma";
import { serverLog } from "./log";
import { traceEscalationRaised, actorAttributes } from "./people-spans";
import { observeRequestSeconds } from "./request-latency";
import { recordRunTrace } from "./run-trace";
import { withTraceparent } from "@/packages/client/src/protocol/trace-scope";
import { traceAgentAnswer, traceIdOf, traceparentOf, tracingOn } from "@/packages/client/src/protocol/tracing";

/** What a handler answered (the stored response: status and body). */
export interface AgentAnswer {
  /** HTTP status. */
  status: number;
  /** The JSON body. */
  body: Json;
}

let log: Logger | undefined;

/** Runs `answer` (a handler and its response parsing), timing it, and traces and logs it when asked to. */
export async function observeAgentRequest<T extends AgentAnswer>(operationId: string, request: Request, answer: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const startedAt = tracingOn() ? Date.now() : 0;
  const result = startedAt !== 0 && SCOPED.has(operationId) ? await withTraceparent(request.headers.get("traceparent"), answer) : await answer();
  const seconds = (performance.now() - started) / 1000;
  observeRequestSeconds(operationId, seconds);
  if (startedAt !== 0) await keepRunTrace(operationId, request, result, traceAgentAnswer(operationId, request, result, startedAt));
  if ((log ??= serverLog()).isLevelEnabled("debug")) log.debug(answerFields(operationId, request, result, seconds), `${operationId} answered ${result.status}`);
  return result;
}

/**
 * After a run's creation or a pivot request, keeps the run's trace context (the agent's header, or
 * the request_pivot span's); after an escalation the agent raised, its `raise_escalation` span. Never
 * fails the request: a failed write is a warning (the later spans then start traces of their own).
 */
async function keepRunTrace(operationId: string, request: Request, result: AgentAnswer, span: SpanContext | undefined): Promise<void> {
  if (result.status >= 300 || !KEEPS_RUN_TRACE.has(operationId)) return;
  const body = objectOf(result.body);
  const traceparent = request.headers.get("traceparent");
  try {
    if (operationId === "createRun") {
      const run = objectOf(body?.run);
      if (typeof run?.id === "string") await recordRunTrace(await getPrisma(), run.id, traceparent);
    } else if (operationId === "requestPivot") {
      const pivot = objectOf(body?.pivot);
      if (typeof pivot?.runId === "string" && span) await recordRunTrace(await getPrisma(), pivot.runId, traceparentOf(span));
    } else {
      const escalation = objectOf(body?.escalation);
      if (body?.created === true && escalation && typeof escalation.id === "string" && typeof escalation.runId === "string" && typeof escalation.kind === "string") {
        const facts = { id: escalation.id, runId: escalation.runId, kind: escalation.kind, stepId: typeof escalation.stepId === "string" ? escalation.stepId : null };
        const prisma = await getPrisma();
        await withTraceparent(traceparent, () => traceEscalationRaised(prisma, facts, "agent", actorAttributes("agent", "agent")));
      }
    }
  } catch (e) {
    serverLog().warn({ operation: operationId, err: e }, "could not keep the run's trace context; later spans of this run start a trace of their own");
  }
}

/**
 * The operations whose handler may enqueue a worker task (the task carries the context) or raise an
 * escalation inside the saga (a held call, a failure after the pivot, a failed lookup or
 * compensation: its raise_escalation span is the request's child), run under the agent's trace
 * context while tracing is on. On Node 20 a process that has entered an AsyncLocalStorage scope
 * tracks every promise from then on; a Next server already has (its request storage), and
 * bench/tracing-route.ts measures the difference in process.
 */
const SCOPED: ReadonlySet<string> = new Set([
  "requestUnwind",
  "beginCall",
  "reportOutcome",
  "completeRun",
  "reportReconcile",
  "reportCompensation",
  "nextUnwindAction",
  "nextCompensateAction",
]);

/** The operations after which the run's trace is kept (or an escalation's raise traced): once per run or pivot, never per logged call. */
const KEEPS_RUN_TRACE: ReadonlySet<string> = new Set(["createRun", "requestPivot", "raiseEscalation"]);

const objectOf = (v: Json | undefined): Record<string, Json> | undefined => (v && typeof v === "object" && !Array.isArray(v) ? v : undefined);

/** The ids an answer names (its step's, its run's), the request's trace id, and what it answered. */
function answerFields(operationId: string, request: Request, result: AgentAnswer, seconds: number): Record<string, unknown> {
  const body = objectOf(result.body);
  const step = objectOf(body?.step);
  const run = objectOf(body?.run);
  return {
    operation: operationId,
    status: result.status,
    ms: Math.round(seconds * 1e4) / 10,
    runId: step?.runId ?? run?.id,
    stepId: step?.id,
    tool: step?.tool,
    outcome: typeof step?.status === "string" ? step.status.toLowerCase() : undefined,
    answer: body?.answer,
    traceId: traceIdOf(request.headers.get("traceparent")),
  };
}
