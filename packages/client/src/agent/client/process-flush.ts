/**
 * A process that ends sends the outcomes it still holds (outcome-pipeline.ts, when pipelining is on):
 * - the event loop runs dry (`beforeExit`): every waiting outcome is sent, which keeps the process
 *   alive until the answers come (once: a server that is away does not keep the process alive);
 * - SIGTERM or SIGINT: the same, then the signal's default (the process ends by that signal) unless
 *   the program listens for it itself;
 * - `process.exit()` or an uncaught throw (`exit`, where nothing asynchronous runs any more): the
 *   requests are handed to a short-lived child process, and this one waits for it (`spawnSync`), at
 *   most EXIT_FLUSH_MS. The token goes to the child on its stdin, never on its command line.
 * An outcome that still does not arrive is a step in flight: the server's sweep of silent steps gives
 * it to a worker, which looks it up by its key.
 */
import { spawnSync } from "node:child_process";

/** One outcome's request, as another process can send it. */
export interface ExitRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** How long an ending process waits for its outcomes to be sent by the child (ms). */
export const EXIT_FLUSH_MS = 10_000;

/** The child: reads the requests on stdin, sends them one by one, prints how many were answered. */
const CHILD = `
let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", async () => {
  let answered = 0;
  for (const r of JSON.parse(input)) {
    try {
      const res = await fetch(r.url, { method: "POST", headers: r.headers, body: r.body, signal: AbortSignal.timeout(${EXIT_FLUSH_MS}) });
      if (res.status < 500) answered++;
    } catch {}
  }
  process.stdout.write(String(answered));
});`;

let watching = false;
/** What the hooks ask of the process's pipelines (outcome-pipeline.ts). */
interface Pipelines {
  /** Sends every waiting outcome and waits for the answers. */
  flushProcess: () => Promise<void>;
  /** The outcomes not yet answered, as requests. */
  unansweredRequests: () => ExitRequest[];
}
let pipelines: Pipelines | null = null;

/** Registers the process hooks once, the first time an outcome is held (the pipeline module passes itself). */
export function watchPipelines(of: Pipelines): void {
  pipelines = of;
  if (watching) return;
  watching = true;
  // Once per change: when a flush got nothing through (the server is away), the next empty loop lets
  // the process end (the exit hook below makes the last try), instead of trying again forever.
  let unsentBefore = 0;
  process.on("beforeExit", () => {
    const unsent = pipelines?.unansweredRequests().length ?? 0;
    if (unsent === 0 || unsent === unsentBefore) return;
    unsentBefore = unsent;
    void pipelines!.flushProcess().catch(() => undefined);
  });
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    const onSignal = (): void => {
      const done = (): void => {
        // Ours was the only listener: the process ends by the signal, as it would have without us.
        if (process.listenerCount(signal) === 1) {
          process.removeListener(signal, onSignal);
          process.kill(process.pid, signal);
        }
      };
      const flushing = pipelines ? pipelines.flushProcess().catch(() => undefined) : Promise.resolve();
      const timeout = new Promise((resolve) => setTimeout(resolve, EXIT_FLUSH_MS).unref());
      void Promise.race([flushing, timeout]).then(done);
    };
    process.on(signal, onSignal);
  }
  process.on("exit", () => {
    const requests = pipelines?.unansweredRequests() ?? [];
    if (requests.length > 0) sendFromChild(requests);
  });
}

/** Sends `requests` from a child process and waits for it: the only way left once `exit` is emitted. */
export function sendFromChild(requests: ExitRequest[]): number {
  const child = spawnSync(process.execPath, ["-e", CHILD], {
    input: JSON.stringify(requests),
    timeout: EXIT_FLUSH_MS,
    stdio: ["pipe", "pipe", "ignore"],
    // The child needs none of the parent's loaders (a TypeScript loader would only slow it down).
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  return Number(child.stdout?.toString() || 0);
}
