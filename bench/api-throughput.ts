/**
 * Intent + outcome through the HTTP API: the two requests every logged tool call costs an agent.
 * Runs against a running Sagaboard (SAGABOARD_URL) sharing DATABASE_URL's file (to mint a token and
 * the tool row). Prints requests/s and per-step latency percentiles for 1 and 8 concurrent runs,
 * next to GET /api/health (the framework's floor) measured in the same process.
 *   SAGABOARD_URL=http://127.0.0.1:3000 npx tsx bench/api-throughput.ts [steps-per-run]
 */
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { HttpSagaStore } from "@/lib/client/http-store";
import { openPrisma } from "@/lib/db/prisma";
import { argsHash, compensationKey, stepKey } from "@/lib/saga/keys";
import { defineCompensator, defineTool, ToolRegistry } from "@/lib/saga/tools";
import { syncToolPolicies } from "@/lib/harness/policy";
import { createAgentToken } from "@/lib/tokens/create-agent-token";

const url = process.env.SAGABOARD_URL ?? "http://127.0.0.1:3000";
const stepsPerRun = Number(process.argv[2] ?? "200");

const noop = defineTool({
  name: "bench_noop",
  class: "COMPENSATABLE",
  args: z.object({ i: z.number() }),
  call: async () => ({ externalRef: null, result: null }),
  lookup: async () => null,
  compensation: { with: "bench_undo", build: () => ({}) },
  audience: () => ["agent"],
});
const undo = defineCompensator({ name: "bench_undo", args: z.object({}), run: async () => ({}), verify: async () => ({ done: true }) });

const prisma = await openPrisma();
await syncToolPolicies(prisma, new ToolRegistry([noop], [undo]));
const { secret } = await createAgentToken(prisma, { name: `bench-${Date.now().toString(36)}`, tools: ["bench_noop"], createdBy: "system:bench" });
await prisma.$disconnect();

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function oneRun(store: HttpSagaStore, latencies: number[]): Promise<void> {
  const run = await store.createRun({ id: "x", title: "bench", agent: "bench", onBehalfOf: null, metadata: {} }, { type: "run.started", actor: { type: "agent", id: "bench" } });
  for (let i = 0; i < stepsPerRun; i++) {
    const t0 = performance.now();
    const args = { i };
    const { step } = await store.insertIntent(
      {
        id: `stp_b${i}${Math.random().toString(36).slice(2, 8)}`,
        runId: run.id, stepIdx: i, tool: "bench_noop", toolClass: "COMPENSATABLE", stepKey: stepKey(run.id, i, "bench_noop"),
        args, argsHash: argsHash(args), phase: "STAGING", policyVersion: 1, approvalId: null, planItemIdx: null,
        compensation: { tool: "bench_undo", args: {} }, compensationKey: compensationKey(run.id, i, "bench_noop"), correction: null, audience: ["agent"],
      },
      { type: "step.intended", actor: { type: "agent", id: "bench" } },
    );
    await store.updateStep(step.id, { status: ["INTENDED"] }, { status: "CONFIRMED", externalRef: null, result: null, attempts: 1 }, { type: "step.confirmed", actor: { type: "agent", id: "bench" } });
    latencies.push(performance.now() - t0);
  }
}

async function measure(concurrency: number) {
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => oneRun(new HttpSagaStore({ baseUrl: url, token: secret }), latencies)));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { concurrency, steps: latencies.length, stepsPerSec: latencies.length / seconds, requestsPerSec: (2 * latencies.length) / seconds, p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) };
}

async function floor(n: number) {
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await (await fetch(`${url}/api/health`)).json();
    lat.push(performance.now() - t0);
  }
  lat.sort((a, b) => a - b);
  return { p50: percentile(lat, 50), p95: percentile(lat, 95) };
}

const health = await floor(500);
console.log(`static route GET /api/health: p50 ${health.p50.toFixed(2)} ms, p95 ${health.p95.toFixed(2)} ms`);
for (const c of [1, 8]) {
  const r = await measure(c);
  console.log(
    `intent+outcome, ${c} concurrent run(s), ${r.steps} steps: ${r.stepsPerSec.toFixed(0)} steps/s = ${r.requestsPerSec.toFixed(0)} requests/s; ` +
      `per step p50 ${r.p50.toFixed(2)} ms, p95 ${r.p95.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms (${(r.p50 / (2 * health.p50)).toFixed(2)}x two static round trips)`,
  );
}
