import { describe, expect, it } from "vitest";
import { CrashPoint, SimulatedCrash } from "./crash-points";
import { SagaError, ToolCallFailed, ToolOutcomeUnknown } from "./errors";
import { auditHash, compensationKey, stepKey } from "./keys";
import { auditHashedContent, GENESIS_HASH, type AuditEventRecord, type SagaStore, type StepRecord } from "./store";
import { T0, setup, rejection, stepAt } from "./testkit";

/** Checks every link of an audit chain: seq, prevHash and the recomputed hash. */
function chainProblems(events: readonly AuditEventRecord[]): string[] {
  const problems: string[] = [];
  let prev = GENESIS_HASH;
  events.forEach((e, i) => {
    if (e.seq !== i + 1) problems.push(`event ${i}: seq ${e.seq}, expected ${i + 1}`);
    if (e.prevHash !== prev) problems.push(`event ${i}: prevHash does not link`);
    const { hash, prevHash, ...content } = e;
    if (auditHash(prevHash, auditHashedContent(content)) !== hash) problems.push(`event ${i} (${e.type}): hash does not match content`);
    prev = hash;
  });
  return problems;
}

// =============================================================================================

describe("PURE calls", () => {
  it("skip the saga log: no row, no key, no audit event, and the next logged step is still 0", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    const out = await run.call("lookup_order", { text: "order-42" });
    expect(out).toEqual({ status: "ok", stepIdx: null, stepKey: null, externalRef: null, result: { order: "order-42" }, replayed: false });
    expect(sys.callsOf("lookup_order")).toBe(1);
    expect(await store.listSteps(run.runId)).toEqual([]);
    expect((await store.listAuditEvents(run.runId)).map((e) => e.type)).toEqual(["run.started"]);

    const next = await run.call("create_ticket", { text: "help" });
    expect(next).toMatchObject({ status: "ok", stepIdx: 0 });
  });
});

describe("INTENDED -> CONFIRMED", () => {
  it("commits the INTENDED row before the call, sends the run-derived key, and confirms with one effect", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    const key = stepKey(run.runId, 0, "create_ticket");
    const seenDuringCall: StepRecord[][] = [];
    sys.onCall = async () => {
      seenDuringCall.push(await store.listSteps(run.runId));
    };

    const out = await run.call("create_ticket", { text: "printer on fire" });

    // Invariant 1: the row existed, INTENDED, with the same key, while the tool was running.
    expect(seenDuringCall).toHaveLength(1);
    expect(seenDuringCall[0]).toHaveLength(1);
    expect(seenDuringCall[0]![0]).toMatchObject({ status: "INTENDED", stepKey: key, stepIdx: 0, attempts: 0 });

    expect(out).toEqual({ status: "ok", stepIdx: 0, stepKey: key, externalRef: "create_ticket-1", result: { id: "create_ticket-1", tool: "create_ticket" }, replayed: false });
    expect(sys.calls).toEqual([{ tool: "create_ticket", key }]);
    expect(sys.effectCount(key)).toBe(1);

    const row = await stepAt(store, run.runId, 0);
    expect(row).toMatchObject({
      status: "CONFIRMED",
      toolClass: "COMPENSATABLE",
      phase: "STAGING",
      externalRef: "create_ticket-1",
      attempts: 1,
      error: null,
      // Invariant 5: the compensation was written before the call, in the row that carries the key.
      compensation: { tool: "undo", args: { text: expect.any(String) } },
      compensationKey: compensationKey(run.runId, 0, "create_ticket"),
      compensationState: "NONE",
    });
    expect((await store.listAuditEvents(run.runId)).map((e) => e.type)).toEqual(["run.started", "step.intended", "step.confirmed"]);
  });
});

