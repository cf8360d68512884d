import { describe, expect, it } from "vitest";
import { SagaEngine } from "./engine";
import { SagaError, ToolCallFailed } from "./errors";
import { argsHash, planHash, stepKey } from "./keys";
import { irreversibleBeforePivot } from "./metrics";
import { type StepRecord } from "./store";
import { defineTool, type Json, type ToolCallContext, type ToolDefinition } from "./tools";
import { ToolClass } from "./vocabulary";
import { ZFakeArgs, FakeArgs, FakeSystem, setup, rejection, stepAt } from "./testkit";

const reviewer = { type: "user" as const, id: "rita@example.com" };
type Run = Awaited<ReturnType<SagaEngine["startRun"]>>;

const EMAIL = { text: "Your refund of 20 EUR is on its way" };
const CHARGE = { text: "charge", amount: 20 };

/** Stages a ticket, then proposes a pivot whose plan is a charge and an email. */
async function stageAndPropose(run: Run) {
  await run.call("create_ticket", { text: "staged" });
  return run.requestPivot({ summary: "Charge 20 EUR and tell the customer", plan: [{ tool: "charge_card", args: CHARGE }, { tool: "send_email", args: EMAIL }] });
}

/** Tools whose compensation builder throws, or builds arguments the compensator refuses. */
function badBuilders(sys: FakeSystem): ToolDefinition[] {
  const side = (name: string) => ({
    name,
    class: ToolClass.COMPENSATABLE,
    args: ZFakeArgs,
    call: (a: FakeArgs, ctx: ToolCallContext) => sys.call(name, a, ctx),
    lookup: (key: string) => sys.lookup(key),
  });
  return [
    defineTool({
      ...side("throwing_build"),
      compensation: {
        with: "undo",
        build: (): Json => {
          throw new Error("cannot build");
        },
      },
    }),
    defineTool({ ...side("invalid_build"), compensation: { with: "undo", build: (): Json => ({ notAStepKey: 1 }) } }),
  ] as ToolDefinition[];
}

