/**
 * `@sagaboard/client/tracing`: OpenTelemetry spans for a team's worker (`traceWorkerTask`, a `Worker`'s
 * `tracer`) and the helpers that carry W3C trace context into them. Needs the `@opentelemetry/*` packages
 * (optional peers): the root export loads none of them.
 */
export { traceWorkerTask } from "./agent/worker-spans";
export { activeTracer, contextOf, traceparentOf, startTracing, stopTracing, tracingOn } from "./protocol/tracing";
