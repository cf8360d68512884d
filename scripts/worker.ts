/**
 * `npm run worker`: a worker process. It claims unwind / reconcile / compensate tasks for the support
 * tools it has connectors for, runs them through the saga engine over DATABASE_URL's database, and
 * says in plain words what it claims and does.
 *
 * Environment:
 * - SAGABOARD_WORKER_ID: the worker's name in the task table and the audit log (default worker-<pid>);
 * - SAGABOARD_URL + SAGABOARD_TOKEN: work through a Sagaboard server's API with a worker token (the
 *   production shape: tool credentials live with the worker); without them, DATABASE_URL directly;
 * - SAGABOARD_SIM_URL: the server whose hosted simulated systems the connectors call (defaults to
 *   SAGABOARD_URL); without either the connectors use an in-process simulated world;
 * - SAGABOARD_WORKER_POLL_MS (1000), SAGABOARD_WORKER_LEASE_MS (30000), SAGABOARD_WORKER_MAX_TASKS (4);
 * - SAGABOARD_STUCK_AFTER_PIVOT_MS (900000, 15 min): an approved run whose agent is silent this long
 *   is raised as STUCK_AFTER_PIVOT (by workers beside the database; over HTTP the sweep is not run);
 * - OTEL_EXPORTER_OTLP_ENDPOINT: each task is a `worker_task <kind>` span in the run's trace.
 * `--once` runs one round and exits.
 *
 * SIGINT / SIGTERM: the tasks in hand run to their end and are settled, then the process exits. A
 * second signal exits at once; tasks still claimed go to another worker when their leases expire.
 */
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { openPrisma } from "@/lib/core/db/prisma";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import type { PrismaClient } from "@/generated/prisma";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { HttpTaskQueue } from "@/packages/client/src/agent/client/http-task-queue";
import type { SagaStore } from "@/packages/client/src/saga/store";
import type { SagaServer } from "@/packages/client/src/saga/agent-port";
import { World } from "@/lib/demo/sim";
import { RemoteWorld, type WorldLike } from "@/lib/demo/sim/remote";
import { prismaTaskQueue } from "@/lib/server/worker/queue";
import { stuckAfterPivotMs, stuckRunSweeper } from "@/lib/server/worker/sweep-stuck-runs";
import { Worker } from "@/packages/client/src/agent/worker";
import { type TaskQueue } from "@/packages/client/src/protocol/tasks/task";
import { createLogger, logSink } from "@/lib/core/observability/log";
import { sagaSpans } from "@/lib/core/observability/saga-spans";
import { stopTracingWithin } from "@/packages/client/src/protocol/tracing";
import { traceWorkerTask } from "@/packages/client/src/agent/worker-spans";

const workerId = process.env.SAGABOARD_WORKER_ID?.trim() || `worker-${process.pid}`;
const logger = createLogger("worker").child({ workerId });
const log = logSink(logger);

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    logger.fatal(`${name} must be a whole number of at least ${min} (got "${raw}").`);
    process.exit(2);
  }
  return value;
}

const simUrl = process.env.SAGABOARD_SIM_URL?.trim();
const once = process.argv.includes("--once");
const pollMs = intFromEnv("SAGABOARD_WORKER_POLL_MS", 1_000, 10);
const leaseMs = intFromEnv("SAGABOARD_WORKER_LEASE_MS", 30_000, 300);
const maxTasks = intFromEnv("SAGABOARD_WORKER_MAX_TASKS", 4, 1);

const url = process.env.SAGABOARD_URL?.trim();
const token = process.env.SAGABOARD_TOKEN?.trim();

let world: WorldLike;
if (url || simUrl) {
  // The connectors call the simulated systems hosted by the Sagaboard server, like real providers.
  world = new RemoteWorld((simUrl || url)!);
  log(`${workerId}: the tool connectors call the simulated systems hosted at ${simUrl || url}.`);
} else {
  world = new World({ searchLagMs: 300 });
  log(
    `${workerId}: the tool connectors call an in-process simulated world, which starts empty: effects recorded by ` +
      "other processes are not in it, so their compensations will not find them. Set SAGABOARD_URL (and a worker " +
      "SAGABOARD_TOKEN) to work through a Sagaboard server and its hosted simulated systems.",
  );
}

const registry = createSupportToolRegistry(world);
let queue: TaskQueue;
let store: SagaStore | SagaServer;
let localStore: SagaStore | null = null;
let prisma: PrismaClient | null = null;
if (url) {
  if (!token) {
    logger.fatal("SAGABOARD_URL is set but SAGABOARD_TOKEN is not: create a worker token with `npm run token -- create --role worker --name NAME --tools a,b`.");
    process.exit(2);
  }
  // Over HTTP: the worker holds the tool credentials and a worker token; the server enforces policy.
  store = new HttpSagaStore({ baseUrl: url, token });
  queue = new HttpTaskQueue({ baseUrl: url, token });
  log(`${workerId}: claims tasks from ${url} with its worker token.`);
} else {
  // Beside the app: one client for the saga store and the task queue (two SQLite connections in one
  // process can deadlock).
  prisma = await openPrisma();
  store = localStore = new PrismaSagaStore(prisma);
  queue = prismaTaskQueue(prisma);
}
// Beside the database the engine decides in process: its calls, reconciles, compensations and raises
// are spans of this process (OTEL_EXPORTER_OTLP_ENDPOINT); over HTTP they are the server's.
const engine = new SagaEngine({ store, registry, recheckAfterMs: 600, backoffMs: 100, ...(prisma ? { observer: sagaSpans(prisma) } : {}) });
const tools = registry.list().map((t) => t.name);
// Beside the database, the worker also raises approved runs gone quiet (SAGABOARD_STUCK_AFTER_PIVOT_MS).
let stuckAfterMs: number;
try {
  stuckAfterMs = stuckAfterPivotMs();
} catch (e) {
  logger.fatal(e instanceof Error ? e.message : String(e));
  process.exit(2);
}
const stuckRuns = prisma && localStore ? stuckRunSweeper({ prisma, store: localStore, workerId, stuckAfterMs, log }) : undefined;
const worker = new Worker({ queue, engine, workerId, tools, pollMs, leaseMs, maxTasks, stuckRuns, log, traceTask: traceWorkerTask });

function totals(): string {
  const s = worker.stats;
  return (
    `${workerId}: claimed ${s.claimed} task(s): ${s.done} done, ${s.failed} failed, ${s.retried} handed back for another attempt, ` +
    `${s.superseded} superseded by another worker, ${s.unsettled} not recorded.`
  );
}

async function shutdown(code: number): Promise<never> {
  logger.info({ stats: worker.stats }, totals());
  await prisma?.$disconnect();
  await stopTracingWithin(); // the last tasks' spans (a signal's flush is already under way: this waits for it)
  process.exit(code);
}

if (once) {
  try {
    const outcomes = await worker.runOnce();
    if (outcomes.length === 0) log(`${workerId}: nothing to do: no claimable task needs only these tools (${tools.join(", ")}).`);
  } catch (e) {
    logger.error(`${workerId}: the round failed: ${e instanceof Error ? e.message : String(e)}`);
    await shutdown(1);
  }
  await shutdown(0);
}

let signalled = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (signalled) {
      log(`${workerId}: ${signal} again: exiting now; tasks still claimed go to another worker when their leases expire.`);
      process.exit(130);
    }
    signalled = true;
    log(`${workerId}: ${signal}: finishing the tasks in hand, then stopping (send it again to exit at once).`);
    void worker.stop().then(() => shutdown(0));
  });
}

log(`${workerId}: started; tools: ${tools.join(", ")}.`);
worker.start();