describe("gate before the pivot", () => {
  it("holds an IRREVERSIBLE call: approval_required IRREVERSIBLE with an escalation, no effect, no row", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    const out = await run.call("send_email", EMAIL);

    expect(out).toMatchObject({ status: "approval_required", reason: "IRREVERSIBLE", pivotId: null });
    const escalationId = out.status === "approval_required" ? out.escalationId : null;
    expect(escalationId).toEqual(expect.stringMatching(/^esc_/));
    expect(sys.calls).toEqual([]);
    expect(sys.effects).toEqual([]);
    expect(await store.listSteps(run.runId)).toEqual([]);
    const escalation = await store.getEscalation(escalationId!);
    expect(escalation).toMatchObject({
      kind: "APPROVAL_REQUIRED",
      status: "OPEN",
      stepId: null,
      detail: { tool: "send_email", toolClass: "IRREVERSIBLE", args: EMAIL, reason: "IRREVERSIBLE" },
    });

    // Asking again does not raise a second escalation.
    const again = await run.call("send_email", EMAIL);
    expect(again).toMatchObject({ status: "approval_required", reason: "IRREVERSIBLE", escalationId });
    expect(await store.listEscalations({ runId: run.runId })).toHaveLength(1);
    expect(sys.calls).toEqual([]);
    // Holding did not use a step index.
    expect(await run.call("create_ticket", { text: "t" })).toMatchObject({ status: "ok", stepIdx: 0 });
  });

  it("an approved held call runs exactly once, in phase APPROVED_HOLD; a repeat needs a new approval", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    const held = await run.call("send_email", EMAIL);
    const escalationId = (held as { escalationId: string }).escalationId;

    const resolved = await engine.decideHeldCall(escalationId, { approve: true, actor: reviewer, note: "ok to send" });
    expect(resolved).toMatchObject({ status: "RESOLVED", resolvedBy: reviewer.id, resolution: { approved: true } });

    const out = await run.call("send_email", EMAIL);
    const key = stepKey(run.runId, 0, "send_email");
    expect(out).toMatchObject({ status: "ok", stepIdx: 0, stepKey: key, replayed: false });
    expect(sys.effectCount(key)).toBe(1);
    expect(await stepAt(store, run.runId, 0)).toMatchObject({
      status: "CONFIRMED",
      toolClass: "IRREVERSIBLE",
      phase: "APPROVED_HOLD",
      approvalId: escalationId,
      planItemIdx: null,
      correction: { audience: ["customer"], subject: "Correction" },
    });

    const repeat = await run.call("send_email", EMAIL);
    expect(repeat).toMatchObject({ status: "approval_required", reason: "APPROVAL_USED", escalationId });
    expect((repeat as { message: string }).message).toContain("already used");
    expect(sys.effects).toHaveLength(1);
    expect(await store.listSteps(run.runId)).toHaveLength(1);
    expect(await engine.irreversibleBeforePivot(run.runId)).toBe(0);

    // Deciding it again is refused.
    expect(await rejection(engine.decideHeldCall(escalationId, { approve: true, actor: reviewer }))).toMatchObject({ code: "ESCALATION_CONFLICT" });
  });

  it("a rejected held call never runs", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    const held = await run.call("send_email", EMAIL);
    await engine.decideHeldCall((held as { escalationId: string }).escalationId, { approve: false, actor: reviewer, note: "wrong customer" });
    const out = await run.call("send_email", EMAIL);
    expect(out).toMatchObject({ status: "approval_required", reason: "REJECTED" });
    expect((out as { message: string }).message).toContain(reviewer.id);
    expect(sys.calls).toEqual([]);
    expect(await store.listSteps(run.runId)).toEqual([]);
  });

  it("a call whose compensation cannot be built (builder returns null) is held: COMPENSATION_UNBUILDABLE", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    const out = await run.call("hold_funds", { text: "hold", amount: 5000 });
    expect(out).toMatchObject({ status: "approval_required", reason: "COMPENSATION_UNBUILDABLE", escalationId: expect.stringMatching(/^esc_/) });
    expect(sys.calls).toEqual([]);
    expect(await store.listSteps(run.runId)).toEqual([]);
    const [escalation] = await store.listEscalations({ runId: run.runId });
    expect(escalation).toMatchObject({ kind: "APPROVAL_REQUIRED", detail: { tool: "hold_funds", toolClass: "COMPENSATABLE", reason: "COMPENSATION_UNBUILDABLE" } });

    // The same tool with a buildable release stages freely.
    const small = await run.call("hold_funds", { text: "hold", amount: 500 });
    expect(small).toMatchObject({ status: "ok", stepIdx: 0 });
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ phase: "STAGING", approvalId: null, compensation: { tool: "undo" } });
    expect(sys.effects).toHaveLength(1);
  });

  it("a builder that throws, or builds arguments the compensator's schema refuses, is unbuildable too", async () => {
    const { sys, store, start } = setup(badBuilders);
    const run = await start();
    expect(await run.call("throwing_build", { text: "x" })).toMatchObject({ status: "approval_required", reason: "COMPENSATION_UNBUILDABLE" });
    expect(await run.call("invalid_build", { text: "x" })).toMatchObject({ status: "approval_required", reason: "COMPENSATION_UNBUILDABLE" });
    expect(sys.calls).toEqual([]);
    expect(await store.listSteps(run.runId)).toEqual([]);
    expect(await store.listEscalations({ runId: run.runId })).toHaveLength(2);
  });
});

