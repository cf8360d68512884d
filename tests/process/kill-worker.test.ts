/**
 * Real processes: a revoke's worker is SIGKILLed after the refund and before its outcome is recorded;
 * the next worker process takes the task over when the lease expires, reads the payment back before
 * sending anything, and records the compensation. The ledger shows exactly one refund.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireUser, runWithSessionReader } from "@/lib/server/auth/current-user";
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { pullStepRevoke } from "@/lib/desks/revokes/pull-revoke";
import { CrashPoint } from "@/packages/client/src/saga/crash-points";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { RemoteWorld } from "@/lib/demo/sim/remote";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { createUser } from "@/lib/server/users/create-user";
import { makeToken, useTestDatabase } from "../api/api-test-kit";
import { startTestServer, type TestServer } from "../support/http-server";
import { runScript } from "../support/killing-crash-points";

const getPrisma = useTestDatabase("kill-worker");
const WORKER = path.join(process.cwd(), "tests", "support", "worker-process.ts");
const LEASE_MS = 1500;
let server: TestServer;

beforeAll(async () => {
  resetHostedWorld({ searchLagMs: 100 });
  server = await startTestServer();
});
afterAll(async () => server?.close());

function runWorker(env: Record<string, string>) {
  return runScript<Record<string, unknown>>(WORKER, env);
}

describe("a worker process killed between a revoke's refund and its record", () => {
  it("is taken over by the next worker, which reads the refund back: exactly one refund in the ledger", async () => {
    const prisma = await getPrisma();
    await syncToolPolicies(prisma, createSupportToolRegistry(getHostedWorld()));
    const agentToken = await makeToken(["charge_card"], "charging-agent-proc");
    const agent = new SagaEngine({ store: new HttpSagaStore({ baseUrl: server.url, token: agentToken.secret }), registry: createSupportToolRegistry(new RemoteWorld(server.url)) });
    const run = await agent.startRun({ title: "Charge then regret", agent: "charging-agent-proc" });
    expect(await run.call("charge_card", { customerId: "cus_bo", amount: 2500, currency: "eur", reason: "reship fee" })).toMatchObject({ status: "ok" });
    await run.complete();
    const charge = await prisma.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } });

    const reviewer = await createUser(prisma, { email: "rita-proc@example.com", name: "Rita", role: "reviewer", password: "correct horse battery", by: { type: "system", id: "test" } });
    const pulled = await runWithSessionReader(async () => reviewer.id, async () => pullStepRevoke({ actor: await requireUser("read"), stepId: charge.id, reason: "charged the wrong customer" }));
    expect(pulled).toMatchObject({ created: true, revoke: { kind: "COMPENSATE", outcome: "requested" } });

    const { secret } = await createAgentToken(prisma, { name: "refund-worker-proc", tools: ["charge_card"], role: "worker", createdBy: "system:test" });
    const env = { SAGABOARD_URL: server.url, SAGABOARD_TOKEN: secret, SAGABOARD_WORKER_LEASE_MS: String(LEASE_MS) };
    const world = getHostedWorld();
    const refunds = () => world.ledger.count({ op: "payments.refund", outcome: "effect" });

    // Killed right after the refund call returned: nothing recorded its outcome.
    const first = await runWorker({ ...env, KILL_AT: CrashPoint.MID_COMPENSATION });
    expect(first.signal).toBe("SIGKILL");
    expect(refunds()).toBe(1);
    expect(await prisma.step.findUniqueOrThrow({ where: { id: charge.id } })).toMatchObject({ status: "CONFIRMED", compensationState: "REQUESTED" });

    // The next worker takes the task over once the lease expired, and reads the payment back first.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 300));
    const second = await runWorker(env);
    expect(second.code).toBe(0);
    expect(second.lines).toEqual([expect.objectContaining({ outcome: "done", attempt: 2 })]);
    expect(refunds()).toBe(1);
    expect(await prisma.step.findUniqueOrThrow({ where: { id: charge.id } })).toMatchObject({ status: "COMPENSATED", compensationState: "CONFIRMED" });
    const events = await prisma.auditEvent.findMany({ where: { runId: run.runId, type: "compensation.confirmed" } });
    expect(events.map((e) => (e.data as { how?: string }).how)).toEqual(["verified after resume"]);
  }, 60_000);
});
