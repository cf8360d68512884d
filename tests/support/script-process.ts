/**
 * One of our scripts (scripts/demo.ts, scripts/worker.ts) in its own OS process, as `npm start` runs
 * it: its output kept, a way to wait for a line, and its exit.
 */
import { spawn, type ChildProcess } from "node:child_process";

/** A running script. */
export interface ScriptProcess {
  /** The process (kill it to play a crash). */
  child: ChildProcess;
  /** Resolves with the exit code and everything it printed. */
  exit: Promise<{ code: number | null; out: string }>;
  /** Resolves with the first match of `pattern` in the output; rejects when the process exits first or time runs out. */
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<RegExpMatchArray>;
}

/** Starts `script` (a path) with `args` under tsx, with the test's environment plus `env`. */
export function launchScript(script: string, args: string[], env: Record<string, string>): ScriptProcess {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exit = new Promise<{ code: number | null; out: string }>((resolve) => child.on("exit", (code) => resolve({ code, out })));
  return {
    child,
    exit,
    async waitFor(pattern, timeoutMs = 90_000) {
      const regex = typeof pattern === "string" ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")) : pattern;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = out.match(regex);
        if (match) return match;
        if (child.exitCode !== null) throw new Error(`${script} exited (${child.exitCode}) before printing ${regex}:\n${out}`);
        if (Date.now() > deadline) throw new Error(`${script} printed no ${regex} within ${timeoutMs} ms:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}
