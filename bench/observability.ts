/**
 * `npx tsx bench/observability.ts`: what the agent API's observability hook (lib/core/observability/
 * agent-requests.ts) adds to one request, measured on its own because the HTTP path's run-to-run
 * spread on a shared machine (±20%) hides it: the hook with tracing off, and on (spans made and
 * batched to an exporter that drops them, so the figure is the span's cost in the request, not
 * the network's). Median of 5 rounds of 20,000 answers each, in microseconds per request.
 * `--db URL` also times a scrape's reads (lib/core/observability/saga-metrics.ts) on that database, e.g.
 * one `npm run bench:dashboard -- --keep` left behind (median of 5 scrapes).
 */
import type { ExportResult } from "@opentelemetry/core";
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace";
import { openPrisma } from "@/lib/core/db/prisma";
import { observeAgentRequest } from "@/lib/core/observability/agent-requests";
import { sagaMetricFamilies } from "@/lib/core/observability/saga-metrics";
import { startTracing, stopTracing, tracingOn } from "@/packages/client/src/protocol/tracing";
import type { Json } from "@/packages/client/src/saga/tools";

const N = 20_000;
const ROUNDS = 5;
const request = new Request("http://localhost/api/v1/steps/stp_1/outcome", { method: "POST", headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" } });
const step: Json = { id: "stp_1", runId: "run_1", stepIdx: 3, tool: "charge_card", toolClass: "COMPENSATABLE", stepKey: "9f2c".repeat(8), status: "CONFIRMED", phase: "STAGING", attempts: 1, createdAt: new Date().toISOString() };
const answer = { status: 200, body: { step, nextCursor: 4 } as Json };
let exported = 0;
const dropping: SpanExporter = {
  export: (spans: ReadableSpan[], done: (r: ExportResult) => void) => {
    exported += spans.length;
    done({ code: 0 });
  },
  shutdown: async () => {},
};

async function round(operation: string): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < N; i++) await observeAgentRequest(operation, request, async () => answer);
  return ((performance.now() - started) * 1000) / N;
}

async function median(operation: string): Promise<number> {
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await round(operation));
  return rounds.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
}

const bare = async () => {
  const started = performance.now();
  for (let i = 0; i < N; i++) await (async () => answer)();
  return ((performance.now() - started) * 1000) / N;
};

delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
if (tracingOn()) throw new Error("tracing must start off");
await round("warmUp"); // both loops compiled before either is timed
await bare();
const bareRounds: number[] = [];
for (let i = 0; i < ROUNDS; i++) bareRounds.push(await bare());
const none = bareRounds.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
const off = await median("reportOutcome");
startTracing({ processor: new BatchSpanProcessor({ exporter: dropping, maxQueueSize: 65_536, maxExportBatchSize: 4096, scheduledDelayMillis: 50 }) });
const on = await median("reportOutcome");
await stopTracing();
console.log(`answer without the hook   ${none.toFixed(2)} µs/request`);
console.log(`hook, tracing off         ${off.toFixed(2)} µs/request`);
console.log(`hook, tracing on          ${on.toFixed(2)} µs/request (a span each: ${exported} exported)`);

const db = process.argv.includes("--db") ? process.argv[process.argv.indexOf("--db") + 1] : undefined;
if (db) {
  const prisma = await openPrisma(db);
  const [steps, runs] = [await prisma.step.count(), await prisma.run.count()];
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await sagaMetricFamilies(prisma);
    times.push(performance.now() - started);
  }
  await prisma.$disconnect();
  console.log(`a scrape's reads            ${times.sort((a, b) => a - b)[2]!.toFixed(1)} ms (median of 5; ${runs} runs, ${steps} steps)`);
}