describe("INTENDED -> FAILED", () => {
  it("throws ToolCallFailed, records no effect, and advances the cursor so the next call is stepIdx+1", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    sys.modes.push("reject");

    const e = await rejection(run.call("charge_card", { text: "charge", amount: 50 }));
    expect(e).toBeInstanceOf(ToolCallFailed);
    expect(e).toMatchObject({ tool: "charge_card", stepIdx: 0, reason: "card_declined" });
    expect((e as Error).message).toContain("card declined");
    expect(sys.callsOf("charge_card")).toBe(1);
    expect(sys.effectCount(stepKey(run.runId, 0, "charge_card"))).toBe(0);

    const failed = await stepAt(store, run.runId, 0);
    expect(failed).toMatchObject({ status: "FAILED", attempts: 1, error: { reason: "card_declined", retryable: false } });
    // A refusal during staging is the agent's to handle: no escalation.
    expect(await store.listEscalations({ runId: run.runId })).toEqual([]);

    const next = await run.call("charge_card", { text: "charge", amount: 40 });
    const key1 = stepKey(run.runId, 1, "charge_card");
    expect(next).toMatchObject({ status: "ok", stepIdx: 1, stepKey: key1 });
    expect(sys.effectCount(key1)).toBe(1);
    expect(sys.effects).toHaveLength(1);
    expect((await store.listAuditEvents(run.runId)).map((a) => a.type)).toEqual([
      "run.started",
      "step.intended",
      "step.failed",
      "step.intended",
      "step.confirmed",
    ]);
  });

  it("retries a retryable refusal with backoff under the same key up to maxAttempts, then FAILED", async () => {
    const { sys, store, start, elapsed } = setup();
    const run = await start();
    sys.modes.push("reject-retryable", "reject-retryable", "reject-retryable", "ok");
    const key = stepKey(run.runId, 0, "create_ticket");

    const e = await rejection(run.call("create_ticket", { text: "help" }));
    expect(e).toBeInstanceOf(ToolCallFailed);
    expect(e).toMatchObject({ reason: "rate_limited" });
    // maxAttempts (3) calls, all with the same key; backoff 10 ms then 20 ms.
    expect(sys.calls).toEqual([
      { tool: "create_ticket", key },
      { tool: "create_ticket", key },
      { tool: "create_ticket", key },
    ]);
    expect(elapsed()).toBe(30);
    expect(sys.effectCount(key)).toBe(0);
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "FAILED", attempts: 3, error: { reason: "rate_limited", attempts: 3, retryable: true } });
    expect(sys.modes).toEqual(["ok"]); // the 4th behaviour was never consumed
  });

  it("a retryable refusal that passes on the second attempt confirms with one effect and attempts 2", async () => {
    const { sys, store, start, elapsed } = setup();
    const run = await start();
    sys.modes.push("reject-retryable");
    const out = await run.call("create_ticket", { text: "help" });
    const key = stepKey(run.runId, 0, "create_ticket");
    expect(out).toMatchObject({ status: "ok", stepIdx: 0, stepKey: key, replayed: false });
    expect(sys.calls.map((c) => c.key)).toEqual([key, key]);
    expect(sys.effectCount(key)).toBe(1);
    expect(elapsed()).toBe(10);
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "CONFIRMED", attempts: 2 });
  });
});

