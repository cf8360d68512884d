/**
 * The runs a gateway serves, remembered on disk across restarts: one file per token namespace and
 * real server, listing each client's open runs. A gateway killed mid-call (kill -9, a crash, a
 * reboot) and started again finds the run its client was in, settles what was in flight by key and
 * answers a re-sent call from the log, so the default setup (no `--session`) never sends a write
 * twice and never leaves a run behind. A run is forgotten when its session ends and it is completed.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { UpstreamTarget } from "./upstream";

/** One remembered run. */
interface RememberedRun {
  runId: string;
  client: string;
  since: string;
}

/** The stable name of a real server: its URL, or its command line. */
function upstreamKey(target: UpstreamTarget): string {
  return "transport" in target ? target.name : "url" in target ? target.url : [target.command, ...target.args].join("\u0000");
}

export class RunState {
  private readonly file: string;
  /** Runs a session of this process has taken (never handed to a second one at once). */
  private readonly taken = new Set<string>();

  constructor(dir: string, namespace: string, target: UpstreamTarget) {
    const id = createHash("sha256").update(`${namespace}\u0000${upstreamKey(target)}`).digest("hex").slice(0, 24);
    this.file = path.join(dir, `runs-${id}.json`);
  }

  private read(): RememberedRun[] {
    try {
      const parsed = JSON.parse(readFileSync(this.file, "utf8")) as { runs?: unknown };
      return Array.isArray(parsed.runs) ? parsed.runs.filter((r): r is RememberedRun => typeof (r as RememberedRun)?.runId === "string" && typeof (r as RememberedRun)?.client === "string") : [];
    } catch {
      return [];
    }
  }

  private write(runs: RememberedRun[]): void {
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ runs }, null, 2), { mode: 0o600 });
    renameSync(tmp, this.file); // atomic: a kill -9 mid-write leaves the old file or the new one
  }

  /** The client's remembered runs that no session of this process has taken yet, oldest first. */
  untaken(client: string): string[] {
    return this.read()
      .filter((r) => r.client === client && !this.taken.has(r.runId))
      .map((r) => r.runId);
  }

  /** Marks a run as this session's (remembering it for the next gateway when it is new). */
  take(client: string, runId: string): void {
    this.taken.add(runId);
    const runs = this.read();
    if (!runs.some((r) => r.runId === runId)) this.write([...runs, { runId, client, since: new Date().toISOString() }]);
  }

  /** Lets go of a run a session had taken; `forget` also removes it from the file (it is finished). */
  release(runId: string, forget: boolean): void {
    this.taken.delete(runId);
    if (forget) this.write(this.read().filter((r) => r.runId !== runId));
  }

  /** Whether the run is remembered for this client (a session naming it in `_meta` may join it). */
  belongsTo(client: string, runId: string): boolean {
    return this.read().some((r) => r.runId === runId && r.client === client);
  }
}
