/**
 * One more Sagaboard for the browser tests that need settings the suite's server does not have
 * (single sign-on against an identity provider a test starts): the same production build and
 * database (DATABASE_URL, NEXTAUTH_SECRET as playwright.config.ts set them), `next start` on
 * 127.0.0.1 and a free port with the extra environment. Its host is 127.0.0.1, the suite's is
 * localhost, so the browser keeps their session cookies apart.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";

/** A running instance. */
export interface AppInstance {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** Stops it and waits until it has. */
  stop(): Promise<void>;
}

/** A port nobody listens on now (the instance's address must be known before it starts: NEXTAUTH_URL, the provider's redirect URI). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("could not find a free port");
  return address.port;
}

/** Starts `next start` on `port` with `env` added; resolves once /api/health answers. */
export async function startAppInstance(port: number, env: Record<string, string>): Promise<AppInstance> {
  const baseUrl = `http://127.0.0.1:${port}`;
  const next = path.join(process.cwd(), "node_modules", ".bin", "next");
  const output: string[] = [];
  const child: ChildProcess = spawn(next, ["start", "-p", String(port), "-H", "127.0.0.1"], {
    stdio: ["ignore", "pipe", "pipe"],
    // The sweeps and folds already run in the suite's server; this instance only answers requests.
    env: { ...process.env, NEXTAUTH_URL: baseUrl, SAGABOARD_STUCK_SWEEP_MS: "0", SAGABOARD_OVERVIEW_FOLD_MS: "0", ...env },
  });
  for (const stream of [child.stdout, child.stderr]) stream?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the extra Sagaboard instance exited (${child.exitCode}): ${output.join("").slice(-2000)}`);
    if (await fetch(`${baseUrl}/api/health`).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the extra Sagaboard instance did not answer within 90 s: ${output.join("").slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    baseUrl,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
