/**
 * A process that traces (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT from its parent, the tracing test), makes
 * one span and says "ready"; the test then stops it with a signal. With `--own-handler` it handles
 * the signal itself, as the worker and the notifier do, and ends with process.exit after a pause.
 * Its span must reach the receiver either way, though the batch's own schedule is far off.
 */
import { activeTracer } from "@/packages/client/src/protocol/tracing";

process.env.OTEL_BSP_SCHEDULE_DELAY = "60000";
const tracer = activeTracer();
if (!tracer) throw new Error("tracing must be on: set OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
if (process.argv.includes("--own-handler")) {
  process.on("SIGTERM", () => setTimeout(() => process.exit(0), 20));
}
tracer.startSpan(`last words ${process.pid}`).end();
process.stdout.write("ready\n");
setInterval(() => {}, 1000); // stays up until it is told to stop