describe("INTENDED -> UNKNOWN and reconcile", () => {
  it("a timeout is UNKNOWN: ToolOutcomeUnknown is thrown, not a generic error", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    sys.modes.push("timeout-after");
    const key = stepKey(run.runId, 0, "create_ticket");

    const e = await rejection(run.call("create_ticket", { text: "help" }));
    expect(e).toBeInstanceOf(ToolOutcomeUnknown);
    expect(e).toMatchObject({ tool: "create_ticket", stepIdx: 0, stepKey: key });
    expect(sys.effectCount(key)).toBe(1); // it did happen; the engine cannot know yet
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "UNKNOWN", attempts: 1, error: { reason: "outcome_unknown", message: "504 gateway timeout" } });
    expect((await store.listAuditEvents(run.runId)).map((a) => a.type)).toEqual(["run.started", "step.intended", "step.unknown"]);
  });

  it("UNKNOWN -> CONFIRMED: a retry with reworded args reconciles to the same key, no second effect, replayed result", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    sys.modes.push("timeout-after");
    const key = stepKey(run.runId, 0, "create_ticket");
    await rejection(run.call("create_ticket", { text: "printer on fire" }));

    const out = await run.call("create_ticket", { text: "The printer is on fire, please help" });
    expect(out).toEqual({ status: "ok", stepIdx: 0, stepKey: key, externalRef: "create_ticket-1", result: { id: "create_ticket-1", tool: "create_ticket" }, replayed: true });
    expect(sys.callsOf("create_ticket")).toBe(1); // reconciled, not called again
    expect(sys.effectCount(key)).toBe(1);
    expect(sys.lookups).toBe(1);
    const row = await stepAt(store, run.runId, 0);
    expect(row).toMatchObject({ status: "CONFIRMED", externalRef: "create_ticket-1", error: null });
    expect(await store.listSteps(run.runId)).toHaveLength(1);
    const events = await store.listAuditEvents(run.runId);
    expect(events.map((a) => a.type)).toEqual(["run.started", "step.intended", "step.unknown", "step.reconciled"]);
    expect(events.at(-1)!.data).toMatchObject({ outcome: "CONFIRMED", externalRef: "create_ticket-1", lookups: 1 });

    // The cursor moved on: the next call is step 1.
    expect(await run.call("create_ticket", { text: "another" })).toMatchObject({ stepIdx: 1 });
  });

  it("UNKNOWN -> NOT_EXECUTED after two absent lookups 2000 ms apart, then a retry under the same key confirms once", async () => {
    const { sys, store, start, elapsed } = setup();
    const run = await start();
    sys.modes.push("timeout-before");
    const key = stepKey(run.runId, 0, "create_ticket");
    await rejection(run.call("create_ticket", { text: "help" }));
    expect(sys.effectCount(key)).toBe(0);
    expect(elapsed()).toBe(0);

    const seenDuringRetry: StepRecord[] = [];
    sys.onCall = async () => {
      seenDuringRetry.push(await stepAt(store, run.runId, 0));
    };
    const out = await run.call("create_ticket", { text: "help, reworded" });

    expect(sys.lookups).toBe(2);
    expect(elapsed()).toBe(2000); // the recheck pause, on the injected clock
    // The retry only went out after the row was NOT_EXECUTED and then re-committed as INTENDED.
    expect(seenDuringRetry.map((s) => s.status)).toEqual(["INTENDED"]);
    expect(out).toMatchObject({ status: "ok", stepIdx: 0, stepKey: key, replayed: false });
    expect(sys.calls).toEqual([
      { tool: "create_ticket", key },
      { tool: "create_ticket", key },
    ]);
    expect(sys.effectCount(key)).toBe(1);
    const row = await stepAt(store, run.runId, 0);
    expect(row).toMatchObject({ status: "CONFIRMED", args: { text: "help, reworded" }, externalRef: "create_ticket-1" });
    const events = await store.listAuditEvents(run.runId);
    expect(events.map((a) => a.type)).toEqual(["run.started", "step.intended", "step.unknown", "step.reconciled", "step.retry_intended", "step.confirmed"]);
    expect(events[3]!.data).toMatchObject({ outcome: "NOT_EXECUTED", lookups: 2, recheckAfterMs: 2000 });
  });

  it("a lagging index (null first, found on the 2000 ms recheck) reconciles to CONFIRMED, not NOT_EXECUTED", async () => {
    const { sys, store, start, elapsed } = setup();
    const run = await start();
    sys.modes.push("timeout-after");
    const key = stepKey(run.runId, 0, "create_ticket");
    await rejection(run.call("create_ticket", { text: "help" }));
    sys.lookupLag = 1;

    const out = await run.call("create_ticket", { text: "help" });
    expect(out).toMatchObject({ status: "ok", stepIdx: 0, stepKey: key, externalRef: "create_ticket-1", replayed: true });
    expect(sys.lookups).toBe(2);
    expect(elapsed()).toBe(2000);
    expect(sys.callsOf("create_ticket")).toBe(1);
    expect(sys.effectCount(key)).toBe(1);
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "CONFIRMED", externalRef: "create_ticket-1" });
    const types = (await store.listAuditEvents(run.runId)).map((a) => a.type);
    expect(types).not.toContain("step.retry_intended");
    expect((await store.listAuditEvents(run.runId)).at(-1)!.data).toMatchObject({ outcome: "CONFIRMED", lookups: 2 });
  });

  it("a lookup that always throws leaves the row UNKNOWN, raises OUTCOME_UNKNOWN once, and keeps throwing ToolOutcomeUnknown", async () => {
    const { sys, store, start, elapsed } = setup();
    const run = await start();
    sys.modes.push("timeout-after");
    const key = stepKey(run.runId, 0, "create_ticket");
    await rejection(run.call("create_ticket", { text: "help" }));
    sys.lookupThrows = true;

    const first = await rejection(run.call("create_ticket", { text: "help" }));
    expect(first).toBeInstanceOf(ToolOutcomeUnknown);
    expect(first).toMatchObject({ stepIdx: 0, stepKey: key });
    expect(sys.lookups).toBe(3); // maxAttempts lookups
    expect(elapsed()).toBe(30); // backoff 10 + 20, no recheck pause (nothing was "absent")
    const row = await stepAt(store, run.runId, 0);
    expect(row.status).toBe("UNKNOWN");
    let escalations = await store.listEscalations({ runId: run.runId });
    expect(escalations).toHaveLength(1);
    expect(escalations[0]).toMatchObject({
      kind: "OUTCOME_UNKNOWN",
      status: "OPEN",
      stepId: row.id,
      dedupeKey: `unknown:${row.id}`,
      detail: { stepKey: key, tool: "create_ticket", lookupError: "search unavailable" },
    });

    const second = await rejection(run.call("create_ticket", { text: "help" }));
    expect(second).toBeInstanceOf(ToolOutcomeUnknown);
    expect(sys.lookups).toBe(6);
    escalations = await store.listEscalations({ runId: run.runId });
    expect(escalations).toHaveLength(1); // deduplicated
    expect((await store.listAuditEvents(run.runId)).filter((a) => a.type === "escalation.raised")).toHaveLength(1);
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "UNKNOWN" });
    expect(sys.callsOf("create_ticket")).toBe(1);
    expect(sys.effectCount(key)).toBe(1);
  });

  it("a different tool while a step is UNKNOWN is STEP_UNRESOLVED: no new row, no call", async () => {
    const { sys, store, start } = setup();
    const run = await start();
    sys.modes.push("timeout-after");
    await rejection(run.call("create_ticket", { text: "help" }));

    const e = await rejection(run.call("stage_draft", { text: "draft" }));
    expect(e).toBeInstanceOf(SagaError);
    expect((e as SagaError).code).toBe("STEP_UNRESOLVED");
    expect((e as SagaError).httpStatus).toBe(409);
    expect((e as Error).message).toContain("create_ticket");
    expect((e as Error).message).toContain("stage_draft");
    expect(await store.listSteps(run.runId)).toHaveLength(1);
    expect(sys.callsOf("stage_draft")).toBe(0);
    expect(sys.lookups).toBe(0); // refused before any reconcile
    expect(sys.effects).toHaveLength(1);
  });

  it("counts every call made under a key in `attempts`, including the retry after NOT_EXECUTED", async () => {
    // StepRecord.attempts is documented as "Calls made under this key (retries included)".
    const { sys, store, start } = setup();
    const run = await start();
    sys.modes.push("timeout-before");
    await rejection(run.call("create_ticket", { text: "help" }));
    await run.call("create_ticket", { text: "help" });
    expect(sys.callsOf("create_ticket")).toBe(2);
    expect((await stepAt(store, run.runId, 0)).attempts).toBe(2);
  });
});

