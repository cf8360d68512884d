/**
 * For the process tests: crash points that kill the process for real (SIGKILL) instead of throwing,
 * armed from KILL_AT / KILL_AT_NTH, and a runner for such a process that collects its JSON lines.
 */
import { spawn } from "node:child_process";
import { CrashPoints, type CrashPointName } from "@/packages/client/src/saga/crash-points";

/** Crash points that kill the process for real instead of throwing. */
export class KillingCrashPoints extends CrashPoints {
  override hit(point: CrashPointName): void {
    try {
      super.hit(point);
    } catch {
      process.kill(process.pid, "SIGKILL");
    }
  }
}

/** Killing crash points armed as KILL_AT (a named point) and KILL_AT_NTH (its nth hit, default 1) say. */
export function killingCrashPointsFromEnv(env: NodeJS.ProcessEnv = process.env): KillingCrashPoints {
  const points = new KillingCrashPoints();
  if (env.KILL_AT) points.arm(env.KILL_AT as CrashPointName, Number(env.KILL_AT_NTH ?? "1"));
  return points;
}

/** How a script process ended, and the JSON lines it printed on stdout. */
export interface ScriptExit<T> {
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: T[];
}

/** Runs `script` with tsx and `env`; rejects when it exits non-zero on its own (a kill is an answer). */
export function runScript<T = Record<string, unknown>>(script: string, env: Record<string, string>): Promise<ScriptExit<T>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code !== 0 && signal === null) reject(new Error(`${script} exited ${code}: ${err}`));
      resolve({ code, signal, lines: out.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as T) });
    });
  });
}
