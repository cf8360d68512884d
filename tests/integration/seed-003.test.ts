/**
 * Seed 003's refund incident, replayed against the simulated systems on every store: the ticket
 * create gets a 504 after success, the "model" retries with reworded args, the card charge succeeds
 * and the process dies before recording, a fresh engine resumes from the log, the warehouse
 * rejects, the run unwinds. The ledgers are the oracle.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CrashPoint, SimulatedCrash, type CrashPointName } from "@/packages/client/src/saga/crash-points";
import { StepStatus } from "@/packages/client/src/saga/vocabulary";
import { refundAndReship } from "../support/support-agent";
import { makeScenario, storeFactories, type Scenario } from "../support/harness";
import { expectChainIntact } from "../support/audit-chain";

/** The ledger facts that must hold after the incident, whatever crashed where. */
function expectIncidentLedger(s: Scenario) {
  const { ledger } = s.world;
  expect(ledger.count({ op: "ticketing.create" })).toBe(1);
  expect(ledger.count({ op: "ticketing.close" })).toBe(1);
  expect(ledger.operations({ op: "ticketing.close", outcome: "not_found" })).toHaveLength(0);
  expect(ledger.count({ op: "payments.charge" })).toBe(1);
  expect(ledger.count({ op: "payments.refund" })).toBe(1);
  expect(ledger.count({ op: "payments.receipt" })).toBe(0);
  expect(ledger.count({ op: "email.send" })).toBe(0);
  expect(ledger.count({ op: "warehouse.reship" })).toBe(0);
  for (const op of ["ticketing.create", "payments.charge", "payments.refund", "ticketing.close"]) {
    expect(ledger.duplicates(op), `duplicate effects for ${op}`).toEqual([]);
  }
  const [ticket] = [...s.world.ledger.effects({ op: "ticketing.create" })];
  const [charge] = [...s.world.ledger.effects({ op: "payments.charge" })];
  return { ticketRef: ticket?.ref, chargeRef: charge?.ref };
}

describe.each(storeFactories)("seed 003 refund incident on $name", (factory) => {
  let scenario: Scenario | undefined;
  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  it("ends with one ticket closed once, one charge refunded once, and no apology", async () => {
    const s = (scenario = await makeScenario(factory.make));
    s.world.faults.inject("ticketing.create", { kind: "timeout_after_effect" });
    s.world.faults.inject("payments.charge", { kind: "crash_after_effect" });
    s.world.faults.inject("warehouse.reship", { kind: "reject", status: 422, code: "out_of_stock" });

    const first = await s.engine().startRun({ title: "Refund and reship order 1182", agent: "support-agent", onBehalfOf: "cus_ada" });
    await expect(refundAndReship(first)).rejects.toBeInstanceOf(SimulatedCrash);

    // The worker died after the charge: the log, not a transcript, says what is known.
    const afterCrash = await s.store.listSteps(first.runId);
    expect(afterCrash.map((r) => [r.tool, r.status])).toEqual([
      ["create_ticket", StepStatus.CONFIRMED],
      ["charge_card", StepStatus.INTENDED],
    ]);
    // The reworded retry reconciled onto the first call: the row keeps what was actually sent.
    expect(afterCrash[0]?.args).toEqual({ summary: "Refund for order 1182", orderId: "1182" });

    const resumed = await s.engine().resume(first.runId);
    expect(await refundAndReship(resumed)).toBe("failed");
    const report = await resumed.unwind("warehouse rejected the reship");
    expect(report).toMatchObject({ status: "UNWOUND", compensated: [1, 0], skipped: [2], corrections: [] });

    const { ticketRef, chargeRef } = expectIncidentLedger(s);
    const rows = await s.store.listSteps(first.runId);
    expect(rows.map((r) => [r.tool, r.status, r.externalRef])).toEqual([
      ["create_ticket", StepStatus.COMPENSATED, ticketRef],
      ["charge_card", StepStatus.COMPENSATED, chargeRef],
      ["reship_order", StepStatus.FAILED, null],
    ]);
    expect(rows[1]?.audience).toEqual(["finance"]);
    expect(rows.every((r) => r.compensationState !== "REQUESTED")).toBe(true);
    expect(await s.store.listCorrections(first.runId)).toEqual([]);
    expect((await s.store.getRun(first.runId))?.status).toBe("UNWOUND");
    expect(await s.engine().irreversibleBeforePivot(first.runId)).toBe(0);
    expect((await s.world.ticketing.get(ticketRef!))?.status).toBe("closed");
    expect((await s.world.payments.getPaymentIntent(chargeRef!))?.amountRefunded).toBe(1500);
    expect((await expectChainIntact(s.store, first.runId)).length).toBeGreaterThan(8);
  });

  const crashes: { point: CrashPointName; nth: number }[] = [
    { point: CrashPoint.AFTER_INTENT, nth: 1 },
    { point: CrashPoint.AFTER_INTENT, nth: 2 },
    { point: CrashPoint.AFTER_INTENT, nth: 3 },
    { point: CrashPoint.AFTER_EFFECT, nth: 1 },
    { point: CrashPoint.DURING_RECONCILE, nth: 1 },
    { point: CrashPoint.MID_COMPENSATION, nth: 1 },
    { point: CrashPoint.MID_COMPENSATION, nth: 2 },
    { point: CrashPoint.MID_UNWIND, nth: 1 },
    { point: CrashPoint.MID_UNWIND, nth: 2 },
  ];

  it.each(crashes)("crash at $point (hit $nth) is resumed with no duplicate and no lost intent", async ({ point, nth }) => {
    const s = (scenario = await makeScenario(factory.make));
    s.world.faults.inject("ticketing.create", { kind: "timeout_after_effect" });
    s.world.faults.inject("warehouse.reship", { kind: "reject", status: 422, code: "out_of_stock" });
    s.crashPoints.arm(point, nth);

    const runId = (await s.engine().startRun({ title: "Refund and reship order 1182", agent: "support-agent" })).runId;
    let crashes = 0;
    // Each pass is a fresh process: resume from the log, replay the agent, unwind when it failed.
    for (let pass = 0; pass < 5; pass++) {
      try {
        const run = await s.engine().resume(runId);
        const status = (await s.store.getRun(runId))?.status;
        if (status === "RUNNING" && (await refundAndReship(run)) === "done") throw new Error("the reship should fail");
        await s.engine().unwind(runId, { type: "system", id: "test" }, "warehouse rejected the reship");
        break;
      } catch (e) {
        if (!(e instanceof SimulatedCrash)) throw e;
        crashes++;
      }
    }
    expect(crashes, `crash point ${point} should have fired`).toBe(1);

    expectIncidentLedger(s);
    const rows = await s.store.listSteps(runId);
    expect(rows.filter((r) => r.status === "INTENDED" || r.status === "UNKNOWN")).toEqual([]);
    expect(rows.map((r) => [r.tool, r.status])).toEqual([
      ["create_ticket", StepStatus.COMPENSATED],
      ["charge_card", StepStatus.COMPENSATED],
      ["reship_order", StepStatus.FAILED],
    ]);
    expect((await s.store.getRun(runId))?.status).toBe("UNWOUND");
    await expectChainIntact(s.store, runId);
  });
});
