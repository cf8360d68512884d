import { describe, expect, it } from "vitest";
import { CrashPoint } from "./crash-points";
import type { SagaEngine } from "./engine";
import type { ReviewerEngine } from "./reviewer-engine";
import { SagaError, ToolOutcomeUnknown } from "./errors";
import { recordReconcile } from "./calls";
import { ToolRegistry } from "./tools";
import { nextUnwindAction, recordCompensation } from "./unwind-commands";
import { compensationKey, stepKey } from "./keys";
import { type StepRecord } from "./store";
import { type CompensationContext } from "./tools";
import { T0, setup, rejection, stepAt } from "./testkit";

const reviewer = { type: "user" as const, id: "rita@example.com" };

/** Runs send_email through the held-call approval, so an IRREVERSIBLE step is CONFIRMED. */
async function sendApprovedEmail(engine: ReviewerEngine, run: Awaited<ReturnType<SagaEngine["startRun"]>>, text: string) {
  const held = await run.call("send_email", { text });
  if (held.status !== "approval_required" || !held.escalationId) throw new Error("expected a held call");
  await engine.decideHeldCall(held.escalationId, { approve: true, actor: reviewer });
  const out = await run.call("send_email", { text });
  if (out.status !== "ok") throw new Error("expected the approved call to run");
  return out;
}