describe("crash points", () => {
  it("a crash thrown by the tool after its effect leaves INTENDED; resume + replay reconciles to CONFIRMED with one effect", async () => {
    const { sys, store, start, restart } = setup();
    const run = await start();
    await run.call("stage_draft", { text: "draft" });
    sys.modes.push("crash-after");
    const key = stepKey(run.runId, 1, "create_ticket");

    const e = await rejection(run.call("create_ticket", { text: "help" }));
    expect(e).toBeInstanceOf(SimulatedCrash);
    expect(await stepAt(store, run.runId, 1)).toMatchObject({ status: "INTENDED", attempts: 0, result: null });
    expect(sys.effectCount(key)).toBe(1);

    const resumed = await restart().resume(run.runId);
    const r0 = await resumed.call("stage_draft", { text: "draft" });
    const r1 = await resumed.call("create_ticket", { text: "help" });
    expect(r0).toMatchObject({ status: "ok", stepIdx: 0, replayed: true });
    expect(r1).toMatchObject({ status: "ok", stepIdx: 1, stepKey: key, externalRef: "create_ticket-2", replayed: true });
    expect(sys.callsOf("stage_draft")).toBe(1);
    expect(sys.callsOf("create_ticket")).toBe(1);
    expect(sys.effectCount(key)).toBe(1);
    expect(await stepAt(store, run.runId, 1)).toMatchObject({ status: "CONFIRMED", externalRef: "create_ticket-2" });
  });

  it("the armed AFTER_EFFECT crash point behaves the same: INTENDED, then one effect after resume", async () => {
    const { sys, store, start, restart, crashPoints } = setup();
    const run = await start();
    crashPoints.arm(CrashPoint.AFTER_EFFECT);
    const key = stepKey(run.runId, 0, "charge_card");
    const e = await rejection(run.call("charge_card", { text: "charge", amount: 10 }));
    expect(e).toMatchObject({ name: "SimulatedCrash", point: CrashPoint.AFTER_EFFECT });
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "INTENDED" });
    expect(sys.effectCount(key)).toBe(1);

    const resumed = await restart().resume(run.runId);
    expect(await resumed.call("charge_card", { text: "charge", amount: 10 })).toMatchObject({ status: "ok", stepKey: key, replayed: true });
    expect(sys.effectCount(key)).toBe(1);
    expect(sys.callsOf("charge_card")).toBe(1);
  });

  it("AFTER_INTENT leaves INTENDED with no effect; resume reconciles to NOT_EXECUTED, retries, and records exactly one effect", async () => {
    const { sys, store, start, restart, crashPoints, elapsed } = setup();
    const run = await start();
    crashPoints.arm(CrashPoint.AFTER_INTENT);
    const key = stepKey(run.runId, 0, "create_ticket");

    const e = await rejection(run.call("create_ticket", { text: "help" }));
    expect(e).toMatchObject({ name: "SimulatedCrash", point: CrashPoint.AFTER_INTENT });
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "INTENDED", attempts: 0 });
    expect(sys.calls).toEqual([]);
    expect(sys.effectCount(key)).toBe(0);

    const resumed = await restart().resume(run.runId);
    const out = await resumed.call("create_ticket", { text: "help" });
    expect(out).toMatchObject({ status: "ok", stepIdx: 0, stepKey: key, replayed: false });
    expect(sys.lookups).toBe(2);
    expect(elapsed()).toBe(2000);
    expect(sys.calls).toEqual([{ tool: "create_ticket", key }]);
    expect(sys.effectCount(key)).toBe(1);
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "CONFIRMED" });
    expect((await store.listAuditEvents(run.runId)).map((a) => a.type)).toEqual([
      "run.started",
      "step.intended",
      "step.reconciled",
      "step.retry_intended",
      "step.confirmed",
    ]);
  });

  it("a crash during reconcile (effect found, not yet recorded) is recovered by the next call, still one effect", async () => {
    const { sys, store, start, crashPoints } = setup();
    const run = await start();
    sys.modes.push("timeout-after");
    const key = stepKey(run.runId, 0, "create_ticket");
    await rejection(run.call("create_ticket", { text: "help" }));
    crashPoints.arm(CrashPoint.DURING_RECONCILE);
    expect(await rejection(run.call("create_ticket", { text: "help" }))).toBeInstanceOf(SimulatedCrash);
    expect(await stepAt(store, run.runId, 0)).toMatchObject({ status: "UNKNOWN" });
    expect(await run.call("create_ticket", { text: "help" })).toMatchObject({ status: "ok", replayed: true });
    expect(sys.effectCount(key)).toBe(1);
    expect(sys.callsOf("create_ticket")).toBe(1);
  });
});