describe("pivot", () => {
  it("requestPivot records the plan with hashes and policy versions, lists staged steps, and moves the run to AWAITING_PIVOT", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    sys.modes.push("reject");
    await rejection(run.call("charge_card", { text: "declined", amount: 1 })); // FAILED: not staged
    const pivot = await stageAndPropose(run);

    expect(pivot).toMatchObject({ status: "PENDING", runId: run.runId, decidedBy: null });
    expect(pivot.plan).toEqual([
      { tool: "charge_card", args: CHARGE, argsHash: argsHash(CHARGE), policyVersion: 1, toolClass: "COMPENSATABLE" },
      { tool: "send_email", args: EMAIL, argsHash: argsHash(EMAIL), policyVersion: 1, toolClass: "IRREVERSIBLE" },
    ]);
    expect(pivot.planHash).toBe(planHash(pivot.plan));
    const ticket = await stepAt(store, run.runId, 1);
    expect(pivot.stagedStepIds).toEqual([ticket.id]);
    expect((await store.getRun(run.runId))!.status).toBe("AWAITING_PIVOT");
    expect((await store.listAuditEvents(run.runId)).at(-1)).toMatchObject({ type: "pivot.requested", data: { planHash: pivot.planHash, items: 2, staged: 1 } });
    // Proposing nothing is refused with the field named.
    expect(await rejection(run.requestPivot({ summary: "x", plan: [] }))).toMatchObject({ code: "INVALID_ARGS", issues: [{ path: "plan" }] });
    // Invalid plan args are named under plan.<i>.args.
    const bad = (await rejection(run.requestPivot({ summary: "x", plan: [{ tool: "send_email", args: { text: "" } }] }))) as SagaError;
    expect(bad.issues.map((i) => i.path)).toEqual(["plan.0.args.text"]);
  });

  it("while the pivot is pending, side-effecting calls are refused with PIVOT_PENDING (no effect, no row); pure calls still run", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    const before = sys.calls.length;

    for (const [tool, args] of [
      ["create_ticket", { text: "more" }],
      ["charge_card", CHARGE],
      ["send_email", EMAIL],
    ] as const) {
      const out = await run.call(tool, args);
      expect(out).toMatchObject({ status: "approval_required", reason: "PIVOT_PENDING", pivotId: pivot.id, escalationId: null });
    }
    expect(sys.calls).toHaveLength(before);
    expect(sys.effects).toHaveLength(1);
    expect(await store.listSteps(run.runId)).toHaveLength(1);
    expect(await store.listEscalations({ runId: run.runId })).toEqual([]);
    expect(await run.call("lookup_order", { text: "o-1" })).toMatchObject({ status: "ok", stepIdx: null });

    // The same plan again returns the same pivot; a different plan revises it (new hash, same pivot).
    expect((await run.requestPivot({ summary: "again", plan: [{ tool: "charge_card", args: CHARGE }, { tool: "send_email", args: EMAIL }] })).id).toBe(pivot.id);
    const revised = await run.requestPivot({ summary: "other", plan: [{ tool: "send_email", args: EMAIL }] });
    expect(revised).toMatchObject({ id: pivot.id, status: "PENDING" });
    expect(revised.planHash).not.toBe(pivot.planHash);
  });

  it("a decision bound to the wrong plan hash is PIVOT_CONFLICT and changes nothing", async () => {
    const { store, engine, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    const e = await rejection(engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: "f".repeat(64) }));
    expect(e).toBeInstanceOf(SagaError);
    expect((e as SagaError).code).toBe("PIVOT_CONFLICT");
    expect((e as Error).message).toContain("changed since it was loaded");
    expect((await store.getPivot(pivot.id))!.status).toBe("PENDING");
    expect((await store.getRun(run.runId))!.status).toBe("AWAITING_PIVOT");
    expect(await rejection(engine.decidePivot("piv_nope", { approve: true, actor: reviewer, planHash: pivot.planHash }))).toMatchObject({ code: "PIVOT_NOT_FOUND" });
  });

  it("a rejection requires a reason; with one, the pivot is REJECTED and the run goes back to RUNNING", async () => {
    const { store, engine, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    for (const reason of [undefined, null, "   "]) {
      const e = await rejection(engine.decidePivot(pivot.id, { approve: false, actor: reviewer, planHash: pivot.planHash, reason }));
      expect(e).toMatchObject({ code: "INVALID_ARGS", issues: [{ path: "reason" }] });
    }
    expect((await store.getPivot(pivot.id))!.status).toBe("PENDING");

    const rejected = await engine.decidePivot(pivot.id, { approve: false, actor: reviewer, planHash: pivot.planHash, reason: "amount is wrong" });
    expect(rejected).toMatchObject({ status: "REJECTED", reason: "amount is wrong", decidedBy: reviewer.id });
    expect((await store.getRun(run.runId))!.status).toBe("RUNNING");
    // Deciding twice is a conflict naming the earlier decision.
    const twice = await rejection(engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash }));
    expect(twice).toMatchObject({ code: "PIVOT_CONFLICT" });
    expect((twice as Error).message).toContain("already rejected");
  });

  it("after approval, plan items run in phase COMMIT bound to the pivot, once each", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    const approved = await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    expect(approved).toMatchObject({ status: "APPROVED", decidedBy: reviewer.id });
    expect((await store.getRun(run.runId))!.status).toBe("COMMITTING");

    // Same arguments with keys in another order: the same args hash.
    const charge = await run.call("charge_card", { amount: 20, text: "charge" });
    const email = await run.call("send_email", EMAIL);
    expect(charge).toMatchObject({ status: "ok", stepIdx: 1 });
    expect(email).toMatchObject({ status: "ok", stepIdx: 2 });
    expect(sys.effectCount(stepKey(run.runId, 1, "charge_card"))).toBe(1);
    expect(sys.effectCount(stepKey(run.runId, 2, "send_email"))).toBe(1);
    const steps = await store.listSteps(run.runId);
    expect(steps.map((s) => [s.tool, s.phase, s.approvalId, s.planItemIdx])).toEqual([
      ["create_ticket", "STAGING", null, null],
      ["charge_card", "COMMIT", pivot.id, 0],
      ["send_email", "COMMIT", pivot.id, 1],
    ]);

    // A consumed plan item cannot run twice.
    const again = await run.call("send_email", EMAIL);
    expect(again).toMatchObject({ status: "approval_required", reason: "NOT_IN_PLAN", pivotId: pivot.id });
    expect(sys.callsOf("send_email")).toBe(1);
    expect(sys.effects.filter((e) => e.tool === "send_email")).toHaveLength(1);
    expect(await store.listSteps(run.runId)).toHaveLength(3);
    expect(await engine.irreversibleBeforePivot(run.runId)).toBe(0);
  });

  it("after approval, the same tool with changed args is NOT_IN_PLAN: held, no effect, no row", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });

    const out = await run.call("send_email", { text: "Your refund of 2000 EUR is on its way" });
    expect(out).toMatchObject({ status: "approval_required", reason: "NOT_IN_PLAN", pivotId: pivot.id, escalationId: expect.stringMatching(/^esc_/) });
    const changedCharge = await run.call("charge_card", { ...CHARGE, amount: 2000 });
    expect(changedCharge).toMatchObject({ status: "approval_required", reason: "NOT_IN_PLAN" });
    // A staging-type call not in the plan is held after the pivot as well.
    expect(await run.call("create_ticket", { text: "extra" })).toMatchObject({ status: "approval_required", reason: "NOT_IN_PLAN" });

    expect(sys.callsOf("send_email")).toBe(0);
    expect(sys.callsOf("charge_card")).toBe(0);
    expect(sys.effects).toHaveLength(1); // the staged ticket only
    expect(await store.listSteps(run.runId)).toHaveLength(1);
    expect((await store.listEscalations({ runId: run.runId })).map((e) => e.kind)).toEqual(["APPROVAL_REQUIRED", "APPROVAL_REQUIRED", "APPROVAL_REQUIRED"]);
  });

  it("two identical plan items may each run once, and a third identical call is held", async () => {
    const { sys, engine, start } = setup();
    const run = await start();
    const pivot = await run.requestPivot({ summary: "two reminders", plan: [{ tool: "send_email", args: EMAIL }, { tool: "send_email", args: EMAIL }] });
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    expect(await run.call("send_email", EMAIL)).toMatchObject({ status: "ok", stepIdx: 0 });
    expect(await run.call("send_email", EMAIL)).toMatchObject({ status: "ok", stepIdx: 1 });
    expect(await run.call("send_email", EMAIL)).toMatchObject({ status: "approval_required", reason: "NOT_IN_PLAN" });
    expect(sys.callsOf("send_email")).toBe(2);
  });

  it("an admin's policy edit makes the approval stale: POLICY_CHANGED, no effect", async () => {
    const { sys, registry, engine, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    registry.tool("send_email").policyVersion = 2;
    const out = await run.call("send_email", EMAIL);
    expect(out).toMatchObject({ status: "approval_required", reason: "POLICY_CHANGED" });
    expect(sys.callsOf("send_email")).toBe(0);
  });

  it("a refused commit call is FAILED, escalated as STUCK_AFTER_PIVOT, and its plan item counts as consumed", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    sys.modes.push("reject");
    const e = await rejection(run.call("charge_card", CHARGE));
    expect(e).toBeInstanceOf(ToolCallFailed);
    const failed = await stepAt(store, run.runId, 1);
    expect(failed).toMatchObject({ status: "FAILED", phase: "COMMIT" });
    const [stuck] = await store.listEscalations({ runId: run.runId });
    expect(stuck).toMatchObject({ kind: "STUCK_AFTER_PIVOT", stepId: failed.id, detail: { tool: "charge_card", error: { reason: "card_declined" } } });
    expect(await run.call("charge_card", CHARGE)).toMatchObject({ status: "approval_required", reason: "NOT_IN_PLAN" });
    expect(sys.effects).toHaveLength(1);
  });

  it("an approved pivot on a run that was unwound while it waited does not revive the run", async () => {
    // The agent proposes, then the run is unwound (staged ticket closed) before the reviewer decides.
    const { sys, store, engine, start } = setup();
    const run = await start();
    const pivot = await stageAndPropose(run);
    await run.unwind("customer cancelled while the pivot waited");
    expect((await store.getRun(run.runId))!.status).toBe("UNWOUND");
    expect(sys.compensations).toHaveLength(1);

    const decision = await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash }).then(
      () => "approved",
      (e: unknown) => (e instanceof SagaError ? e.code : String(e)),
    );
    const runStatus = (await store.getRun(run.runId))!.status;
    const call = await run.call("send_email", EMAIL).then(
      (o) => o.status,
      (e: unknown) => (e instanceof SagaError ? e.code : String(e)),
    );
    expect({ decision, runStatus, call, emailsSent: sys.callsOf("send_email") }).toEqual({
      decision: expect.not.stringMatching(/^approved$/),
      runStatus: "UNWOUND",
      call: "RUN_CLOSED",
      emailsSent: 0,
    });
  });
});

