/**
 * Committing an approved plan (`RunContext.commitPlan`, `beginPlanItem`): each item's step is found by
 * the pivot and its place in the plan, so the process that waited, a fresh process that never replayed
 * the earlier steps and a second committer all end with one effect per item.
 */
import { describe, expect, it } from "vitest";
import { beginPlanItem, recordOutcome } from "./calls";
import { SagaError, ToolCallFailed, ToolOutcomeUnknown } from "./errors";
import { stepKey } from "./keys";
import type { SagaEngine } from "./engine";
import { setup, rejection, stepAt } from "./testkit";

const reviewer = { type: "user" as const, id: "rita@example.com" };
const agent = { type: "agent" as const, id: "agent-1" };
type Run = Awaited<ReturnType<SagaEngine["startRun"]>>;

const EMAIL = { text: "Your refund of 20 EUR is on its way" };
const CHARGE = { text: "charge", amount: 20 };

/** Stages a draft and a ticket, then proposes a charge and an email as the plan. */
async function stageAndPropose(run: Run) {
  await run.call("stage_draft", { text: "draft" });
  await run.call("create_ticket", { text: "staged" });
  return run.requestPivot({ summary: "Charge 20 EUR and tell the customer", plan: [{ tool: "charge_card", args: CHARGE }, { tool: "send_email", args: EMAIL }] });
}

function code(e: unknown): string | null {
  return e instanceof SagaError ? e.code : null;
}