describe("resume and determinism", () => {
  it("replaying confirmed steps returns the recorded results without calling the tools again", async () => {
    const { sys, start, restart } = setup();
    const run = await start();
    const first = [
      await run.call("stage_draft", { text: "draft" }),
      await run.call("create_ticket", { text: "help" }),
      await run.call("charge_card", { text: "charge", amount: 10 }),
    ];
    expect(sys.calls).toHaveLength(3);

    const resumed = await restart().resume(run.runId);
    const replay = [
      await resumed.call("stage_draft", { text: "draft" }),
      await resumed.call("create_ticket", { text: "help" }),
      await resumed.call("charge_card", { text: "charge", amount: 10 }),
    ];
    expect(sys.calls).toHaveLength(3); // unchanged
    expect(sys.effects).toHaveLength(3);
    replay.forEach((r, i) => {
      expect(r).toEqual({ ...first[i], replayed: true });
    });

    // Past the recorded log, the resumed context makes new steps.
    expect(await resumed.call("create_ticket", { text: "follow-up" })).toMatchObject({ status: "ok", stepIdx: 3, replayed: false });
    expect(sys.calls).toHaveLength(4);
  });

  it("replaying a FAILED step rethrows its recorded refusal without calling the tool", async () => {
    const { sys, start, restart } = setup();
    const run = await start();
    sys.modes.push("reject");
    await rejection(run.call("charge_card", { text: "charge", amount: 10 }));
    const resumed = await restart().resume(run.runId);
    const e = await rejection(resumed.call("charge_card", { text: "charge", amount: 10 }));
    expect(e).toBeInstanceOf(ToolCallFailed);
    expect(e).toMatchObject({ stepIdx: 0, reason: "card_declined" });
    expect(sys.callsOf("charge_card")).toBe(1);
    expect(await resumed.call("charge_card", { text: "charge", amount: 5 })).toMatchObject({ stepIdx: 1 });
  });

  it("a different tool at a recorded CONFIRMED index is a DETERMINISM error naming both tools; nothing is written", async () => {
    const { sys, store, start, restart } = setup();
    const run = await start();
    await run.call("stage_draft", { text: "draft" });
    const before = await store.listAuditEvents(run.runId);

    const resumed = await restart().resume(run.runId);
    const e = await rejection(resumed.call("charge_card", { text: "charge", amount: 10 }));
    expect(e).toBeInstanceOf(SagaError);
    expect((e as SagaError).code).toBe("DETERMINISM");
    expect((e as Error).message).toContain("stage_draft");
    expect((e as Error).message).toContain("charge_card");
    expect((e as Error).message).toContain("Step 0");
    expect(sys.callsOf("charge_card")).toBe(0);
    expect(await store.listSteps(run.runId)).toHaveLength(1);
    expect(await store.listAuditEvents(run.runId)).toHaveLength(before.length);
  });

  it("resume of an unknown run is RUN_NOT_FOUND", async () => {
    const { engine } = setup();
    expect(await rejection(engine.resume("run_nope"))).toMatchObject({ code: "RUN_NOT_FOUND" });
  });
});

