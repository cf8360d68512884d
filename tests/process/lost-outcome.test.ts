/**
 * No outcome is lost when an agent process ends badly right after a confirmed call: by default the
 * outcome is durable before `call()` returns; with pipelining opted in, the ending process sends what
 * it holds (an uncaught throw, an unhandled rejection, process.exit(), SIGTERM). Proved on real
 * processes against the app's HTTP API and the simulated ticketing system's ledger: the step is
 * CONFIRMED in the log and the ledger holds one effect for its key.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { makeToken, useTestDatabase } from "../api/api-test-kit";
import { startTestServer, type TestServer } from "../support/http-server";

const getPrisma = useTestDatabase("lost-outcome");
const AGENT = path.join(process.cwd(), "tests", "support", "exiting-agent.ts");
let server: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  resetHostedWorld({ searchLagMs: 0 });
  server = await startTestServer();
  const prisma = await getPrisma();
  await syncToolPolicies(prisma, createSupportToolRegistry(getHostedWorld()));
  const token = await makeToken(["create_ticket"], "exiting-agent");
  env = { SAGABOARD_URL: server.url, SAGABOARD_TOKEN: token.secret };
});
afterAll(async () => server?.close());

/** Runs the agent to its end; its exit code or signal and the run it printed. */
function runAgent(extra: Record<string, string>): Promise<{ code: number | null; signal: NodeJS.Signals | null; runId: string | undefined }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", AGENT], { env: { ...process.env, ...env, ...extra }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      const line = out.split("\n").find((l) => l.startsWith('{"run"'));
      resolve({ code, signal, runId: line ? (JSON.parse(line) as { run: string }).run : undefined });
    });
  });
}

const CASES: Array<{ end: string; linger?: string; exit: { code?: number; signal?: NodeJS.Signals } }> = [
  { end: "throw", exit: { code: 1 } },
  { end: "exit", exit: { code: 3 } },
  { end: "throw", linger: "60000", exit: { code: 1 } },
  { end: "reject", linger: "60000", exit: { code: 1 } },
  { end: "exit", linger: "60000", exit: { code: 3 } },
  { end: "sigterm", linger: "60000", exit: { signal: "SIGTERM" } },
];

describe("an agent process that ends 10 ms after a confirmed call", () => {
  for (const c of CASES) {
    it(`${c.end}, ${c.linger ? `pipelining on (outcomeLingerMs ${c.linger})` : "the client's default"}: the step is CONFIRMED and the ticket exists once`, async () => {
      const ended = await runAgent({ END: c.end, ...(c.linger ? { LINGER_MS: c.linger } : {}) });
      expect(ended.runId).toMatch(/^run_/);
      // It ended the way the program asked: the flush does not swallow the throw, the code or the signal.
      if (c.exit.signal) expect(ended.signal).toBe(c.exit.signal);
      else expect(ended.code).toBe(c.exit.code);
      const prisma = await getPrisma();
      const [step, ...more] = await prisma.step.findMany({ where: { runId: ended.runId } });
      expect(more).toHaveLength(0);
      expect(step).toMatchObject({ tool: "create_ticket", status: "CONFIRMED" });
      expect(getHostedWorld().ledger.count({ key: step!.stepKey })).toBe(1);
    }, 60_000);
  }
});
