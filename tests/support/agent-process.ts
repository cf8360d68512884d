/**
 * An agent as its own OS process, for the process tests: the support agent's refund run through the
 * HTTP client, with the simulated systems reached over HTTP. Env:
 *   SAGABOARD_URL, SAGABOARD_TOKEN   where and who
 *   RUN_ID                           resume this run instead of starting one
 *   KILL_AT, KILL_AT_NTH             SIGKILL this process at that named crash point (nth hit)
 * Prints one JSON line per event on stdout: {"run": id}, {"done": status}.
 */
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { RemoteWorld } from "@/lib/demo/sim/remote";
import { refundAndReship } from "./support-agent";
import { killingCrashPointsFromEnv } from "./killing-crash-points";


const url = process.env.SAGABOARD_URL!;
const token = process.env.SAGABOARD_TOKEN!;
const crashPoints = killingCrashPointsFromEnv();

const world = new RemoteWorld(url);
const engine = new SagaEngine({
  store: new HttpSagaStore({ baseUrl: url, token }),
  registry: createSupportToolRegistry(world),
  crashPoints,
  recheckAfterMs: Number(process.env.RECHECK_MS ?? "500"),
  backoffMs: 50,
});

const run = process.env.RUN_ID ? await engine.resume(process.env.RUN_ID) : await engine.startRun({ title: "Refund and reship order 1182", agent: "support-agent" });
console.log(JSON.stringify({ run: run.runId }));
const outcome = await refundAndReship(run);
if (outcome === "done") await run.complete();
else await run.unwind("the warehouse refused the reship");
console.log(JSON.stringify({ done: outcome }));
