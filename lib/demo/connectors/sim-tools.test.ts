import { describe, expect, it } from "vitest";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import { MemorySagaStore } from "@/packages/client/src/saga/memory-store";
import { World } from "@/lib/demo/sim";
import { createSupportToolRegistry } from "./sim-tools";

describe("support connectors", () => {
  it("a reused idempotency key is an unknown outcome, not a refusal: the reworded retry ends CONFIRMED on the one real charge", async () => {
    // Misconfigured on purpose: the re-check (1 s) is shorter than the provider's search lag (3 s), so
    // reconcile wrongly settles NOT_EXECUTED and the agent's reworded retry reuses the key.
    const clock = new ManualClock();
    const world = new World({ clock, searchLagMs: 3000 });
    const store = new MemorySagaStore(clock);
    const engine = new SagaEngine({ store, registry: createSupportToolRegistry(world), clock, recheckAfterMs: 1000, backoffMs: 10 });
    const run = await engine.startRun({ title: "reworded charge", agent: "agent" });
    world.faults.inject("payments.charge", { kind: "timeout_after_effect" });
    const args = { customerId: "cus_1", amount: 700, currency: "eur", reason: "reship fee" };
    await expect(run.call("charge_card", args)).rejects.toBeInstanceOf(ToolOutcomeUnknown);

    // The provider answers 400 idempotency_key_reused: before, that was recorded FAILED while the charge existed.
    await expect(run.call("charge_card", { ...args, reason: "re-shipping fee for order 3107" })).rejects.toBeInstanceOf(ToolOutcomeUnknown);
    const [step] = await store.listSteps(run.runId);
    expect(step?.status).toBe("UNKNOWN");

    clock.advance(3000); // the charge becomes searchable
    const out = await run.call("charge_card", { ...args, reason: "re-shipping fee for order 3107" });
    expect(out).toMatchObject({ status: "ok", stepIdx: 0, replayed: true });
    const charges = world.ledger.operations().filter((o) => o.op === "payments.charge" && o.outcome === "effect");
    expect(charges).toHaveLength(1);
    expect(out.status === "ok" && out.externalRef).toBe(charges[0]?.ref);
  });
});