describe("commitPlan", () => {
  it("commits the approved plan in the process that waited: items in plan order after the staged steps, then COMPLETED", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });

    const result = await run.commitPlan(pivot.id);
    expect(result.status).toBe("committed");
    if (result.status !== "committed") return;
    expect(result.run.status).toBe("COMPLETED");
    expect(result.items.map((i) => [i.index, i.tool, i.outcome.stepIdx, i.outcome.replayed])).toEqual([
      [0, "charge_card", 2, false],
      [1, "send_email", 3, false],
    ]);
    const steps = await store.listSteps(run.runId);
    expect(steps.map((s) => [s.tool, s.phase, s.approvalId, s.planItemIdx, s.status])).toEqual([
      ["stage_draft", "STAGING", null, null, "CONFIRMED"],
      ["create_ticket", "STAGING", null, null, "CONFIRMED"],
      ["charge_card", "COMMIT", pivot.id, 0, "CONFIRMED"],
      ["send_email", "COMMIT", pivot.id, 1, "CONFIRMED"],
    ]);
    expect(sys.effectCount(stepKey(run.runId, 2, "charge_card"))).toBe(1);
    expect(sys.effectCount(stepKey(run.runId, 3, "send_email"))).toBe(1);
  });

  it("a fresh process commits without replaying the earlier steps (the demo's determinism trap), one effect per item", async () => {
    const { sys, engine, restart, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });

    // The old way: a resumed context calls only the plan's items and meets the staged step at index 0.
    const resumed = await restart().resume(run.runId);
    expect(code(await rejection(resumed.call("charge_card", CHARGE)))).toBe("DETERMINISM");

    const fresh = await restart().resume(run.runId);
    const result = await fresh.commitPlan(pivot.id);
    expect(result).toMatchObject({ status: "committed", run: { status: "COMPLETED" } });
    expect(sys.callsOf("charge_card")).toBe(1);
    expect(sys.callsOf("send_email")).toBe(1);
    expect(sys.effects.filter((e) => e.tool === "send_email")).toHaveLength(1);
  });

  it("whoever commits second replays what is done and runs only what is not (a crash after the first item's effect)", async () => {
    const { sys, store, engine, restart, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });

    // The first committer dies after the charge happened, before recording it.
    sys.modes.push("crash-after");
    await expect(run.commitPlan(pivot.id)).rejects.toThrow(/crash/i);
    expect((await stepAt(store, run.runId, 2)).status).toBe("INTENDED");

    // A second committer (a worker, a fresh agent): reconcile finds the charge, the email runs once.
    const second = await restart().resume(run.runId);
    const result = await second.commitPlan(pivot.id);
    expect(result.status).toBe("committed");
    if (result.status !== "committed") return;
    expect(result.items.map((i) => i.outcome.replayed)).toEqual([true, false]);
    expect(sys.effectCount(stepKey(run.runId, 2, "charge_card"))).toBe(1);
    expect(sys.effectCount(stepKey(run.runId, 3, "send_email"))).toBe(1);

    // A third committer after completion changes nothing and says so.
    const third = await restart().resume(run.runId);
    expect(await third.commitPlan(pivot.id)).toMatchObject({ status: "already_committed", pivotId: pivot.id });
    expect(sys.effects).toHaveLength(4);
    expect(await store.listSteps(run.runId)).toHaveLength(4);
  });

  it("a timed-out item is UNKNOWN; committing again reconciles it by key before anything else", async () => {
    const { sys, engine, restart, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    sys.modes.push("ok", "timeout-after");
    expect(await rejection(run.commitPlan(pivot.id))).toBeInstanceOf(ToolOutcomeUnknown);

    const again = await restart().resume(run.runId);
    expect(await again.commitPlan(pivot.id)).toMatchObject({ status: "committed" });
    expect(sys.callsOf("send_email")).toBe(1);
    expect(sys.effectCount(stepKey(run.runId, 3, "send_email"))).toBe(1);
  });

  it("an unsettled staged step is reconciled with its own tool before the plan runs", async () => {
    const { sys, store, engine, restart, start } = setup();
    const run = await start();
    await run.call("stage_draft", { text: "draft" });
    sys.modes.push("timeout-before");
    await rejection(run.call("create_ticket", { text: "staged" }));
    // A person settles nothing; the pivot is requested and approved anyway (the reviewer saw the unknown step).
    const pivot = await store.createPivot(
      { id: "piv_manual", runId: run.runId, summary: "s", plan: [{ tool: "send_email", args: EMAIL, argsHash: (await import("./keys")).argsHash(EMAIL), policyVersion: 1, toolClass: "IRREVERSIBLE" }], planHash: "h", stagedStepIds: [], deadline: null },
      { type: "pivot.requested", actor: agent, data: {} },
    );
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: "h" });
    const result = await (await restart().resume(run.runId)).commitPlan(pivot.id);
    expect(result.status).toBe("committed");
    expect((await stepAt(store, run.runId, 1)).status).toBe("NOT_EXECUTED");
    expect(sys.callsOf("create_ticket")).toBe(1); // looked up, never called again
    expect(sys.callsOf("send_email")).toBe(1);
  });

  it("refuses pending, rejected and superseded pivots, and a plan item sent with other arguments, writing nothing", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    expect(code(await rejection(run.commitPlan(pivot.id)))).toBe("PIVOT_NOT_APPROVED");

    await engine.decidePivot(pivot.id, { approve: false, actor: reviewer, planHash: pivot.planHash, reason: "wrong amount" });
    const rejected = await rejection(run.commitPlan(pivot.id));
    expect(code(rejected)).toBe("PIVOT_NOT_APPROVED");
    expect((rejected as Error).message).toContain("wrong amount");

    const second = await run.requestPivot({ summary: "Charge 10 EUR", plan: [{ tool: "charge_card", args: { text: "charge", amount: 10 } }] });
    await engine.decidePivot(second.id, { approve: true, actor: reviewer, planHash: second.planHash });
    expect(code(await rejection(run.commitPlan(pivot.id)))).toBe("PIVOT_NOT_APPROVED"); // superseded

    const deps = { store, ids: { next: (p: string) => `${p}_x` } };
    const tool = { name: "charge_card", class: "COMPENSATABLE" as const, compensator: "refund", policyVersion: 1 };
    const proposal = { compensation: { tool: "refund", args: { text: "charge" } }, correction: null, audience: [] };
    const mismatch = await rejection(beginPlanItem(deps, { runId: run.runId, tool, args: { text: "charge", amount: 999 }, proposal, actor: agent, planItem: { pivotId: second.id, index: 0 } }));
    expect(code(mismatch)).toBe("PLAN_ITEM_MISMATCH");
    const outside = await rejection(beginPlanItem(deps, { runId: run.runId, tool, args: { text: "charge", amount: 10 }, proposal, actor: agent, planItem: { pivotId: second.id, index: 3 } }));
    expect(code(outside)).toBe("INVALID_ARGS");
    expect(await store.listSteps(run.runId)).toHaveLength(2);
    expect(sys.callsOf("charge_card")).toBe(0);
  });

  it("refuses a plan item before the earlier ones are done (PLAN_ORDER), and stops at a failed item for a person", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    const deps = { store, ids: { next: (p: string) => `${p}_y` } };
    const email = { name: "send_email", class: "IRREVERSIBLE" as const, compensator: null, policyVersion: 1 };
    const early = await rejection(beginPlanItem(deps, { runId: run.runId, tool: email, args: EMAIL, proposal: { compensation: null, correction: null, audience: [] }, actor: agent, planItem: { pivotId: pivot.id, index: 1 } }));
    expect(code(early)).toBe("PLAN_ORDER");

    sys.modes.push("reject");
    expect(await rejection(run.commitPlan(pivot.id))).toBeInstanceOf(ToolCallFailed);
    const stuck = (await store.listEscalations({ runId: run.runId })).filter((e) => e.kind === "STUCK_AFTER_PIVOT");
    expect(stuck).toHaveLength(1);
    expect(await rejection(run.commitPlan(pivot.id))).toBeInstanceOf(ToolCallFailed); // the recorded refusal again, nothing later runs
    expect(sys.callsOf("charge_card")).toBe(1);
    expect(sys.callsOf("send_email")).toBe(0);
  });

  it("a plan item whose tool's policy changed since the approval is held (POLICY_CHANGED), nothing after it runs", async () => {
    const { sys, registry, engine, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    registry.tool("send_email").policyVersion = 2;
    const result = await run.commitPlan(pivot.id);
    expect(result).toMatchObject({ status: "held", index: 1, outcome: { reason: "POLICY_CHANGED" } });
    expect(sys.callsOf("charge_card")).toBe(1);
    expect(sys.callsOf("send_email")).toBe(0);
  });
});

describe("outcome reports that contradict the log", () => {
  it("a confirmation with another externalRef is OUTCOME_CONFLICT; the same report again is accepted", async () => {
    const { store, start } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "t" });
    const step = await stepAt(store, run.runId, 0);
    const deps = { store, ids: { next: (p: string) => `${p}_z` } };
    const same = await recordOutcome(deps, { stepId: step.id, outcome: { kind: "confirmed", externalRef: step.externalRef, result: step.result }, attempts: 1, actor: agent });
    expect(same.status).toBe("CONFIRMED");
    const other = await rejection(recordOutcome(deps, { stepId: step.id, outcome: { kind: "confirmed", externalRef: "SOMETHING-ELSE", result: {} }, attempts: 1, actor: agent }));
    expect(code(other)).toBe("OUTCOME_CONFLICT");
    const refused = await rejection(recordOutcome(deps, { stepId: step.id, outcome: { kind: "failed", reason: "declined", message: "no", retryable: false }, attempts: 1, actor: agent }));
    expect(code(refused)).toBe("OUTCOME_CONFLICT");
    expect((await stepAt(store, run.runId, 0)).externalRef).toBe(step.externalRef);
  });
});
