/**
 * Runs one script in `count` Node processes and releases them at the same moment: each prints
 * "ready" once it has connected, the test writes "go" to all of them when every one is ready, and
 * each prints its JSON answer as its last line. For races that only real processes can lose (two
 * claims of one task, two intents of one step, on one database).
 */
import { spawn } from "node:child_process";

/** Each process's last output line, parsed; a process that exits non-zero (before or after "ready") fails the lot. */
export async function releasedTogether<T>(what: string, script: string, argsOf: (i: number) => string[], count: number): Promise<T[]> {
  const processes = Array.from({ length: count }, (_, i) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, ...argsOf(i)], { cwd: process.cwd() });
    let out = "";
    let err = "";
    let markReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.startsWith("ready\n")) markReady();
    });
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const done = new Promise<T>((resolve, reject) => {
      child.on("error", reject);
      child.on("exit", (code) => {
        if (code !== 0) return reject(new Error(`${what} ${i} exited with ${code}: ${err}`));
        resolve(JSON.parse(out.trim().split("\n").at(-1) ?? "null") as T);
      });
    });
    return { child, ready, done };
  });
  try {
    // A process that dies before "ready" fails the race instead of leaving the others waiting.
    await Promise.race([Promise.all(processes.map((p) => p.ready)), Promise.all(processes.map((p) => p.done))]);
    for (const p of processes) p.child.stdin.write("go\n");
    return await Promise.all(processes.map((p) => p.done));
  } catch (e) {
    for (const p of processes) if (p.child.exitCode === null) p.child.kill();
    throw e;
  }
}
