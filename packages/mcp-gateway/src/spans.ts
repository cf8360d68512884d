/**
 * The gateway's own span per forwarded `tools/call`, as the OpenTelemetry MCP semantic conventions
 * name a server's span: `tools/call <tool>`, kind SERVER, `mcp.method.name`, `gen_ai.tool.name`,
 * `gen_ai.operation.name` (plus the session's run, `sagaboard.run.id`). It is a child of the
 * client's `_meta.traceparent` (a new trace without one), and the traceparent the gateway sends
 * Sagaboard for the call is this span's, so the server's `execute_tool` span nests under it:
 * client -> gateway -> Sagaboard.
 *
 * Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set in the
 * gateway's process: then the client's traceparent is forwarded as it is, as before.
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { activeTracer, contextOf, traceparentOf } from "@sagaboard/client/tracing";
import { isTraceparent } from "@sagaboard/client/wire";

/** What a traced call answers: whether it is an error. */
interface Answer {
  isError?: boolean;
}

/**
 * Runs one `tools/call` of `tool` for run `runId` inside its span while tracing is on; `work` gets
 * the traceparent to send Sagaboard (the span's, or the client's when tracing is off).
 */
export async function inToolCallSpan<T extends Answer>(tool: string, runId: string, clientTraceparent: unknown, work: (traceparent: string | null) => Promise<T>): Promise<T> {
  const parent = isTraceparent(clientTraceparent) ? clientTraceparent : null;
  const tracer = activeTracer();
  if (!tracer) return work(parent);
  const span = tracer.startSpan(
    `tools/call ${tool}`,
    {
      kind: SpanKind.SERVER,
      attributes: { "mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool, "sagaboard.run.id": runId },
    },
    contextOf(parent),
  );
  try {
    const answer = await work(traceparentOf(span.spanContext()));
    if (answer.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: "the call answered an error" });
    return answer;
  } catch (e) {
    span.recordException(e instanceof Error ? e : String(e));
    span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
    throw e;
  } finally {
    span.end();
  }
}