describe("unwind: order and classes", () => {
  it("compensates in reverse step order, each under its own compensation key, once", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    await run.call("stage_draft", { text: "draft" });
    await run.call("create_ticket", { text: "help" });
    await run.call("charge_card", { text: "charge", amount: 10 });
    const keys = [0, 1, 2].map((i) => stepKey(run.runId, i, ["stage_draft", "create_ticket", "charge_card"][i]!));

    const report = await run.unwind("customer cancelled");

    expect(sys.compensations.map((c) => c.targetKey)).toEqual([keys[2], keys[1], keys[0]]);
    expect(sys.compensations.map((c) => c.compensator)).toEqual(["refund", "undo", "undo"]);
    expect(sys.compensations.map((c) => c.compensationKey)).toEqual([
      compensationKey(run.runId, 2, "charge_card"),
      compensationKey(run.runId, 1, "create_ticket"),
      compensationKey(run.runId, 0, "stage_draft"),
    ]);
    for (const c of sys.compensations) expect(sys.compensationCount(c.compensationKey)).toBe(1);
    expect(report).toMatchObject({ status: "UNWOUND", compensated: [2, 1, 0], compensationFailed: [], unresolved: [], corrections: [], skipped: [] });
    expect((await store.listSteps(run.runId)).map((s) => s.status)).toEqual(["COMPENSATED", "COMPENSATED", "COMPENSATED"]);
    expect((await store.getRun(run.runId))!.status).toBe("UNWOUND");
    // The originals stay on record: the effects are not removed, they are answered.
    expect(sys.effects).toHaveLength(3);
  });

  it("a call still held for a person's approval is closed with the reason when the run is unwound: the run is UNWOUND, not waiting on a decision that could never let the call run", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    await run.call("stage_draft", { text: "draft" });
    const held = await run.call("send_email", { text: "not yet" });
    if (held.status !== "approval_required" || !held.escalationId) throw new Error("expected a held call");
    const report = await run.unwind("the customer changed their mind");
    expect(report.status).toBe("UNWOUND");
    expect(await store.getEscalation(held.escalationId)).toMatchObject({
      status: "RESOLVED",
      resolution: { approved: false, closedBecause: "run_unwound", note: expect.stringContaining("the customer changed their mind") },
    });
    expect(sys.effects.filter((e) => e.tool === "send_email")).toHaveLength(0);
  });

  it("REVERSIBLE: released silently (COMPENSATED, no correction, no escalation)", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    await run.call("stage_draft", { text: "draft" });
    const report = await run.unwind("not needed");
    expect(sys.compensations).toHaveLength(1);
    expect(sys.compensationCount(compensationKey(run.runId, 0, "stage_draft"))).toBe(1);
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "COMPENSATED", compensationState: "CONFIRMED", audience: ["agent"] });
    expect(await store.listCorrections(run.runId)).toEqual([]);
    expect(await store.listEscalations({ runId: run.runId })).toEqual([]);
    expect(report).toMatchObject({ status: "UNWOUND", compensated: [0], corrections: [] });
  });

  it("COMPENSATABLE: the compensation runs with its key; REQUESTED is recorded before the call, CONFIRMED after reading back", async () => {
    const { sys, store, start, clock } = setup();
    const run = await start();
    const out = await run.call("create_ticket", { text: "help" });
    clock.advance(60_000);
    const seen: { ctx: CompensationContext; row: StepRecord }[] = [];
    sys.onCompensate = async (ctx) => {
      seen.push({ ctx, row: await stepAt(store, run.runId, 0) });
      clock.advance(5_000); // the provider takes a while
    };

    await run.unwind("customer cancelled");

    const compKey = compensationKey(run.runId, 0, "create_ticket");
    expect(seen).toHaveLength(1);
    expect(seen[0]!.ctx).toEqual({
      compensationKey: compKey,
      target: { stepKey: stepKey(run.runId, 0, "create_ticket"), externalRef: out.status === "ok" ? out.externalRef : null, tool: "create_ticket", args: { text: "help" } },
    });
    expect(seen[0]!.row).toMatchObject({ status: "CONFIRMED", compensationState: "REQUESTED", compensationConfirmedAt: null });
    expect(seen[0]!.row.compensationRequestedAt?.getTime()).toBe(T0 + 60_000);
    expect(sys.compensationCount(compKey)).toBe(1);

    const row = await stepAt(store, run.runId, 0);
    expect(row).toMatchObject({ status: "COMPENSATED", compensationState: "CONFIRMED", compensationKey: compKey, compensationRef: "comp-1" });
    expect(row.compensationRequestedAt?.getTime()).toBe(T0 + 60_000);
    expect(row.compensationConfirmedAt?.getTime()).toBe(T0 + 65_000);
    const types = (await store.listAuditEvents(run.runId)).map((e) => e.type);
    expect(types.slice(-4)).toEqual(["run.unwinding", "compensation.requested", "compensation.confirmed", "run.unwound"]);
  });

  it("a compensation that times out after taking effect is confirmed by reading back, once", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "help" });
    sys.compensationTimeoutAfter = true;
    const report = await run.unwind("cancel");
    expect(sys.compensationCalls).toBe(1);
    expect(sys.compensationCount(compensationKey(run.runId, 0, "create_ticket"))).toBe(1);
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "COMPENSATED", compensationState: "CONFIRMED" });
    expect(report.status).toBe("UNWOUND");
  });

  it("requested is not confirmed: an accepted compensation that never shows up is retried, then COMPENSATION_FAILED", async () => {
    const { sys, store, start, elapsed } = setup();
    const run = await start();
    const out = await run.call("create_ticket", { text: "help" });
    sys.compensationNoEffect = true;

    const report = await run.unwind("cancel");

    // maxAttempts sends under the same key, each read back twice (2000 ms apart).
    expect(sys.compensationCalls).toBe(3);
    expect(sys.compensations).toEqual([]);
    expect(elapsed()).toBe(3 * 2000);
    const row = await stepAt(store, run.runId, 0);
    expect(row).toMatchObject({
      status: "COMPENSATION_FAILED",
      compensationState: "FAILED",
      compensationConfirmedAt: null,
      compensationError: { reason: "not_confirmed", externalRef: out.status === "ok" ? out.externalRef : "?" },
    });
    expect(report).toMatchObject({ status: "NEEDS_ATTENTION", compensationFailed: [0], compensated: [] });
    expect((await store.listEscalations({ runId: run.runId })).map((e) => e.kind)).toEqual(["COMPENSATION_FAILED"]);
  });

  it("a read-back that lags once is re-checked after 2000 ms: COMPENSATED, sent once", async () => {
    const { sys, store, start, elapsed } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "help" });
    sys.verifyLag = 1;
    const report = await run.unwind("cancel");
    expect(sys.compensationCalls).toBe(1);
    expect(sys.compensationCount(compensationKey(run.runId, 0, "create_ticket"))).toBe(1);
    expect(elapsed()).toBe(2000);
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "COMPENSATED", compensationState: "CONFIRMED" });
    expect(report.status).toBe("UNWOUND");
  });

  it("a refused compensation is COMPENSATION_FAILED with an escalation naming the external ref; the unwind goes on", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "first" });
    const charge = await run.call("charge_card", { text: "charge", amount: 10 });
    await run.call("create_ticket", { text: "second" });
    const chargeKey = stepKey(run.runId, 1, "charge_card");
    sys.refuseCompensationOf.add(chargeKey);

    const report = await run.unwind("customer cancelled");

    expect(report).toMatchObject({ status: "NEEDS_ATTENTION", compensated: [2, 0], compensationFailed: [1] });
    expect(sys.compensations.map((c) => c.targetKey)).toEqual([stepKey(run.runId, 2, "create_ticket"), stepKey(run.runId, 0, "create_ticket")]);
    const failed = await stepAt(store, run.runId, 1);
    const externalRef = charge.status === "ok" ? charge.externalRef : "?";
    expect(externalRef).toBe("charge_card-2");
    expect(failed).toMatchObject({
      status: "COMPENSATION_FAILED",
      compensationState: "FAILED",
      compensationConfirmedAt: null,
      compensationError: { reason: "charge_disputed", externalRef, stepKey: chargeKey, remaining: { stepKey: chargeKey, externalRef } },
    });
    expect(failed.compensationRequestedAt).not.toBeNull(); // it was sent; it did not happen
    const escalations = await store.listEscalations({ runId: run.runId });
    expect(escalations).toHaveLength(1);
    expect(escalations[0]).toMatchObject({
      kind: "COMPENSATION_FAILED",
      stepId: failed.id,
      status: "OPEN",
      dedupeKey: `compfail:${failed.id}`,
      detail: { tool: "charge_card", externalRef, stepKey: chargeKey, compensationKey: compensationKey(run.runId, 1, "charge_card") },
    });
    expect(escalations[0]!.title).toContain(externalRef);
    expect((await store.getRun(run.runId))!.status).toBe("NEEDS_ATTENTION");

    // Unwinding again neither duplicates the escalation nor re-sends finished compensations.
    const again = await run.unwind("retry unwind");
    expect(again.compensationFailed).toEqual([1]);
    expect(await store.listEscalations({ runId: run.runId })).toHaveLength(1);
    expect(sys.compensations).toHaveLength(2);
  });

  it("IRREVERSIBLE confirmed: no compensation, a correction is drafted (rank 2 for a customer audience)", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "help" });
    await sendApprovedEmail(engine, run, "your refund is on its way");
    expect(sys.effects).toHaveLength(2);

    const report = await run.unwind("wrong customer");

    expect(report).toMatchObject({ status: "NEEDS_ATTENTION", compensated: [0], corrections: [1] });
    expect(sys.compensations.map((c) => c.targetKey)).toEqual([stepKey(run.runId, 0, "create_ticket")]);
    const email = await stepAt(store, run.runId, 1);
    expect(email).toMatchObject({ status: "CONFIRMED", toolClass: "IRREVERSIBLE", compensationState: "NONE", phase: "APPROVED_HOLD" });
    const corrections = await store.listCorrections(run.runId);
    expect(corrections).toHaveLength(1);
    expect(corrections[0]).toMatchObject({
      stepId: email.id,
      rank: 2,
      audience: ["customer"],
      status: "DRAFT",
      subject: "Correction",
      body: "Please disregard: your refund is on its way",
    });
  });

  it("COMPENSATABLE with audience [finance] and a correction template: compensated, no correction; with receipts on: a correction", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    await run.call("charge_card", { text: "silent", amount: 10 });
    await run.call("charge_card", { text: "loud", amount: 20, receipts: true });

    const report = await run.unwind("cancel");

    expect(report).toMatchObject({ compensated: [1, 0], corrections: [1], status: "NEEDS_ATTENTION" });
    expect(sys.compensations).toHaveLength(2);
    const [silent, loud] = await store.listSteps(run.runId);
    expect(silent).toMatchObject({ audience: ["finance"], status: "COMPENSATED" });
    expect(silent!.correction).not.toBeNull(); // the template existed; the audience never saw anything
    expect(loud).toMatchObject({ audience: ["customer"], status: "COMPENSATED" });
    const corrections = await store.listCorrections(run.runId);
    expect(corrections.map((c) => c.stepId)).toEqual([loud!.id]);
    expect(corrections[0]).toMatchObject({ rank: 2, body: "We refunded 20." });
  });

  it("only the finance-audience charge: UNWOUND with no correction", async () => {
    const { store, start } = setup();
    const run = await start();
    await run.call("charge_card", { text: "silent", amount: 10 });
    const report = await run.unwind("cancel");
    expect(report).toMatchObject({ status: "UNWOUND", compensated: [0], corrections: [] });
    expect(await store.listCorrections(run.runId)).toEqual([]);
  });

  it("FAILED and NOT_EXECUTED rows are skipped: nothing to undo", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    sys.modes.push("reject");
    await rejection(run.call("charge_card", { text: "charge", amount: 10 })); // 0 FAILED
    sys.modes.push("timeout-before");
    await rejection(run.call("create_ticket", { text: "help" })); // 1 UNKNOWN, nothing happened
    const unknown = await stepAt(store, run.runId, 1);
    expect(await engine.reconcile(unknown.id)).toMatchObject({ status: "NOT_EXECUTED" }); // looked twice
    expect(sys.lookups).toBe(2);
    // A step that never happened may be abandoned for another tool: the cursor skips it.
    expect(await run.call("stage_draft", { text: "draft" })).toMatchObject({ status: "ok", stepIdx: 2 });

    const report = await run.unwind("give up");

    expect((await store.listSteps(run.runId)).map((s) => s.status)).toEqual(["FAILED", "NOT_EXECUTED", "COMPENSATED"]);
    expect(report).toMatchObject({ status: "UNWOUND", skipped: [1, 0], compensated: [2], compensationFailed: [] });
    expect(sys.compensations.map((c) => c.targetKey)).toEqual([stepKey(run.runId, 2, "stage_draft")]);
    expect(sys.compensationCalls).toBe(1);
    expect(sys.lookups).toBe(2); // settled rows are not looked up again
  });

  it("an UNKNOWN row is reconciled first during the unwind: absent twice -> NOT_EXECUTED -> skipped, no compensation", async () => {
    const { sys, store, start, elapsed } = setup();
    const run = await start();
    sys.modes.push("timeout-before");
    await rejection(run.call("create_ticket", { text: "help" }));
    const report = await run.unwind("give up");
    expect(sys.lookups).toBe(2);
    expect(elapsed()).toBe(2000);
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "NOT_EXECUTED", compensationState: "NONE" });
    expect(report).toMatchObject({ status: "UNWOUND", skipped: [0], compensated: [] });
    expect(sys.compensationCalls).toBe(0);
  });

  it("reconciles before compensating: an INTENDED row whose effect exists is found and then compensated once", async () => {
    const { sys, store, start, restart } = setup();
    const run = await start();
    sys.modes.push("crash-after");
    await rejection(run.call("create_ticket", { text: "help" }));
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "INTENDED" });

    const report = await restart().unwind(run.runId, reviewer, "crashed run");
    expect(report).toMatchObject({ status: "UNWOUND", compensated: [0] });
    expect(sys.lookups).toBe(1);
    expect(sys.effectCount(stepKey(run.runId, 0, "create_ticket"))).toBe(1);
    expect(sys.compensationCount(compensationKey(run.runId, 0, "create_ticket"))).toBe(1);
    const types = (await store.listAuditEvents(run.runId)).map((e) => e.type);
    expect(types.indexOf("step.reconciled")).toBeLessThan(types.indexOf("compensation.requested"));
  });

  it("an unknown outcome the lookup cannot settle is left UNKNOWN, escalated, and the run NEEDS_ATTENTION", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    await run.call("stage_draft", { text: "draft" });
    sys.modes.push("timeout-after");
    await rejection(run.call("create_ticket", { text: "help" }));
    sys.lookupThrows = true;

    const report = await run.unwind("cancel");
    expect(report).toMatchObject({ status: "NEEDS_ATTENTION", unresolved: [1], compensated: [0] });
    expect(sys.compensations.map((c) => c.targetKey)).toEqual([stepKey(run.runId, 0, "stage_draft")]);
    expect(await stepAt(store, run.runId, 1)).toMatchObject({ status: "UNKNOWN", compensationState: "NONE" });
    expect((await store.listEscalations({ runId: run.runId })).map((e) => e.kind)).toEqual(["OUTCOME_UNKNOWN"]);
  });

  it("an unwound run takes no more tool calls (RUN_CLOSED)", async () => {
    const { sys, start } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "help" });
    await run.unwind("cancel");
    const e = await rejection(run.call("create_ticket", { text: "again" }));
    expect(e).toBeInstanceOf(SagaError);
    expect((e as SagaError).code).toBe("RUN_CLOSED");
    expect(sys.calls).toHaveLength(1);
  });
});