describe("audit log", () => {
  it("appends an event for every transition, and the hash chain verifies (and detects tampering)", async () => {
    const { sys, store, start, clock } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "help" }); // 0: INTENDED -> CONFIRMED
    clock.advance(1000);
    sys.modes.push("reject");
    await rejection(run.call("charge_card", { text: "charge", amount: 10 })); // 1: INTENDED -> FAILED
    sys.modes.push("timeout-before");
    await rejection(run.call("stage_draft", { text: "draft" })); // 2: INTENDED -> UNKNOWN
    await run.call("stage_draft", { text: "draft" }); // 2: UNKNOWN -> NOT_EXECUTED -> INTENDED -> CONFIRMED
    await run.unwind("customer cancelled"); // 2 and 0 compensated, 1 skipped

    const events = await store.listAuditEvents(run.runId);
    expect(events.map((e) => e.type)).toEqual([
      "run.started",
      "step.intended",
      "step.confirmed",
      "step.intended",
      "step.failed",
      "step.intended",
      "step.unknown",
      "step.reconciled",
      "step.retry_intended",
      "step.confirmed",
      "run.unwinding",
      "compensation.requested",
      "compensation.confirmed",
      "compensation.requested",
      "compensation.confirmed",
      "run.unwound",
    ]);
    const steps = await store.listSteps(run.runId);
    const idxOf = (stepId: string | null) => steps.find((s) => s.id === stepId)?.stepIdx ?? null;
    expect(events.map((e) => idxOf(e.stepId))).toEqual([null, 0, 0, 1, 1, 2, 2, 2, 2, 2, null, 2, 2, 0, 0, null]);
    expect(events.every((e) => e.scope === `run:${run.runId}` && e.runId === run.runId)).toBe(true);
    expect(events[0]!.actor).toBe("agent:agent-1");
    expect(events[1]!.at.getTime()).toBe(T0);
    expect(events[3]!.at.getTime()).toBe(T0 + 1000); // the database (injected) clock

    expect(chainProblems(events)).toEqual([]);
    expect(events[0]!.prevHash).toBe(GENESIS_HASH);

    // The verifier can fail: change one event's data, or drop one event.
    const tampered = events.map((e) => ({ ...e }));
    tampered[4] = { ...tampered[4]!, data: { stepIdx: 1, reason: "nothing to see" } };
    expect(chainProblems(tampered)).toEqual(["event 4 (step.failed): hash does not match content"]);
    const dropped = events.filter((_, i) => i !== 6);
    expect(chainProblems(dropped).length).toBeGreaterThan(0);
  });
});

