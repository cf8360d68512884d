/**
 * The HTTP path: the built app (`next start`) on a throwaway SQLite file, an agent token for the
 * no-op tool, and load loops for the engine over HttpSagaStore, the bare intent+outcome requests and
 * the static route GET /api/health.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { openPrisma } from "@/lib/core/db/prisma";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { needsBuild } from "@/scripts/lib/build";
import { benchRegistry, performance } from "./common";
import { STEPS_PER_RUN, type Round } from "./dispatch";

export interface App {
  url: string;
  secret: string;
  stop: () => void;
}

/** Builds when .next is stale; returns why it built (or null), throws with the log tail on failure. */
export function buildIfStale(): string | null {
  const reason = needsBuild();
  if (!reason) return null;
  console.log(`[bench] building the app (${reason})...`);
  try {
    execFileSync(path.join("node_modules", ".bin", "next"), ["build"], { stdio: "pipe", maxBuffer: 64 * 1024 * 1024 });
  } catch (e) {
    const out = String((e as { stdout?: Buffer }).stdout ?? "") + String((e as { stderr?: Buffer }).stderr ?? "");
    const lines = out.split("\n");
    const at = lines.findIndex((l) => /Build error|Error:/.test(l));
    throw new Error(`next build failed:\n${lines.slice(Math.max(0, at), Math.max(0, at) + 25).join("\n")}`, { cause: e });
  }
  return reason;
}

export async function startApp(databaseUrl: string, port: number): Promise<App> {
  const prisma = await openPrisma(databaseUrl);
  await syncToolPolicies(prisma, benchRegistry());
  const { secret } = await createAgentToken(prisma, { name: `bench-${Date.now().toString(36)}`, tools: ["bench_noop"], createdBy: "system:bench" });
  await prisma.$disconnect();
  // BENCH_PROFILE_DIR=DIR writes a V8 CPU profile of the app's process there when it stops (open it in
  // Chrome's DevTools or speedscope) to see where a request's time goes.
  const profile = process.env.BENCH_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const child: ChildProcess = spawn(process.execPath, [...profile, path.join("node_modules", "next", "dist", "bin", "next"), "start", "-p", String(port)], {
    env: { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: "production" },
    stdio: ["ignore", "ignore", "inherit"],
    detached: true,
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = () => {
    // Our own process group (next start and its children), by id.
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        /* already gone */
      }
    }
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.ok) break;
    } catch {
      /* not up yet */
    }
    if (child.exitCode !== null) throw new Error(`next start exited with ${child.exitCode}`);
    if (Date.now() > deadline) {
      stop();
      throw new Error("the app did not answer /api/health within 60 s");
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, secret, stop };
}

/** `concurrency` loops of GET /api/health, `perLoop` requests each. */
export async function healthLoad(url: string, concurrency: number, perLoop: number): Promise<Round> {
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = 0; i < perLoop; i++) {
        const s = performance.now();
        const res = await fetch(`${url}/api/health`);
        await res.json();
        latencies.push(performance.now() - s);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - t0 };
}

/**
 * `concurrency` agents, each running runs of STEPS_PER_RUN no-op calls through the engine over HTTP.
 * `outcomeLingerMs` 0 (the client's default) sends each outcome in its own request (two per step);
 * pipelining (PIPELINED_LINGER_MS) sends it with the next call (one per step; the last of a run goes
 * alone after the linger).
 */
export const PIPELINED_LINGER_MS = 250;

export async function httpEngineLoad(app: App, concurrency: number, stepsPerAgent: number, outcomeLingerMs?: number): Promise<Round> {
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const store = new HttpSagaStore({ baseUrl: app.url, token: app.secret, ...(outcomeLingerMs === undefined ? {} : { outcomeLingerMs }) });
      const engine = new SagaEngine({ store, registry: benchRegistry() });
      for (let done = 0; done < stepsPerAgent; ) {
        const ctx = await engine.startRun({ title: "bench", agent: "bench" });
        for (let i = 0; i < STEPS_PER_RUN && done < stepsPerAgent; i++, done++) {
          const s = performance.now();
          const out = await ctx.call("bench_noop", { i });
          latencies.push(performance.now() - s);
          if (out.status !== "ok") throw new Error(`HTTP bench step was not ok: ${JSON.stringify(out)}`);
        }
      }
      await store.flush();
    }),
  );
  return { latencies, wallMs: performance.now() - t0 };
}

/** The two requests a logged step needs at least (begin, outcome), straight through the call commands. */
export async function httpBareLoad(app: App, concurrency: number, stepsPerAgent: number): Promise<Round> {
  const latencies: number[] = [];
  const actor = { type: "agent" as const, id: "bench" };
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const store = new HttpSagaStore({ baseUrl: app.url, token: app.secret });
      let runId = "";
      for (let i = 0; i < stepsPerAgent; i++) {
        const idx = i % STEPS_PER_RUN;
        if (idx === 0) runId = (await store.createRun({ id: "x", title: "bench", agent: "bench", onBehalfOf: null, metadata: {} }, { type: "run.started", actor })).id;
        const s = performance.now();
        const args = { i: idx };
        const answer = await store.calls.begin({
          runId, cursor: idx, tool: "bench_noop", args, proposal: { compensation: { tool: "bench_undo", args: {} }, correction: null, audience: ["agent"] }, tryAppend: true, actor,
        });
        if (answer.kind !== "call") throw new Error(`HTTP bench begin was not "call": ${answer.kind}`);
        await store.calls.outcome({ step: answer.step, outcome: { kind: "confirmed", externalRef: null, result: null }, attempts: 1, actor });
        latencies.push(performance.now() - s);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - t0 };
}
