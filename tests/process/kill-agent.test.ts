/**
 * Real processes: the agent is SIGKILLed after the provider's effect and before the outcome is
 * recorded; a new agent process resumes the run through the API; the ledger shows one effect.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { CrashPoint } from "@/packages/client/src/saga/crash-points";
import { getHostedWorld, resetHostedWorld } from "@/lib/demo/sim/host";
import { makeToken, useTestDatabase } from "../api/api-test-kit";
import { startTestServer, type TestServer } from "../support/http-server";
import { runScript } from "../support/killing-crash-points";

const getPrisma = useTestDatabase("kill-agent");
const AGENT = path.join(process.cwd(), "tests", "support", "agent-process.ts");
let server: TestServer;

beforeAll(async () => {
  resetHostedWorld({ searchLagMs: 100 });
  server = await startTestServer();
});
afterAll(async () => server?.close());

function runAgent(env: Record<string, string>) {
  return runScript<Record<string, string>>(AGENT, env);
}

describe("an agent process killed between the effect and its record", () => {
  it("is resumed by a new process with exactly one charge in the ledger", async () => {
    const prisma = await getPrisma();
    await syncToolPolicies(prisma, createSupportToolRegistry(getHostedWorld()));
    const token = await makeToken(["search_orders", "create_ticket", "charge_card", "reship_order"], "support-agent-proc");
    const env = { SAGABOARD_URL: server.url, SAGABOARD_TOKEN: token.secret };

    // Hit 1 is create_ticket's effect, hit 2 the card charge: the process dies right after Stripe said yes.
    const first = await runAgent({ ...env, KILL_AT: CrashPoint.AFTER_EFFECT, KILL_AT_NTH: "2" });
    expect(first.signal).toBe("SIGKILL");
    const runId = first.lines.find((l) => l.run)?.run;
    expect(runId).toMatch(/^run_/);
    const world = getHostedWorld();
    expect(world.ledger.count({ op: "payments.charge" })).toBe(1);
    const charge = await prisma.step.findFirstOrThrow({ where: { runId, tool: "charge_card" } });
    expect(charge.status).toBe("INTENDED"); // the log says exactly what is not known

    const second = await runAgent({ ...env, RUN_ID: runId! });
    expect(second.code).toBe(0);
    expect(second.lines.at(-1)).toEqual({ done: "done" });

    expect(world.ledger.count({ op: "payments.charge" })).toBe(1);
    expect(world.ledger.count({ op: "ticketing.create" })).toBe(1);
    expect(world.ledger.count({ op: "warehouse.reship" })).toBe(1);
    const rows = await prisma.step.findMany({ where: { runId }, orderBy: { stepIdx: "asc" } });
    expect(rows.map((r) => [r.tool, r.status])).toEqual([
      ["create_ticket", "CONFIRMED"],
      ["charge_card", "CONFIRMED"],
      ["reship_order", "CONFIRMED"],
    ]);
    expect((await prisma.run.findUniqueOrThrow({ where: { id: runId } })).status).toBe("COMPLETED");
  }, 60_000);
});
