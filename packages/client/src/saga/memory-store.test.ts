import { describeSagaStoreContract } from "@/tests/contract/saga-store-contract";
import { describe, expect, it } from "vitest";
import { ManualClock } from "./clock";
import { MemorySagaStore } from "./memory-store";
import { IntentGuardFailed, type NewIntent } from "./store";

describeSagaStoreContract("MemorySagaStore", async () => ({ store: new MemorySagaStore(), cleanup: async () => {} }));

describe("MemorySagaStore run versions under a clock that does not move", () => {
  it("a run changed twice in one millisecond refuses an intent guarded on the version read before", async () => {
    const store = new MemorySagaStore(new ManualClock());
    const audit = { type: "t", actor: { type: "agent" as const, id: "a" } };
    const run = await store.createRun({ id: "run_1", title: "t", agent: "a", onBehalfOf: null, metadata: {} }, audit);
    const moved = await store.setRunStatus(run.id, ["RUNNING"], "UNWINDING", audit);
    const back = await store.setRunStatus(run.id, ["UNWINDING"], "RUNNING", audit);
    expect(moved!.updatedAt.getTime()).toBe(run.updatedAt.getTime() + 1);
    expect(back!.updatedAt.getTime()).toBe(run.updatedAt.getTime() + 2);
    const intent: NewIntent = {
      id: "stp_1", runId: run.id, stepIdx: 0, tool: "charge_card", toolClass: "COMPENSATABLE", stepKey: "k", args: {}, argsHash: "h",
      phase: "STAGING", policyVersion: 1, approvalId: null, planItemIdx: null, compensation: null, compensationKey: null, correction: null, audience: [],
    };
    await expect(store.insertIntent(intent, audit, { runStatus: ["RUNNING"], runUpdatedAt: run.updatedAt })).rejects.toBeInstanceOf(IntentGuardFailed);
    expect((await store.insertIntent(intent, audit, { runStatus: ["RUNNING"], runUpdatedAt: back!.updatedAt })).created).toBe(true);
  });
});
