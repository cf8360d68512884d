/**
 * Traces (OpenTelemetry), off unless OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
 * is set: then every logged call the agent API records becomes one span, exported over OTLP/HTTP
 * (JSON) in batches, named and labelled as the GenAI semantic conventions name a tool span
 * (`execute_tool <tool>`, gen_ai.operation.name, gen_ai.tool.name, gen_ai.tool.call.id) plus
 * Sagaboard's own attributes (run, step, class, phase, key, outcome, reconcile result).
 *
 * The agent's W3C `traceparent` header (both clients send it) makes each span a child of the agent's
 * own span, so Sagaboard's spans join the agent's trace. A logged call is two requests (its intent,
 * then its outcome); its span is made when the outcome is recorded, starting at the intent's time
 * (the step row's createdAt), so it covers the provider's call. A step settled by reconcile (after a
 * crash or an unknown outcome) gets a `reconcile <tool>` span with the reconcile's result; a
 * compensation a worker or an unwinding agent reports, `compensate <tool>` with its state and key; a
 * pivot request, `request_pivot`. What people and sweeps do for a run later (pivot decisions,
 * escalations, revokes) are spans of lib/core/observability/people-spans.ts, in the same trace through
 * the context lib/core/observability/run-trace.ts keeps.
 *
 * A process that traces flushes its buffered spans when it is told to stop (SIGTERM, SIGINT): see
 * `flushOnSignals`.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type SpanContext, type Tracer } from "@opentelemetry/api";
import { parseTraceParent } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider, type SpanProcessor } from "@opentelemetry/sdk-trace";
import type { Json } from "../saga/tools";

/** What traceAgentAnswer reads of a handler's answer. */
interface Answer {
  status: number;
  body: Json;
}

let state: { provider: TracerProvider; tracer: Tracer } | null | undefined;

