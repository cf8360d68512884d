/**
 * The one hook on the agent API's requests (lib/api/route.ts wraps each handler's answer with it):
 * the request's time goes into the latency histogram, and when tracing is on (tracing.ts) a logged
 * call's outcome becomes its span. Off, it costs two clock reads and an array write per request.
 */
import type { Json } from "@/lib/saga/tools";
import { observeRequestSeconds } from "./request-latency";
import { traceAgentAnswer, tracingOn } from "./tracing";

/** What a handler answered (the stored response: status and body). */
export interface AgentAnswer {
  /** HTTP status. */
  status: number;
  /** The JSON body. */
  body: Json;
}

/** Runs `answer` (a handler and its response parsing), timing it, and traces it when tracing is on. */
export async function observeAgentRequest<T extends AgentAnswer>(operationId: string, request: Request, answer: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const startedAt = tracingOn() ? Date.now() : 0;
  const result = await answer();
  observeRequestSeconds(operationId, (performance.now() - started) / 1000);
  if (startedAt !== 0) traceAgentAnswer(operationId, request, result, startedAt);
  return result;
}