describe("unwind: crashes", () => {
  it("MID_COMPENSATION: the compensation ran but was not recorded; the next unwind verifies it and does not send it again", async () => {
    const { sys, store, start, restart, crashPoints } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "help" });
    const compKey = compensationKey(run.runId, 0, "create_ticket");
    crashPoints.arm(CrashPoint.MID_COMPENSATION);

    const e = await rejection(run.unwind("cancel"));
    expect(e).toMatchObject({ name: "SimulatedCrash", point: CrashPoint.MID_COMPENSATION });
    expect(sys.compensationCount(compKey)).toBe(1);
    const mid = await stepAt(store, run.runId, 0);
    expect(mid).toMatchObject({ status: "CONFIRMED", compensationState: "REQUESTED", compensationConfirmedAt: null });
    expect(mid.compensationRequestedAt).not.toBeNull();
    expect((await store.getRun(run.runId))!.status).toBe("UNWINDING");

    const report = await restart().unwind(run.runId, reviewer, "resume unwind");
    expect(report).toMatchObject({ status: "UNWOUND", compensated: [0] });
    expect(sys.compensationCalls).toBe(1);
    expect(sys.compensationCount(compKey)).toBe(1);
    const row = await stepAt(store, run.runId, 0);
    expect(row).toMatchObject({ status: "COMPENSATED", compensationState: "CONFIRMED" });
    expect(row.compensationRequestedAt).toEqual(mid.compensationRequestedAt);
    expect(row.compensationConfirmedAt).not.toBeNull();
  });

  it("MID_UNWIND: the next unwind completes the rest and compensates nothing twice", async () => {
    const { sys, store, start, restart, crashPoints } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "one" });
    await run.call("stage_draft", { text: "two" });
    await run.call("charge_card", { text: "three", amount: 10 });
    crashPoints.arm(CrashPoint.MID_UNWIND);

    expect(await rejection(run.unwind("cancel"))).toMatchObject({ point: CrashPoint.MID_UNWIND });
    expect(sys.compensations.map((c) => c.targetKey)).toEqual([stepKey(run.runId, 2, "charge_card")]);
    expect((await store.listSteps(run.runId)).map((s) => s.status)).toEqual(["CONFIRMED", "CONFIRMED", "COMPENSATED"]);

    const report = await restart().unwind(run.runId, reviewer, "resume unwind");
    expect(report).toMatchObject({ status: "UNWOUND", compensated: [2, 1, 0] });
    expect(sys.compensations.map((c) => c.targetKey)).toEqual([
      stepKey(run.runId, 2, "charge_card"),
      stepKey(run.runId, 1, "stage_draft"),
      stepKey(run.runId, 0, "create_ticket"),
    ]);
    expect(sys.compensationCalls).toBe(3);
    expect((await store.listSteps(run.runId)).map((s) => s.status)).toEqual(["COMPENSATED", "COMPENSATED", "COMPENSATED"]);
  });
});