/** Where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; null: tracing is off. */
export function tracesUrl(env: Record<string, string | undefined> = process.env): string | null {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, "")}/v1/traces` : null;
}

/**
 * Starts tracing in this process with `processor` (tests pass their own), or an OTLP exporter to
 * `url` in batches. Called on first use when the environment names an endpoint.
 */
export function startTracing(options: { url?: string; processor?: SpanProcessor; serviceName?: string } = {}): void {
  const processor = options.processor ?? new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: options.url ?? tracesUrl() ?? undefined }) });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName ?? process.env.OTEL_SERVICE_NAME?.trim() ?? "sagaboard" }),
    spanProcessors: [processor],
  });
  state = { provider, tracer: provider.getTracer("sagaboard") };
}

/** Sends what is buffered and stops tracing in this process (tests, and a stopping process: `flushOnSignals`). */
export async function stopTracing(): Promise<void> {
  const current = state;
  state = null;
  await current?.provider.shutdown();
}

/** Whether spans are made: decided once per process from the environment, unless startTracing ran. */
export function tracingOn(): boolean {
  if (state === undefined) {
    const url = tracesUrl();
    if (url) {
      startTracing({ url });
      flushOnSignals();
    } else state = null;
  }
  return state !== null;
}

/** The tracer spans are made with, or null while tracing is off. */
export function activeTracer(): Tracer | null {
  return tracingOn() ? state!.tracer : null;
}

/** How long a stopping process waits for its last spans to be sent (a collector that does not answer must not hold it up). */
export const FLUSH_TIMEOUT_MS = 2_000;

/** Stops tracing, sending what is buffered, or gives up after `timeoutMs`; never throws (the process is stopping anyway). */
export function stopTracingWithin(timeoutMs: number = FLUSH_TIMEOUT_MS): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  return Promise.race([stopTracing().catch(() => {}), timeout]).finally(() => clearTimeout(timer));
}

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
let flushInstalled = false;

/**
 * On SIGTERM or SIGINT, sends the buffered spans before the process ends (at most FLUSH_TIMEOUT_MS).
 * The server (Next's own handler), the worker and the notifier each handle the signal themselves and
 * end with `process.exit` once they have stopped; that exit waits here for the flush, which began
 * at the signal. A process where nobody else handles the signal is ended here after the flush, with
 * the code the signal would have given it (our listener alone would otherwise keep it running).
 */
export function flushOnSignals(): void {
  if (flushInstalled) return;
  flushInstalled = true;
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => flushAndExit(signal));
}

function flushAndExit(signal: keyof typeof SIGNAL_EXIT_CODES): void {
  const flushed = stopTracingWithin();
  const exit = process.exit.bind(process);
  process.exit = ((code?: number | string | null) => {
    void flushed.then(() => exit(code ?? undefined));
  }) as typeof process.exit;
  if (process.listenerCount(signal) === 0) void flushed.then(() => exit(SIGNAL_EXIT_CODES[signal]));
}

/** A span's context as a W3C traceparent header (what a child in another process or hours later starts from). */
export function traceparentOf(span: SpanContext): string {
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The context a span made under `traceparent` is a child of (the root: a new trace, when there is none or it does not parse). */
export function contextOf(traceparent: string | null | undefined): Context {
  const parent = traceparent ? parseTraceParent(traceparent) : null;
  return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

/** The trace id of a W3C traceparent header, or undefined when there is none or it does not parse. */
export function traceIdOf(traceparent: string | null): string | undefined {
  return traceparent ? parseTraceParent(traceparent)?.traceId : undefined;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const lower = (v: string | undefined) => v?.toLowerCase();

/** The fields of a step its span reads: a StepRecord in process, or the wire record of an agent API answer (dates as ISO strings). */
export type StepSpanFacts = Partial<
  Record<"id" | "runId" | "stepIdx" | "stepKey" | "tool" | "toolClass" | "phase" | "status" | "attempts" | "compensationState" | "compensationKey" | "createdAt", unknown>
>;

/** The span a recorded step makes. */
export type StepSpanKind = "execute_tool" | "reconcile" | "compensate";

/** The attributes of a logged step. */
function stepAttributes(step: StepSpanFacts): Attributes {
  const attributes: Attributes = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": str(step.tool),
    "gen_ai.tool.call.id": str(step.id),
    "sagaboard.run.id": str(step.runId),
    "sagaboard.step.id": str(step.id),
    "sagaboard.step.idx": typeof step.stepIdx === "number" ? step.stepIdx : undefined,
    "sagaboard.step.key": str(step.stepKey),
    "sagaboard.tool.class": lower(str(step.toolClass)),
    "sagaboard.phase": lower(str(step.phase)),
    "sagaboard.outcome": lower(str(step.status)),
  };
  if (typeof step.attempts === "number") attributes["sagaboard.step.attempts"] = step.attempts;
  return attributes;
}

/**
 * Makes the span of a recorded step, `kind <tool>`, ending now, under `parent`: a logged call's
 * (execute_tool) starts at its intent (the step's createdAt) or `startedAt`, whichever is earlier;
 * a reconcile's or a compensation's at `startedAt` (epoch ms). Null while tracing is off.
 */
export function traceStep(kind: StepSpanKind, step: StepSpanFacts, startedAt: number, parent: Context): SpanContext | undefined {
  if (!state) return undefined;
  const attributes = stepAttributes(step);
  attributes["sagaboard.operation"] = kind;
  const createdAt = step.createdAt instanceof Date ? step.createdAt.getTime() : typeof step.createdAt === "string" ? Date.parse(step.createdAt) : NaN;
  const outcome = str(step.status);
  if (kind === "reconcile") attributes["sagaboard.reconcile.result"] = lower(outcome);
  if (kind === "compensate") {
    attributes["sagaboard.compensation.state"] = lower(str(step.compensationState));
    attributes["sagaboard.compensation.key"] = str(step.compensationKey);
  }
  const span = state.tracer.startSpan(
    `${kind} ${str(step.tool) ?? "tool"}`,
    { kind: SpanKind.INTERNAL, startTime: kind === "execute_tool" && Number.isFinite(createdAt) ? Math.min(createdAt, startedAt) : startedAt, attributes },
    parent,
  );
  if (outcome === "FAILED" || outcome === "UNKNOWN" || outcome === "COMPENSATION_FAILED") {
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome === "FAILED" ? "the provider refused the call" : outcome === "UNKNOWN" ? "nobody knows whether it happened" : "the compensation failed" });
  }
  span.end();
  return span.spanContext();
}

/** The operations whose answer is a step's record, and the span each makes. */
const STEP_SPANS: Record<string, StepSpanKind> = {
  reportOutcome: "execute_tool",
  reportReconcile: "reconcile",
  reportCompensation: "compensate",
};

const objectOf = (v: Json | undefined): Record<string, Json> | undefined => (v && typeof v === "object" && !Array.isArray(v) ? v : undefined);

/**
 * Makes the span of one agent API answer, when it records a logged call's outcome, a reconcile, a
 * compensation's result or a pivot request (other answers make none), and returns its context.
 * `startedAt` is when the request arrived (epoch ms).
 */
export function traceAgentAnswer(operationId: string, request: Request, answer: Answer, startedAt: number): SpanContext | undefined {
  if (!state || answer.status >= 300) return undefined;
  const kind = STEP_SPANS[operationId];
  const body = objectOf(answer.body);
  const context = contextOf(request.headers.get("traceparent"));
  if (operationId === "requestPivot") {
    const pivot = objectOf(body?.pivot);
    if (!pivot) return undefined;
    const plan = pivot.plan;
    const span = state.tracer.startSpan(
      "request_pivot",
      {
        kind: SpanKind.INTERNAL,
        startTime: startedAt,
        attributes: {
          "sagaboard.operation": "request_pivot",
          "sagaboard.run.id": str(pivot.runId),
          "sagaboard.pivot.id": str(pivot.id),
          "sagaboard.pivot.status": lower(str(pivot.status)),
          "sagaboard.pivot.plan_items": Array.isArray(plan) ? plan.length : undefined,
        },
      },
      context,
    );
    span.end();
    return span.spanContext();
  }
  // An outcome sent with the next call or the finish (`previous`) is its call's execute_tool span.
  const previous = objectOf(objectOf(body?.previous)?.step);
  if (previous && (operationId === "beginCall" || operationId === "completeRun")) traceStep("execute_tool", previous, startedAt, context);
  const step = objectOf(body?.step);
  if (!kind || !step) return undefined;
  return traceStep(kind, step, startedAt, context);
}