describe("held calls and the pivot", () => {
  it("a call held before the pivot that then runs as a plan item cannot be sent a second time through the stale hold", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    const held = await run.call("send_email", EMAIL); // held: APPROVAL_REQUIRED escalation, OPEN
    const escalationId = (held as { escalationId: string }).escalationId;
    const pivot = await run.requestPivot({ summary: "send it", plan: [{ tool: "send_email", args: EMAIL }] });
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    expect(await run.call("send_email", EMAIL)).toMatchObject({ status: "ok", stepIdx: 0 });
    expect(sys.callsOf("send_email")).toBe(1);

    // Later a reviewer works the queue and approves the (still open) hold; the agent repeats the call.
    const holdStatus = (await store.getEscalation(escalationId))!.status;
    await engine.decideHeldCall(escalationId, { approve: true, actor: reviewer }).catch(() => undefined);
    const repeat = await run.call("send_email", EMAIL);
    expect({ holdStatus, repeat: repeat.status, emailsSent: sys.callsOf("send_email") }).toEqual({
      holdStatus: expect.not.stringMatching(/^OPEN$/),
      repeat: "approval_required",
      emailsSent: 1,
    });
  });
});

describe("metric: irreversible steps before the pivot", () => {
  it("is 0 after holds, approvals and commits", async () => {
    const { engine, start } = setup();
    const run = await start();
    const held = await run.call("send_email", { text: "held" });
    await engine.decideHeldCall((held as { escalationId: string }).escalationId, { approve: true, actor: reviewer });
    await run.call("send_email", { text: "held" });
    const pivot = await stageAndPropose(run);
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    await run.call("charge_card", CHARGE);
    await run.call("send_email", EMAIL);
    const steps = await engine.deps.store!.listSteps(run.runId);
    expect(steps.filter((s) => s.toolClass === "IRREVERSIBLE" && s.status === "CONFIRMED")).toHaveLength(2);
    expect(await engine.irreversibleBeforePivot(run.runId)).toBe(0);
  });

  it("counts an IRREVERSIBLE STAGING row that happened (so the metric can fail)", async () => {
    const row = (status: StepRecord["status"], phase: StepRecord["phase"] = "STAGING", toolClass: StepRecord["toolClass"] = "IRREVERSIBLE") => ({ toolClass, phase, status });
    expect(irreversibleBeforePivot([row("CONFIRMED")])).toBe(1);
    expect(irreversibleBeforePivot([row("CONFIRMED"), row("UNKNOWN"), row("INTENDED"), row("COMPENSATION_FAILED")])).toBe(4);
    expect(irreversibleBeforePivot([row("FAILED"), row("NOT_EXECUTED")])).toBe(0);
    expect(irreversibleBeforePivot([row("CONFIRMED", "COMMIT"), row("CONFIRMED", "APPROVED_HOLD")])).toBe(0);
    expect(irreversibleBeforePivot([row("CONFIRMED", "STAGING", "COMPENSATABLE")])).toBe(0);
  });

  it("the engine's metric reads the log: a hand-written IRREVERSIBLE STAGING CONFIRMED row makes it 1", async () => {
    const { store, engine, start } = setup();
    const run = await start();
    const key = stepKey(run.runId, 0, "send_email");
    const { step } = await store.insertIntent(
      {
        id: "stp_hand",
        runId: run.runId,
        stepIdx: 0,
        tool: "send_email",
        toolClass: "IRREVERSIBLE",
        stepKey: key,
        args: EMAIL,
        argsHash: argsHash(EMAIL),
        phase: "STAGING",
        policyVersion: 1,
        approvalId: null,
        planItemIdx: null,
        compensation: null,
        compensationKey: null,
        correction: null,
        audience: ["customer"],
      },
      { type: "step.intended", actor: { type: "system", id: "test" } },
    );
    await store.updateStep(step.id, { status: ["INTENDED"] }, { status: "CONFIRMED" }, { type: "step.confirmed", actor: { type: "system", id: "test" } });
    expect(await engine.irreversibleBeforePivot(run.runId)).toBe(1);
  });
});