describe("unwind: a reworded retry that makes the compensation buildable", () => {
  it("stores the compensation key with the compensation, so the unwind can run it", async () => {
    // hold_funds above 1000 has no buildable release: held, approved, times out with no effect.
    const { sys, store, engine, start } = setup();
    const run = await start();
    const held = await run.call("hold_funds", { text: "hold", amount: 5000 });
    expect(held).toMatchObject({ status: "approval_required", reason: "COMPENSATION_UNBUILDABLE" });
    await engine.decideHeldCall((held as { escalationId: string }).escalationId, { approve: true, actor: reviewer });
    sys.modes.push("timeout-before");
    await rejection(run.call("hold_funds", { text: "hold", amount: 5000 }));
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "UNKNOWN", compensation: null });

    // The agent retries with a smaller amount: reconcile says NOT_EXECUTED, the retry runs with a release.
    const out = await run.call("hold_funds", { text: "hold", amount: 500 });
    expect(out).toMatchObject({ status: "ok", stepIdx: 0 });
    const row = await stepAt(store, run.runId, 0);
    expect(row.compensation).toEqual({ tool: "undo", args: { text: "hold" } });

    const report = await run.unwind("cancel");
    const after = await stepAt(store, run.runId, 0);
    expect({ report, status: after.status, compensationError: after.compensationError }).toMatchObject({
      report: { compensated: [0], compensationFailed: [] },
      status: "COMPENSATED",
      compensationError: null,
    });
    expect(after.compensationKey).toBe(compensationKey(run.runId, 0, "hold_funds"));
    expect(sys.compensationCount(compensationKey(run.runId, 0, "hold_funds"))).toBe(1);
  });
});

