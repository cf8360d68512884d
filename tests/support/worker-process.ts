/**
 * A worker as its own OS process, for the process tests: one round of claimed tasks over the API
 * with a worker token, the connectors calling the server's hosted simulated systems. Env:
 *   SAGABOARD_URL, SAGABOARD_TOKEN   where and who
 *   SAGABOARD_WORKER_LEASE_MS        its lease (short, so a killed worker's task is taken over soon)
 *   KILL_AT, KILL_AT_NTH             SIGKILL this process at that named crash point (nth hit)
 * Prints one JSON line per task outcome on stdout.
 */
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { HttpTaskQueue } from "@/packages/client/src/agent/client/http-task-queue";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { RemoteWorld } from "@/lib/demo/sim/remote";
import { Worker } from "@/packages/client/src/agent/worker";
import { killingCrashPointsFromEnv } from "./killing-crash-points";


const url = process.env.SAGABOARD_URL!;
const token = process.env.SAGABOARD_TOKEN!;
const crashPoints = killingCrashPointsFromEnv();

const registry = createSupportToolRegistry(new RemoteWorld(url));
const engine = new SagaEngine({ store: new HttpSagaStore({ baseUrl: url, token }), registry, crashPoints, recheckAfterMs: 200, backoffMs: 20 });
const worker = new Worker({
  queue: new HttpTaskQueue({ baseUrl: url, token }),
  engine,
  workerId: `proc-worker-${process.pid}`,
  tools: registry.list().map((t) => t.name),
  leaseMs: Number(process.env.SAGABOARD_WORKER_LEASE_MS ?? "30000"),
});
for (const outcome of await worker.runOnce()) console.log(JSON.stringify(outcome));
