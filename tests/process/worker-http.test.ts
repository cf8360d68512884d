/**
 * Worker processes over the HTTP API: an agent asks for an unwind, two worker processes (each with a
 * worker token and the tool connectors) race for the task; the ledger shows one refund and one close.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { ToolCallFailed } from "@/packages/client/src/saga/errors";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { RemoteWorld } from "@/lib/demo/sim/remote";
import { makeToken, useTestDatabase } from "../api/api-test-kit";
import { startTestServer, type TestServer } from "../support/http-server";

const getPrisma = useTestDatabase("worker-http");
const WORKER = path.join(process.cwd(), "scripts", "worker.ts");
let server: TestServer;

beforeAll(async () => {
  resetHostedWorld({ searchLagMs: 50 });
  server = await startTestServer();
});
afterAll(async () => server?.close());

function runWorker(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", WORKER, "--once"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, out }));
  });
}

describe("workers over HTTP", () => {
  it("two worker processes race for one unwind: one refund, one ticket close, task DONE", async () => {
    const prisma = await getPrisma();
    const tools = ["create_ticket", "charge_card", "reship_order"];
    await syncToolPolicies(prisma, createSupportToolRegistry(getHostedWorld()));
    const agentToken = await makeToken(tools, "unwind-agent");
    const { createAgentToken } = await import("@/lib/server/tokens/create-agent-token");
    const worker = await createAgentToken(prisma, { name: "refund-worker", tools, role: "worker", createdBy: "admin@example.com" });

    const remote = new RemoteWorld(server.url);
    const store = new HttpSagaStore({ baseUrl: server.url, token: agentToken.secret });
    const engine = new SagaEngine({ store, registry: createSupportToolRegistry(remote), recheckAfterMs: 200 });
    const run = await engine.startRun({ title: "Reship 1182", agent: "unwind-agent" });
    await run.call("create_ticket", { summary: "Refund for order 1182", orderId: "1182" });
    await run.call("charge_card", { customerId: "cus_ada", amount: 1500, currency: "eur", reason: "reship fee" });
    await remote.faults.inject("warehouse.reship", { kind: "reject", status: 422, code: "out_of_stock" });
    await expect(run.call("reship_order", { orderId: "1182" })).rejects.toBeInstanceOf(ToolCallFailed);
    const task = await store.requestUnwind(run.runId, "the warehouse refused the reship");
    expect(task).toMatchObject({ status: "PENDING", created: true });
    expect(await store.requestUnwind(run.runId, "asked twice")).toMatchObject({ taskId: task.taskId, created: false });

    // An agent token cannot claim.
    const refused = await fetch(`${server.url}/api/v1/worker/claim`, {
      method: "POST",
      headers: { authorization: `Bearer ${agentToken.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ workerId: "sneaky" }),
    });
    expect(refused.status).toBe(403);

    const env = { SAGABOARD_URL: server.url, SAGABOARD_TOKEN: worker.secret };
    const [a, b] = await Promise.all([runWorker({ ...env, SAGABOARD_WORKER_ID: "w-a" }), runWorker({ ...env, SAGABOARD_WORKER_ID: "w-b" })]);
    expect(a.code, a.out).toBe(0);
    expect(b.code, b.out).toBe(0);

    const world = getHostedWorld();
    expect(world.ledger.count({ op: "payments.refund" })).toBe(1);
    expect(world.ledger.count({ op: "ticketing.close" })).toBe(1);
    const row = await prisma.workerTask.findUniqueOrThrow({ where: { id: task.taskId } });
    expect(row.status).toBe("DONE");
    expect(row.attempt).toBe(1);
    expect((await prisma.run.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("UNWOUND");
  }, 60_000);
});