describe("unwind driven by commands (a worker in another language)", () => {
  it("a step whose lookup fails is left to its escalation: the walk goes on, compensates the rest, and ends NEEDS_ATTENTION", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    await run.call("stage_draft", { text: "draft" });
    sys.modes.push("timeout-after");
    await expect(run.call("create_ticket", { text: "help" })).rejects.toBeInstanceOf(ToolOutcomeUnknown);
    // The server's side holds no connector: the worker looks keys up and sends compensations.
    const server = { ...engine.deps, store, registry: new ToolRegistry([], []) };
    const worker = { type: "agent" as const, id: "python-worker" };

    const first = await nextUnwindAction(server, run.runId, worker, "customer cancelled");
    if (first.kind !== "reconcile") throw new Error(`expected a reconcile first, got ${first.kind}`);
    expect(first.step.stepIdx).toBe(1);
    await recordReconcile(server, { step: first.step, report: { kind: "lookup_failed", message: "search unavailable", attempts: 3 }, actor: worker });

    // Asked again, the walk does not ask for the same lookup forever: it moves on to step 0.
    const second = await nextUnwindAction(server, run.runId, worker, "customer cancelled");
    if (second.kind !== "compensate") throw new Error(`expected the draft's compensation next, got ${second.kind}`);
    expect(second.step.stepIdx).toBe(0);
    await recordCompensation(server, second.step, { done: true, compensationRef: null, how: "read back" }, worker);

    const done = await nextUnwindAction(server, run.runId, worker, "customer cancelled");
    expect(done).toMatchObject({ kind: "done", report: { status: "NEEDS_ATTENTION", compensated: [0], unresolved: [1] } });
    expect((await store.getRun(run.runId))?.status).toBe("NEEDS_ATTENTION");
    expect((await store.listEscalations({ runId: run.runId })).map((e) => [e.kind, e.status])).toEqual([["OUTCOME_UNKNOWN", "OPEN"]]);
    expect(sys.lookups).toBe(0); // every lookup was the worker's; the server made none
  });

  it("a whole-run revoke's steps past their window (skipStepIds) are left as they are, and reported skipped", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    await run.call("stage_draft", { text: "draft" });
    await run.call("create_ticket", { text: "help" });
    const [old] = await store.listSteps(run.runId);
    const server = { ...engine.deps, store, registry: new ToolRegistry([], []) };
    const worker = { type: "agent" as const, id: "python-worker" };
    const options = { skipStepIds: [old!.id], draftedBy: "revoke:rvk_1" };

    const first = await nextUnwindAction(server, run.runId, worker, "revoke: wrong customer", options);
    if (first.kind !== "compensate") throw new Error(`expected the ticket's compensation, got ${first.kind}`);
    expect(first.step.stepIdx).toBe(1);
    await recordCompensation(server, first.step, { done: true, compensationRef: null, how: "read back" }, worker);
    const done = await nextUnwindAction(server, run.runId, worker, "revoke: wrong customer", options);
    expect(done).toMatchObject({ kind: "done", report: { compensated: [1], skipped: [0] } });
    expect((await store.getStep(old!.id))?.compensationState).toBe("NONE");
    expect(sys.compensations).toHaveLength(0); // the worker sent it; this side sent nothing
  });
});
