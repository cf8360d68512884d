/**
 * DBOS Transact (dev dependency @dbos-inc/dbos-sdk) on the same PostgreSQL: one workflow per run,
 * one `DBOS.runStep` no-op per step. DBOS keeps its own schema in the database it is pointed at.
 */
import { DBOS } from "@dbos-inc/dbos-sdk";
import { performance } from "./common";
import { STEPS_PER_RUN, type Round } from "./dispatch";

let sink: number[] = [];

const noopStep = async (): Promise<null> => null;

const benchWorkflow = DBOS.registerWorkflow(
  async (steps: number): Promise<number> => {
    for (let i = 0; i < steps; i++) {
      const s = performance.now();
      await DBOS.runStep(noopStep, { name: "noop" });
      sink.push(performance.now() - s);
    }
    return steps;
  },
  { name: "sagaboard_bench_workflow" },
);

export async function launchDbos(url: string, poolSize = 20): Promise<void> {
  DBOS.setConfig({ name: "sagaboard-bench", systemDatabaseUrl: url, systemDatabasePoolSize: poolSize, logLevel: "error" });
  await DBOS.launch();
}

export async function shutdownDbos(): Promise<void> {
  await DBOS.shutdown();
}

/** Runs of STEPS_PER_RUN steps, one after another; only the steps are timed. */
export async function dbosRound(steps: number): Promise<Round> {
  sink = [];
  const t0 = performance.now();
  for (let done = 0; done < steps; done += STEPS_PER_RUN) {
    await benchWorkflow(Math.min(STEPS_PER_RUN, steps - done));
  }
  return { latencies: sink, wallMs: performance.now() - t0 };
}

/** `runs` concurrent workflows of `stepsPerRun` steps (workflow start included in the wall time). */
export async function dbosConcurrent(runs: number, stepsPerRun: number): Promise<Round> {
  sink = [];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: runs }, () => benchWorkflow(stepsPerRun)));
  return { latencies: sink, wallMs: performance.now() - t0 };
}
