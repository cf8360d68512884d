/**
 * `npx tsx bench/tracing-route.ts [--steps 1000] [--rounds 5] [--modes off,on,scoped]`: what tracing costs a logged call on
 * the agent API's own path, the route handlers in process (authentication, the saga log's two
 * commits, the observability hook), without the socket and Next's server, whose spread on a shared
 * machine hides it. An HttpSagaStore agent sending its traceparent runs `--steps` no-op calls a
 * round on a throwaway SQLite database, in three modes, each in its own process and interleaved
 * (off, on, on + scoped, off, ...), median ms per step over the rounds:
 * - off: no OTLP endpoint (the hook times the request, nothing more);
 * - on: tracing on, spans batched to an exporter that drops them (the span's cost, not the network's);
 * - on + scoped: also an AsyncLocalStorage scope entered once before, as after a person's first
 *   decision in a tracing server (packages/client/src/protocol/trace-scope.ts): on Node 20 every promise of
 *   the process is then tracked.
 */
import { spawnSync } from "node:child_process";
import type { ExportResult } from "@opentelemetry/core";
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace";
import { flag, hasFlag, performance, throwaway } from "./lib/common";

const MODES = ["off", "on", "scoped"] as const;
type Mode = (typeof MODES)[number];
const STEPS = flag("steps", 1000);
const ROUNDS = flag("rounds", 5);
const AGENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/** An exporter that counts and drops what it is given. */
const dropping: SpanExporter = {
  export: (_spans: ReadableSpan[], done: (r: ExportResult) => void) => done({ code: 0 }),
  shutdown: async () => {},
};

/** A fetch over the three route handlers a logged call uses (create the run, begin a call, report its outcome). */
async function routeFetch(): Promise<typeof fetch> {
  const runs = await import("@/app/api/v1/runs/route");
  const calls = await import("@/app/api/v1/runs/[runId]/calls/route");
  const outcome = await import("@/app/api/v1/steps/[stepId]/outcome/route");
  const routes: [RegExp, string, (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>][] = [
    [/^\/api\/v1\/runs$/, "", runs.POST],
    [/^\/api\/v1\/runs\/([^/]+)\/calls$/, "runId", calls.POST],
    [/^\/api\/v1\/steps\/([^/]+)\/outcome$/, "stepId", outcome.POST],
  ];
  return async (input, init) => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    for (const [pattern, param, handler] of routes) {
      const m = pattern.exec(path);
      if (m && request.method === "POST") return handler(request, { params: Promise.resolve(param ? { [param]: m[1]! } : {}) });
    }
    throw new Error(`the bench serves no ${request.method} ${path}: a logged call asked for more than it did when this bench was written`);
  };
}

/** One process: `mode`'s rounds, each the median ms per step of `STEPS` calls. */
async function measure(mode: Mode): Promise<number[]> {
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const db = await throwaway("sqlite", "tracing-route");
  process.env.DATABASE_URL = db.url;
  try {
    const { getPrisma } = await import("@/lib/core/db/prisma");
    const { syncToolPolicies } = await import("@/lib/server/tools/sync-tool-policies");
    const { createAgentToken } = await import("@/lib/server/tokens/create-agent-token");
    const { HttpSagaStore } = await import("@/packages/client/src/agent/client/http-store");
    const { SagaEngine } = await import("@/packages/client/src/saga/engine");
    const { startTracing } = await import("@/packages/client/src/protocol/tracing");
    const { benchRegistry } = await import("./lib/common");
    const prisma = await getPrisma();
    await syncToolPolicies(prisma, benchRegistry(), "system:bench");
    const { secret } = await createAgentToken(prisma, { name: "bench-agent", tools: ["bench_noop"], createdBy: "bench" });
    if (mode !== "off") startTracing({ processor: new BatchSpanProcessor({ exporter: dropping, maxQueueSize: 65_536, maxExportBatchSize: 4096, scheduledDelayMillis: 50 }) });
    if (mode === "scoped") (await import("@/packages/client/src/protocol/trace-scope")).withTraceparent(AGENT, () => undefined);
    const store = new HttpSagaStore({ baseUrl: "http://sagaboard.bench", token: secret, fetch: await routeFetch(), traceparent: () => AGENT });
    const engine = new SagaEngine({ store, registry: benchRegistry() });
    const round = async (steps: number): Promise<number> => {
      const latencies: number[] = [];
      for (let done = 0; done < steps; ) {
        const run = await engine.startRun({ title: "bench", agent: "bench" });
        for (let i = 0; i < 10 && done < steps; i++, done++) {
          const started = performance.now();
          const out = await run.call("bench_noop", { i });
          latencies.push(performance.now() - started);
          if (out.status !== "ok") throw new Error(`a bench call was not ok: ${JSON.stringify(out)}`);
        }
      }
      await store.flush(); // each run's last outcome waits for a next call that never comes: send it inside the round
      return latencies.sort((a, b) => a - b)[Math.floor(latencies.length / 2)]!;
    };
    await round(Math.min(200, STEPS)); // compiled and warm before anything is timed
    const medians: number[] = [];
    for (let r = 0; r < ROUNDS; r++) medians.push(await round(STEPS));
    await prisma.$disconnect();
    return medians;
  } finally {
    await db.drop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

if (hasFlag("mode")) {
  const mode = process.argv[process.argv.indexOf("--mode") + 1] as Mode;
  if (!MODES.includes(mode)) throw new Error(`--mode is one of ${MODES.join(", ")}`);
  process.stdout.write(`${JSON.stringify(await measure(mode))}\n`);
} else {
  const asked = hasFlag("modes") ? process.argv[process.argv.indexOf("--modes") + 1]!.split(",") : [...MODES];
  const unknown = asked.filter((m) => !MODES.includes(m as Mode));
  if (unknown.length > 0) throw new Error(`--modes takes ${MODES.join(", ")}; not ${unknown.join(", ")}`);
  const modes = asked as Mode[];
  const results: Record<Mode, number[]> = { off: [], on: [], scoped: [] };
  for (let pass = 0; pass < 3; pass++) {
    for (const mode of modes) {
      const child = spawnSync(process.execPath, ["--import", "tsx", "bench/tracing-route.ts", "--mode", mode, "--steps", String(STEPS), "--rounds", String(ROUNDS)], { encoding: "utf8", env: process.env });
      if (child.status !== 0) throw new Error(`the ${mode} process failed: ${child.stderr}`);
      results[mode].push(...(JSON.parse(child.stdout.trim().split("\n").at(-1)!) as number[]));
    }
  }
  const off = median(results.off);
  console.log(`agent API in process, ${STEPS} logged calls a round, ${ROUNDS} rounds a process, 3 processes a mode (interleaved): median ms per call`);
  for (const mode of modes) {
    const m = median(results[mode]);
    const range = `${Math.min(...results[mode]).toFixed(3)}–${Math.max(...results[mode]).toFixed(3)}`;
    console.log(`${mode.padEnd(8)} ${m.toFixed(3)} ms (${range})  ${mode === "off" ? "" : `${(((m - off) / off) * 100).toFixed(1)}% vs off`}`);
  }
}
