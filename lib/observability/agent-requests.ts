/**
 * The one hook on the agent API's requests (lib/api/route.ts wraps each handler's answer with it):
 * the request's time goes into the latency histogram; when tracing is on (tracing.ts) a logged
 * call's outcome becomes its span; at SAGABOARD_LOG_LEVEL=debug each answer is a log line with its
 * run, step and trace ids. Off, it costs two clock reads, an array write and a level check per request.
 */
import type { Logger } from "pino";
import type { Json } from "@/lib/saga/tools";
import { serverLog } from "./log";
import { observeRequestSeconds } from "./request-latency";
import { traceAgentAnswer, traceIdOf, tracingOn } from "./tracing";

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
  const result = await answer();
  const seconds = (performance.now() - started) / 1000;
  observeRequestSeconds(operationId, seconds);
  if (startedAt !== 0) traceAgentAnswer(operationId, request, result, startedAt);
  if ((log ??= serverLog()).isLevelEnabled("debug")) log.debug(answerFields(operationId, request, result, seconds), `${operationId} answered ${result.status}`);
  return result;
}

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
