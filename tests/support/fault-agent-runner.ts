/**
 * A long-lived agent process for the crash sweep (tests/faults/crash-sweep.test.ts): it runs one seeded
 * script per command and is SIGKILLed at a named crash point, after which the test starts another.
 * One process per command would cost a tsx start-up (~0.6 s on the CI machine) for every command; a
 * long-lived runner pays it only once per kill, and the test keeps a warm spare so even that is hidden.
 *
 * Env: SAGABOARD_URL, SAGABOARD_TOKEN (agent token), RECHECK_MS (reconcile's re-check pause).
 * stdin, one JSON command a line: {"id", "seed", "cls", "forceUnwind", "runId"?, "killAt"?, "nth"?}
 * stdout, one JSON line per event: {"ready":true}, {"id","run"}, {"id","done": status}, {"id","error"}.
 */
import { createInterface } from "node:readline";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import type { CrashPointName } from "@/packages/client/src/saga/crash-points";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { type RunContext } from "@/packages/client/src/saga/run-context";
import { SagaError, ToolCallFailed, ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import { PivotStatus, RunStatus } from "@/packages/client/src/saga/vocabulary";
import { RemoteWorld } from "@/lib/demo/sim/remote";
import { makeScript, TOOLS_BY_CLASS, type LoggedClass, type ScriptCall } from "./fault-agent";
import { KillingCrashPoints } from "./killing-crash-points";

/** One command. */
export interface RunnerCommand {
  id: number;
  seed: number;
  cls: LoggedClass;
  forceUnwind: boolean;
  runId?: string;
  killAt?: CrashPointName;
  nth?: number;
}

const url = process.env.SAGABOARD_URL!;
const token = process.env.SAGABOARD_TOKEN!;
const store = new HttpSagaStore({ baseUrl: url, token });
const registry = createSupportToolRegistry(new RemoteWorld(url));
const say = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);

async function callLikeAModel(run: RunContext, call: ScriptCall): Promise<"ok" | "failed" | "held"> {
  for (let attempt = 0; ; attempt++) {
    try {
      const out = await run.call(call.tool, call.args(attempt));
      return out.status === "ok" ? "ok" : "held";
    } catch (e) {
      if (e instanceof ToolOutcomeUnknown && attempt < 4) continue;
      if (e instanceof ToolCallFailed) return "failed";
      throw e;
    }
  }
}

async function drive(cmd: RunnerCommand): Promise<string> {
  const crashPoints = new KillingCrashPoints();
  if (cmd.killAt) crashPoints.arm(cmd.killAt, cmd.nth ?? 1);
  const engine = new SagaEngine({ store, registry, crashPoints, recheckAfterMs: Number(process.env.RECHECK_MS ?? "150"), backoffMs: 20 });
  const script = makeScript(cmd.seed, TOOLS_BY_CLASS[cmd.cls], { unwindChance: cmd.forceUnwind ? 1 : 0.5 });
  const run = cmd.runId ? await engine.resume(cmd.runId) : await engine.startRun({ title: `crash sweep ${cmd.cls} ${cmd.seed}`, agent: "fault-agent" });
  say({ id: cmd.id, run: run.runId });
  const status = (await engine.getRun(run.runId)).status;
  if (status === RunStatus.UNWINDING) return (await run.unwind(`resumed unwind of seed ${cmd.seed}`)).status;
  if (status === RunStatus.UNWOUND || status === RunStatus.NEEDS_ATTENTION || status === RunStatus.COMPLETED) return status;

  let failed = false;
  for (const call of script.staging) {
    if ((await callLikeAModel(run, call)) !== "ok") {
      failed = true;
      break;
    }
  }
  if (!failed && script.commit.length > 0) {
    const pivot = await run.requestPivot({ summary: `commit of seed ${cmd.seed}`, plan: script.commit.map((c) => ({ tool: c.tool, args: c.args(0) })) });
    const decided = await run.awaitPivot(pivot.id, { timeoutMs: 30_000 });
    if (decided.status !== PivotStatus.APPROVED) throw new Error(`pivot ${pivot.id} is ${decided.status}`);
    for (const call of script.commit) {
      if ((await callLikeAModel(run, call)) !== "ok") {
        failed = true;
        break;
      }
    }
  }
  if (failed || script.ending === "unwind") return (await run.unwind(`seed ${cmd.seed} ends in an unwind`)).status;
  try {
    return (await run.complete()).status;
  } catch (e) {
    if (e instanceof SagaError) return (await run.unwind(`could not complete: ${e.message}`)).status;
    throw e;
  }
}

// One command at a time: the test waits for an answer before it sends the next.
const queue: RunnerCommand[] = [];
let busy = false;
async function pump(): Promise<void> {
  if (busy) return;
  busy = true;
  while (queue.length > 0) {
    const cmd = queue.shift()!;
    try {
      say({ id: cmd.id, done: await drive(cmd) });
    } catch (e) {
      say({ id: cmd.id, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
    }
  }
  busy = false;
}

createInterface({ input: process.stdin }).on("line", (line) => {
  if (!line.trim()) return;
  queue.push(JSON.parse(line) as RunnerCommand);
  void pump();
});
process.stdin.on("end", () => process.exit(0));
// Warm up (connections, lazily compiled schemas) before saying ready: a spare does this while the
// runner before it works, so the first command after a kill does not pay for it.
await store.getRun("run_warm_up").catch(() => undefined);
await new RemoteWorld(url).ticketing.get("SUP-0").catch(() => undefined);
say({ ready: true });