// =============================================================================================

/** Counts the SagaStore calls the engine makes (reads and writes), by method. */
function countCalls(store: SagaStore): Map<string, number> {
  const counts = new Map<string, number>();
  const port: (keyof SagaStore)[] = [
    "createRun", "getRun", "setRunStatus", "listSteps", "getStep", "insertIntent", "updateStep", "createPivot", "revisePivot", "getPivot",
    "listPivots", "decidePivot", "createEscalation", "getEscalation", "findEscalationByDedupeKey", "listEscalations", "resolveEscalation",
    "createCorrection", "listCorrections", "listAuditEvents", "toolTable",
  ];
  for (const name of port) {
    const fn = (store as unknown as Record<string, unknown>)[name];
    if (typeof fn !== "function") continue;
    (store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return (fn as (...a: unknown[]) => unknown).apply(store, args);
    };
  }
  return counts;
}

describe("the run view (no reads before a plain staging call)", () => {
  it("a fresh run's staging calls cost exactly one insertIntent and one updateStep each, and no reads", async () => {
    const { store, start } = setup();
    const run = await start();
    const counts = countCalls(store);
    for (let i = 0; i < 5; i++) expect(await run.call("create_ticket", { text: `t${i}` })).toMatchObject({ status: "ok", stepIdx: i });
    expect(Object.fromEntries(counts)).toEqual({ insertIntent: 5, updateStep: 5 });
  });

  it("a run unwound by someone else between two calls: the next call is refused as closed and writes nothing", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "a" });
    await engine.unwind(run.runId, { type: "user", id: "rita" }, "customer cancelled"); // another actor, not this context
    expect(await rejection(run.call("create_ticket", { text: "b" }))).toMatchObject({ code: "RUN_CLOSED" });
    expect((await store.listSteps(run.runId)).map((s) => s.stepIdx)).toEqual([0]);
    expect(sys.callsOf("create_ticket")).toBe(1);
  });

  it("a pivot approved through another context since the last call: the next call is matched against the plan, not staged", async () => {
    const { sys, store, engine, start } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "a" });
    // The same run, driven for a moment by another context (another process): it proposes a pivot that is approved.
    const other = await engine.resume(run.runId);
    const pivot = await other.requestPivot({ summary: "email the customer", plan: [{ tool: "send_email", args: { text: "done" } }] });
    await engine.decidePivot(pivot.id, { approve: true, actor: { type: "user", id: "rita" }, planHash: pivot.planHash });
    // The first context still holds its view of a RUNNING run; the insert's guard refuses it, a fresh read decides.
    const out = await run.call("create_ticket", { text: "b" });
    expect(out).toMatchObject({ status: "approval_required", reason: "NOT_IN_PLAN" });
    expect(sys.callsOf("create_ticket")).toBe(1);
    expect(await run.call("send_email", { text: "done" })).toMatchObject({ status: "ok", stepIdx: 1 });
    expect((await store.listSteps(run.runId)).map((s) => [s.stepIdx, s.phase])).toEqual([[0, "STAGING"], [1, "COMMIT"]]);
  });

  it("a refusal is never decided on an old view: a pivot rejected since the view was read lets the call stage", async () => {
    const { store, engine, start } = setup();
    const run = await start();
    await run.call("create_ticket", { text: "a" });
    const pivot = await run.requestPivot({ summary: "email", plan: [{ tool: "send_email", args: { text: "x" } }] });
    expect(await run.call("create_ticket", { text: "b" })).toMatchObject({ status: "approval_required", reason: "PIVOT_PENDING" });
    await engine.decidePivot(pivot.id, { approve: false, actor: { type: "user", id: "rita" }, planHash: pivot.planHash, reason: "not yet" });
    expect(await run.call("create_ticket", { text: "b" })).toMatchObject({ status: "ok", stepIdx: 1 });
    expect((await store.listSteps(run.runId)).map((s) => s.phase)).toEqual(["STAGING", "STAGING"]);
  });
});
