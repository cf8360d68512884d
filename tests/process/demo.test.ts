/**
 * The demo agent as its own process against the API and the hosted simulated systems: every
 * scenario leaves the rows and ledger effects it describes.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { makeToken, useTestDatabase } from "../api/api-test-kit";
import { startTestServer, type TestServer } from "../support/http-server";

const getPrisma = useTestDatabase("demo");
let server: TestServer;

beforeAll(async () => {
  resetHostedWorld({ searchLagMs: 50 });
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe("npm run demo", () => {
  it("records the seven scenarios through the API", async () => {
    const prisma = await getPrisma();
    const registry = createSupportToolRegistry(getHostedWorld());
    await syncToolPolicies(prisma, registry);
    const token = await makeToken(registry.list().map((t) => t.name), "support-agent-demo");
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", path.join("scripts", "demo.ts"), "--no-wait"], {
        env: { ...process.env, SAGABOARD_URL: server.url, SAGABOARD_TOKEN: token.secret },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let text = "";
      child.stdout.on("data", (d: Buffer) => (text += d.toString()));
      child.stderr.on("data", (d: Buffer) => (text += d.toString()));
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`demo exited ${code}:\n${text}`))));
    });
    expect(out).toContain("Demo agent done.");
    expect(out).toContain("reconciles first");

    const runs = await prisma.run.findMany({ where: { agent: "support-agent-demo" }, orderBy: { createdAt: "asc" } });
    expect(runs.map((r) => r.status)).toEqual(["UNWOUND", "AWAITING_PIVOT", "COMPLETED", "RUNNING", "NEEDS_ATTENTION", "NEEDS_ATTENTION", "RUNNING"]);
    const { ledger } = getHostedWorld();
    expect(ledger.count({ op: "payments.charge" })).toBe(3); // incident, goodwill upgrade, worker scenario
    expect(ledger.duplicates("payments.charge")).toEqual([]);
    expect(ledger.count({ op: "email.send" })).toBe(2); // only the two approved plan items
    const kinds = (await prisma.escalation.findMany({ where: { run: { agent: "support-agent-demo" } } })).map((e) => e.kind).sort();
    expect(kinds).toEqual(["APPROVAL_REQUIRED", "COMPENSATION_FAILED"]);
    expect(await prisma.correction.count()).toBe(1);
    expect(await prisma.workerTask.count({ where: { kind: "UNWIND", status: "PENDING" } })).toBe(1);
  }, 120_000);
});
