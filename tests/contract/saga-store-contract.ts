/**
 * The SagaStore contract (packages/client/src/saga/store.ts), as one suite every implementation runs: the memory
 * store (packages/client/src/saga/memory-store.test.ts) and the Prisma store on SQLite and PostgreSQL, durable and
 * relaxed (tests/integration/prisma-store.test.ts). The HTTP client (packages/client/src/agent/client/) is held to the same
 * behaviour end to end by tests/api. Each test writes its own uniquely named runs, so implementations
 * may share one database across tests.
 */
import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { auditHash, compensationKey, stepKey } from "@/packages/client/src/saga/keys";
import {
  actorLabel,
  auditHashedContent,
  GENESIS_HASH,
  IntentGuardFailed,
  runScope,
  type Actor,
  type AuditEventRecord,
  type AuditInput,
  type NewEscalation,
  type NewIntent,
  type NewPivot,
  type PlanItem,
  type SagaStore,
} from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";

/** What a store factory hands the suite. */
export interface ContractStore {
  /** The store under test. */
  store: SagaStore;
  /** Releases what the factory opened (connections, files). */
  cleanup: () => Promise<void>;
}

const SUITE = randomBytes(4).toString("hex");
let counter = 0;

/** Unique ids that sort in creation order, so "oldest first" ties break the same way everywhere. */
function id(prefix: string): string {
  counter += 1;
  return `${prefix}_${SUITE}${String(counter).padStart(6, "0")}`;
}

const agent: Actor = { type: "agent", id: "contract-agent" };
const reviewer: Actor = { type: "user", id: "reviewer@example.com" };

function audit(type: string, data?: Json, actor: Actor = agent): AuditInput {
  return data === undefined ? { type, actor } : { type, actor, data };
}

/** Nested JSON with every kind of value, to prove round trips are exact. */
const NESTED_ARGS: Json = {
  amount: 1250,
  ratio: 12.5,
  negative: -3,
  currency: "EUR",
  note: null,
  unicode: "Zoë ✓ — 東京",
  items: [
    { sku: "A-1", qty: 2, tags: ["gift", "fragile"] },
    { sku: "B-2", qty: 1, meta: { deep: { deeper: [1, [2, [3]]], empty: {} } } },
  ],
  flags: { rush: true, wrap: false },
  emptyList: [],
};

function expectDate(value: unknown): void {
  expect(value).toBeInstanceOf(Date);
  expect(Number.isNaN((value as Date).getTime())).toBe(false);
}

/** Runs the SagaStore contract against `makeStore` (called once per test). */
export function describeSagaStoreContract(name: string, makeStore: () => Promise<ContractStore>): void {
  describe(`SagaStore contract: ${name}`, () => {
    let store: SagaStore;
    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      const made = await makeStore();
      store = made.store;
      cleanup = made.cleanup;
    });

    afterEach(async () => {
      await cleanup?.();
      cleanup = undefined;
    });

    async function newRun(metadata: Json = { source: "contract", nested: { a: [1, 2] } }): Promise<string> {
      const runId = id("run");
      await store.createRun(
        { id: runId, title: "Refund order 1042", agent: "contract-agent", onBehalfOf: "cus_42", metadata },
        audit("run.created"),
      );
      return runId;
    }

    function intent(runId: string, stepIdx: number, overrides: Partial<NewIntent> = {}): NewIntent {
      const tool = overrides.tool ?? "charge_card";
      return {
        id: id("stp"),
        runId,
        stepIdx,
        tool,
        toolClass: "COMPENSATABLE",
        stepKey: stepKey(runId, stepIdx, tool),
        args: NESTED_ARGS,
        argsHash: `args-${stepIdx}`,
        phase: "STAGING",
        policyVersion: 3,
        approvalId: null,
        planItemIdx: null,
        compensation: { tool: "refund_charge", args: { stepKey: stepKey(runId, stepIdx, tool), amount: 1250 } },
        compensationKey: compensationKey(runId, stepIdx, tool),
        correction: { audience: ["customer"], subject: "About your charge", body: "We charged you by mistake." },
        audience: ["finance", "customer"],
        ...overrides,
      };
    }

    function plan(): PlanItem[] {
      return [
        { tool: "capture_payment", args: { amount: 1250, lines: [{ sku: "A-1" }] }, argsHash: "h1", policyVersion: 2, toolClass: "COMPENSATABLE" },
        { tool: "send_email", args: { to: "ana@example.com", cc: [] }, argsHash: "h2", policyVersion: 1, toolClass: "IRREVERSIBLE" },
      ];
    }

    function pivot(runId: string, overrides: Partial<NewPivot> = {}): NewPivot {
      return {
        id: id("piv"),
        runId,
        summary: "Capture the payment and tell the customer.",
        plan: plan(),
        planHash: `plan-${id("h")}`,
        stagedStepIds: ["stp_a", "stp_b"],
        deadline: new Date("2026-03-04T05:06:07.089Z"),
        ...overrides,
      };
    }

    function escalation(runId: string, overrides: Partial<NewEscalation> = {}): NewEscalation {
      return {
        id: id("esc"),
        runId,
        stepId: null,
        kind: "OUTCOME_UNKNOWN",
        title: "Did the charge happen?",
        detail: { evidence: [{ source: "lookup", found: false }], attempts: 2 },
        owner: "payments-team",
        dedupeKey: `unknown:${id("dk")}`,
        ...overrides,
      };
    }

    async function auditCount(runId: string): Promise<number> {
      return (await store.listAuditEvents(runId)).length;
    }

    function verifyChain(events: AuditEventRecord[], runId: string): void {
      expect(events.length).toBeGreaterThan(0);
      events.forEach((e, i) => {
        expect(e.seq).toBe(i + 1);
        expect(e.scope).toBe(runScope(runId));
        expect(e.runId).toBe(runId);
        expect(e.prevHash).toBe(i === 0 ? GENESIS_HASH : events[i - 1]?.hash);
        expect(e.hash).toMatch(/^[0-9a-f]{64}$/);
        expect(auditHash(e.prevHash, auditHashedContent(e))).toBe(e.hash);
        expectDate(e.at);
      });
    }

    describe("runs", () => {
      it("creates a RUNNING run with Date timestamps and returns the same record from getRun", async () => {
        const metadata = { source: "contract", nested: { list: [1, "two", null, { three: 3 }] } };
        const runId = await newRun(metadata);
        const run = await store.getRun(runId);
        expect(run).toMatchObject({ id: runId, title: "Refund order 1042", agent: "contract-agent", onBehalfOf: "cus_42", status: "RUNNING" });
        expect(run?.metadata).toEqual(metadata);
        expectDate(run?.createdAt);
        expectDate(run?.updatedAt);
        const events = await store.listAuditEvents(runId);
        expect(events.map((e) => e.type)).toEqual(["run.created"]);
        expect(events[0]?.actor).toBe(actorLabel(agent));
        expect(events[0]?.stepId).toBeNull();
      });

      it("round-trips null metadata and a null onBehalfOf", async () => {
        const runId = id("run");
        const created = await store.createRun(
          { id: runId, title: "t", agent: "a", onBehalfOf: null, metadata: null },
          audit("run.created"),
        );
        expect(created.metadata).toBeNull();
        expect(created.onBehalfOf).toBeNull();
        expect(await store.getRun(runId)).toEqual(created);
      });

      it("returns null for an unknown run and refuses a duplicate run id", async () => {
        expect(await store.getRun(id("run"))).toBeNull();
        const runId = await newRun();
        await expect(
          store.createRun({ id: runId, title: "again", agent: "a", onBehalfOf: null, metadata: {} }, audit("run.created")),
        ).rejects.toMatchObject({ code: "CONFLICT" });
        expect(await auditCount(runId)).toBe(1);
      });

      it("setRunStatus moves the run only from the allowed statuses, with one audit event per move", async () => {
        const runId = await newRun();
        expect(await store.setRunStatus(runId, ["COMMITTING"], "COMPLETED", audit("run.completed"))).toBeNull();
        expect((await store.getRun(runId))?.status).toBe("RUNNING");
        expect(await auditCount(runId)).toBe(1);

        const moved = await store.setRunStatus(runId, ["RUNNING", "COMMITTING"], "UNWINDING", audit("run.unwinding"));
        expect(moved?.status).toBe("UNWINDING");
        expect((await store.getRun(runId))?.status).toBe("UNWINDING");

        const any = await store.setRunStatus(runId, null, "NEEDS_ATTENTION", audit("run.needs_attention"));
        expect(any?.status).toBe("NEEDS_ATTENTION");
        expect(await store.setRunStatus(id("run"), null, "COMPLETED", audit("run.completed"))).toBeNull();
        expect(await store.setRunStatus(runId, [], "COMPLETED", audit("run.completed"))).toBeNull();
        expect((await store.listAuditEvents(runId)).map((e) => e.type)).toEqual([
          "run.created",
          "run.unwinding",
          "run.needs_attention",
        ]);
      });

      it("gives the run a strictly later version (updatedAt) on every change, even many in one millisecond", async () => {
        const runId = await newRun();
        const versions = [(await store.getRun(runId))!.updatedAt.getTime()];
        for (let i = 0; i < 20; i++) {
          versions.push((await store.setRunStatus(runId, ["RUNNING"], "RUNNING", audit("run.touched")))!.updatedAt.getTime());
        }
        const p = await store.createPivot(pivot(runId), audit("pivot.requested"));
        versions.push((await store.getRun(runId))!.updatedAt.getTime());
        await store.decidePivot(p.id, { status: "REJECTED", decidedBy: "reviewer@example.com", reason: null, expectedPlanHash: p.planHash }, audit("pivot.rejected"));
        versions.push((await store.getRun(runId))!.updatedAt.getTime());
        for (let i = 1; i < versions.length; i++) expect(versions[i]).toBeGreaterThan(versions[i - 1]!);
      });
    });

    describe("insertIntent", () => {
      it("commits an INTENDED row with defaults and exact JSON, readable back unchanged", async () => {
        const runId = await newRun();
        const input = intent(runId, 0);
        const { created, step } = await store.insertIntent(input, audit("step.intended", { stepIdx: 0 }));
        expect(created).toBe(true);
        expect(step).toMatchObject({
          id: input.id,
          runId,
          stepIdx: 0,
          tool: "charge_card",
          toolClass: "COMPENSATABLE",
          stepKey: input.stepKey,
          argsHash: "args-0",
          status: "INTENDED",
          phase: "STAGING",
          policyVersion: 3,
          approvalId: null,
          planItemIdx: null,
          externalRef: null,
          result: null,
          error: null,
          compensationKey: input.compensationKey,
          compensationState: "NONE",
          compensationRef: null,
          compensationRequestedAt: null,
          compensationConfirmedAt: null,
          compensationError: null,
          attempts: 0,
        });
        expect(step.args).toEqual(NESTED_ARGS);
        expect(step.compensation).toEqual(input.compensation);
        expect(step.correction).toEqual(input.correction);
        expect(step.audience).toEqual(["finance", "customer"]);
        expectDate(step.createdAt);
        expectDate(step.updatedAt);
        expect(await store.getStep(step.id)).toEqual(step);

        const events = await store.listAuditEvents(runId);
        expect(events.map((e) => e.type)).toEqual(["run.created", "step.intended"]);
        expect(events[1]).toMatchObject({ stepId: step.id, data: { stepIdx: 0 } });
      });

      it("round-trips an intent without compensation or correction", async () => {
        const runId = await newRun();
        const { step } = await store.insertIntent(
          intent(runId, 0, { tool: "search", toolClass: "REVERSIBLE", compensation: null, compensationKey: null, correction: null, audience: [], args: null }),
          audit("step.intended"),
        );
        expect(step.compensation).toBeNull();
        expect(step.compensationKey).toBeNull();
        expect(step.correction).toBeNull();
        expect(step.audience).toEqual([]);
        expect(step.args).toBeNull();
        expect(await store.getStep(step.id)).toEqual(step);
      });

      it("returns the existing row (created:false, no audit event) for the same step key", async () => {
        const runId = await newRun();
        const first = await store.insertIntent(intent(runId, 0), audit("step.intended"));
        const again = await store.insertIntent(
          intent(runId, 0, { args: { reworded: true }, argsHash: "other" }),
          audit("step.intended"),
        );
        expect(again.created).toBe(false);
        expect(again.step).toEqual(first.step);
        expect(await store.listSteps(runId)).toHaveLength(1);
        expect(await auditCount(runId)).toBe(2);
      });

      it("returns the existing row for the same (run, stepIdx) even under another key", async () => {
        const runId = await newRun();
        const first = await store.insertIntent(intent(runId, 4), audit("step.intended"));
        const other = await store.insertIntent(intent(runId, 4, { tool: "send_email", toolClass: "IRREVERSIBLE" }), audit("step.intended"));
        expect(other.created).toBe(false);
        expect(other.step.id).toBe(first.step.id);
        expect(other.step.tool).toBe("charge_card");
        expect(await store.listSteps(runId)).toHaveLength(1);
        expect(await auditCount(runId)).toBe(2);
      });

      it("20 concurrent inserts for one key make one row and exactly one created:true", async () => {
        const runId = await newRun();
        const results = await Promise.all(
          Array.from({ length: 20 }, () => store.insertIntent(intent(runId, 0), audit("step.intended"))),
        );
        expect(results.filter((r) => r.created)).toHaveLength(1);
        const winner = results.find((r) => r.created)?.step.id;
        expect(new Set(results.map((r) => r.step.id))).toEqual(new Set([winner]));
        expect(await store.listSteps(runId)).toHaveLength(1);
        expect((await store.listAuditEvents(runId)).filter((e) => e.type === "step.intended")).toHaveLength(1);
      });

      it("refuses an intent for a run that does not exist", async () => {
        await expect(store.insertIntent(intent(id("run"), 0), audit("step.intended"))).rejects.toMatchObject({
          code: "RUN_NOT_FOUND",
        });
      });

      it("lists a run's steps by stepIdx, and only that run's", async () => {
        const runId = await newRun();
        const otherRun = await newRun();
        for (const idx of [2, 0, 1]) await store.insertIntent(intent(runId, idx), audit("step.intended"));
        await store.insertIntent(intent(otherRun, 0), audit("step.intended"));
        expect((await store.listSteps(runId)).map((s) => s.stepIdx)).toEqual([0, 1, 2]);
        expect(await store.listSteps(id("run"))).toEqual([]);
        expect(await store.getStep(id("stp"))).toBeNull();
      });
    });

    describe("insertIntent with a guard", () => {
      const RUNNING = ["RUNNING"] as const;

      it("records the intent when the run matches status and version, and refuses (writing nothing) when it does not", async () => {
        const runId = await newRun();
        const run = (await store.getRun(runId))!;
        const ok = await store.insertIntent(intent(runId, 0), audit("step.intended"), { runStatus: RUNNING, runUpdatedAt: run.updatedAt, appendOnly: true, noPivot: true });
        expect(ok.created).toBe(true);
        await store.updateStep(ok.step.id, { status: ["INTENDED"] }, { status: "CONFIRMED" }, audit("step.confirmed"));
        const eventsBefore = (await store.listAuditEvents(runId)).length;

        await expect(store.insertIntent(intent(runId, 1), audit("step.intended"), { runStatus: ["COMMITTING"] })).rejects.toBeInstanceOf(IntentGuardFailed);
        await expect(store.insertIntent(intent(runId, 1), audit("step.intended"), { runStatus: RUNNING, runUpdatedAt: new Date(run.updatedAt.getTime() - 1) })).rejects.toBeInstanceOf(IntentGuardFailed);
        await store.setRunStatus(runId, null, "RUNNING", audit("run.touched")); // a new version of the run row
        await expect(store.insertIntent(intent(runId, 1), audit("step.intended"), { runStatus: RUNNING, runUpdatedAt: run.updatedAt })).rejects.toBeInstanceOf(IntentGuardFailed);
        expect(await store.listSteps(runId)).toHaveLength(1);
        expect(await store.listAuditEvents(runId)).toHaveLength(eventsBefore + 1); // only run.touched
      });

      it("appendOnly refuses a gap, an index before the first and a step after an unsettled one; noPivot refuses once a pivot exists", async () => {
        const runId = await newRun();
        await expect(store.insertIntent(intent(runId, -1), audit("step.intended"), { runStatus: RUNNING, appendOnly: true })).rejects.toBeInstanceOf(IntentGuardFailed);
        await expect(store.insertIntent(intent(runId, 1), audit("step.intended"), { runStatus: RUNNING, appendOnly: true })).rejects.toBeInstanceOf(IntentGuardFailed);
        const first = await store.insertIntent(intent(runId, 0), audit("step.intended"), { runStatus: RUNNING, appendOnly: true });
        // Step 0 is still INTENDED: nothing may follow it.
        await expect(store.insertIntent(intent(runId, 1), audit("step.intended"), { runStatus: RUNNING, appendOnly: true })).rejects.toBeInstanceOf(IntentGuardFailed);
        await store.updateStep(first.step.id, { status: ["INTENDED"] }, { status: "CONFIRMED" }, audit("step.confirmed"));
        const second = await store.insertIntent(intent(runId, 1), audit("step.intended"), { runStatus: RUNNING, appendOnly: true, noPivot: true });
        expect(second.created).toBe(true);
        await store.updateStep(second.step.id, { status: ["INTENDED"] }, { status: "CONFIRMED" }, audit("step.confirmed"));
        await store.createPivot({ id: id("piv"), runId, summary: "s", plan: plan(), planHash: "ph", stagedStepIds: [], deadline: null }, audit("pivot.requested"));
        await expect(store.insertIntent(intent(runId, 2), audit("step.intended"), { runStatus: ["AWAITING_PIVOT"], noPivot: true })).rejects.toBeInstanceOf(IntentGuardFailed);
        const third = await store.insertIntent(intent(runId, 2), audit("step.intended"), { runStatus: ["AWAITING_PIVOT"], appendOnly: true });
        expect(third.created).toBe(true);
        expect((await store.listSteps(runId)).map((s) => s.stepIdx)).toEqual([0, 1, 2]);
      });

      it("a repeated intent gets its existing row even when the guard no longer holds", async () => {
        const runId = await newRun();
        const input = intent(runId, 0);
        const first = await store.insertIntent(input, audit("step.intended"), { runStatus: RUNNING });
        await store.setRunStatus(runId, null, "UNWOUND", audit("run.unwound"));
        const again = await store.insertIntent({ ...input, id: id("stp") }, audit("step.intended"), { runStatus: RUNNING });
        expect(again).toEqual({ created: false, step: first.step });
      });

      it("runAgent refuses another agent's run", async () => {
        const runId = await newRun();
        await expect(store.insertIntent(intent(runId, 0), audit("step.intended"), { runStatus: RUNNING, runAgent: "someone-else" })).rejects.toBeInstanceOf(IntentGuardFailed);
        expect((await store.insertIntent(intent(runId, 0), audit("step.intended"), { runStatus: RUNNING, runAgent: "contract-agent" })).created).toBe(true);
      });

      it("names a missing run rather than a failed guard", async () => {
        await expect(store.insertIntent(intent(id("run"), 0), audit("step.intended"), { runStatus: RUNNING })).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
      });
    });

    describe("updateStep", () => {
      async function intended(): Promise<{ runId: string; stepId: string }> {
        const runId = await newRun();
        const { step } = await store.insertIntent(intent(runId, 0), audit("step.intended"));
        return { runId, stepId: step.id };
      }

      it("applies the patch when the fence matches and appends one audit event for the step", async () => {
        const { runId, stepId } = await intended();
        const result = { charge: { id: "ch_1", captured: false, lines: [{ sku: "A-1", cents: 1250 }] } };
        const updated = await store.updateStep(
          stepId,
          { status: ["INTENDED", "UNKNOWN"] },
          { status: "CONFIRMED", externalRef: "ch_1", result, attempts: 1 },
          audit("step.confirmed", { externalRef: "ch_1" }),
        );
        expect(updated).toMatchObject({ id: stepId, status: "CONFIRMED", externalRef: "ch_1", attempts: 1, compensationState: "NONE" });
        expect(updated?.result).toEqual(result);
        expect(updated?.args).toEqual(NESTED_ARGS);
        expectDate(updated?.updatedAt);
        expect(updated?.updatedAt.getTime()).toBeGreaterThanOrEqual(updated?.createdAt.getTime() ?? Infinity);
        expect(await store.getStep(stepId)).toEqual(updated);
        const events = await store.listAuditEvents(runId);
        expect(events.map((e) => e.type)).toEqual(["run.created", "step.intended", "step.confirmed"]);
        expect(events[2]).toMatchObject({ stepId, data: { externalRef: "ch_1" } });
      });

      it("returns null, changes nothing and writes no audit event when the status fence does not match", async () => {
        const { runId, stepId } = await intended();
        const before = await store.getStep(stepId);
        expect(
          await store.updateStep(stepId, { status: ["CONFIRMED"] }, { status: "COMPENSATED", attempts: 9 }, audit("step.compensated")),
        ).toBeNull();
        expect(await store.getStep(stepId)).toEqual(before);
        expect(await auditCount(runId)).toBe(2);
      });

      it("fences on the step's tool and on its run's agent (a caller's scope), changing nothing when either misses", async () => {
        const { runId, stepId } = await intended();
        const tool = (await store.getStep(stepId))!.tool;
        const agent = (await store.getRun(runId))!.agent;
        const before = await store.getStep(stepId);
        expect(await store.updateStep(stepId, { status: ["INTENDED"], tools: ["some_other_tool"] }, { status: "CONFIRMED" }, audit("x"))).toBeNull();
        expect(await store.updateStep(stepId, { status: ["INTENDED"], tools: [tool], runAgent: `${agent}-not` }, { status: "CONFIRMED" }, audit("x"))).toBeNull();
        expect(await store.getStep(stepId)).toEqual(before);
        expect(await auditCount(runId)).toBe(2);
        const updated = await store.updateStep(stepId, { status: ["INTENDED"], tools: ["some_other_tool", tool], runAgent: agent }, { status: "CONFIRMED" }, audit("step.confirmed"));
        expect(updated).toMatchObject({ id: stepId, status: "CONFIRMED" });
        expect(await auditCount(runId)).toBe(3);
      });

      it("fences on compensation state too, alone or with the status", async () => {
        const { runId, stepId } = await intended();
        expect(
          await store.updateStep(stepId, { compensationState: ["REQUESTED"] }, { compensationState: "CONFIRMED" }, audit("x")),
        ).toBeNull();
        expect(
          await store.updateStep(
            stepId,
            { status: ["INTENDED"], compensationState: ["REQUESTED"] },
            { compensationState: "CONFIRMED" },
            audit("x"),
          ),
        ).toBeNull();
        expect(await auditCount(runId)).toBe(2);

        const requestedAt = new Date("2026-01-02T03:04:05.678Z");
        const requested = await store.updateStep(
          stepId,
          { status: ["INTENDED"], compensationState: ["NONE"] },
          { compensationState: "REQUESTED", compensationRequestedAt: requestedAt, compensationRef: "re_1" },
          audit("step.compensation_requested"),
        );
        expect(requested).toMatchObject({ compensationState: "REQUESTED", compensationRef: "re_1", status: "INTENDED" });
        expectDate(requested?.compensationRequestedAt);
        expect(requested?.compensationRequestedAt?.getTime()).toBe(requestedAt.getTime());
        // The same transition again is fenced out: requested once, not twice.
        expect(
          await store.updateStep(stepId, { compensationState: ["NONE"] }, { compensationState: "REQUESTED" }, audit("x")),
        ).toBeNull();
        expect(await auditCount(runId)).toBe(3);
      });

      it("an empty fence always applies; an empty allow-list never does", async () => {
        const { runId, stepId } = await intended();
        expect(await store.updateStep(stepId, { status: [] }, { attempts: 5 }, audit("x"))).toBeNull();
        expect((await store.updateStep(stepId, {}, { attempts: 2 }, audit("step.attempted")))?.attempts).toBe(2);
        expect(await auditCount(runId)).toBe(3);
      });

      it("writes nulls and replaces JSON, and leaves fields the patch does not name", async () => {
        const { stepId } = await intended();
        await store.updateStep(stepId, {}, { status: "UNKNOWN", error: { kind: "timeout", afterMs: 30000 } }, audit("step.unknown"));
        const compensationError = { remaining: [{ ref: "ch_1", amount: 1250 }], reason: "card expired" };
        const updated = await store.updateStep(
          stepId,
          { status: ["UNKNOWN"] },
          {
            status: "COMPENSATION_FAILED",
            error: null,
            compensation: null,
            correction: null,
            audience: ["partner"],
            compensationState: "FAILED",
            compensationError,
            args: { reworded: ["yes"] },
            argsHash: "new-hash",
          },
          audit("step.compensation_failed"),
        );
        expect(updated).toMatchObject({
          status: "COMPENSATION_FAILED",
          error: null,
          compensation: null,
          correction: null,
          audience: ["partner"],
          compensationState: "FAILED",
          argsHash: "new-hash",
          policyVersion: 3,
          externalRef: null,
        });
        expect(updated?.compensationError).toEqual(compensationError);
        expect(updated?.args).toEqual({ reworded: ["yes"] });
        expect(await store.getStep(stepId)).toEqual(updated);
      });

      it("returns null for an unknown or missing step id and never touches other rows", async () => {
        const { runId, stepId } = await intended();
        const before = await store.getStep(stepId);
        expect(await store.updateStep(id("stp"), {}, { status: "FAILED" }, audit("x"))).toBeNull();
        // An untyped caller (JSON body) may send no id at all; that must not mean "every row".
        expect(await store.updateStep(undefined as unknown as string, {}, { status: "FAILED" }, audit("x"))).toBeNull();
        expect(await store.getStep(stepId)).toEqual(before);
        expect(await auditCount(runId)).toBe(2);
      });
    });

    describe("audit chain", () => {
      it("is contiguous, linked and recomputable across every kind of mutation; tampering changes the hash", async () => {
        const runId = await newRun();
        const { step } = await store.insertIntent(intent(runId, 0), audit("step.intended"));
        await store.updateStep(step.id, { status: ["INTENDED"] }, { status: "CONFIRMED", result: { ok: true } }, audit("step.confirmed", { nested: { a: [1, { b: null }] } }));
        const p = await store.createPivot(pivot(runId), audit("pivot.requested"));
        await store.decidePivot(p.id, { status: "APPROVED", decidedBy: "reviewer@example.com", reason: null, expectedPlanHash: p.planHash }, audit("pivot.approved", undefined, reviewer));
        const esc = await store.createEscalation(escalation(runId, { stepId: step.id }), audit("escalation.raised"));
        await store.resolveEscalation(esc.escalation.id, { resolvedBy: "reviewer@example.com", resolution: { outcome: "CONFIRMED" } }, audit("escalation.resolved", undefined, reviewer));
        await store.createCorrection({ id: id("cor"), runId, stepId: step.id, audience: ["customer"], rank: 2, subject: "s", body: "b" }, audit("correction.drafted"));
        await store.setRunStatus(runId, null, "NEEDS_ATTENTION", audit("run.needs_attention", undefined, { type: "system", id: "unwind" }));

        const events = await store.listAuditEvents(runId);
        expect(events.map((e) => e.type)).toEqual([
          "run.created",
          "step.intended",
          "step.confirmed",
          "pivot.requested",
          "pivot.approved",
          "escalation.raised",
          "escalation.resolved",
          "correction.drafted",
          "run.needs_attention",
        ]);
        verifyChain(events, runId);
        expect(events.map((e) => e.actor)).toContain("user:reviewer@example.com");
        expect(events.at(-1)?.actor).toBe("system:unwind");
        expect(events[2]?.data).toEqual({ nested: { a: [1, { b: null }] } });
        for (const e of events.slice(1, -1)) {
          expect(e.at.getTime()).toBeGreaterThanOrEqual(events[0]?.at.getTime() ?? Infinity);
        }

        const target = events[2];
        if (!target) throw new Error("expected a third event");
        expect(auditHash(target.prevHash, auditHashedContent({ ...target, data: { nested: { a: [1, { b: 0 }] } } }))).not.toBe(target.hash);
        expect(auditHash(target.prevHash, auditHashedContent({ ...target, actor: "user:mallory" }))).not.toBe(target.hash);
        expect(auditHash(GENESIS_HASH, auditHashedContent(target))).not.toBe(target.hash);
      });

      // Concurrent writers that touch different rows of one run still share its chain: on a store whose
      // writers run in parallel (PostgreSQL) appending must be serialised, or all but one would fail.
      it("30 concurrent intents for different steps of one run all commit and extend one unbroken chain", async () => {
        const runId = await newRun();
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, idx) => store.insertIntent(intent(runId, idx), audit("step.intended", { idx }))),
        );
        expect(results.every((r) => r.created)).toBe(true);
        const events = await store.listAuditEvents(runId);
        expect(events).toHaveLength(31);
        verifyChain(events, runId);
      });

      it("keeps one chain per run, each starting at seq 1 from the genesis hash", async () => {
        const a = await newRun();
        const b = await newRun();
        await store.setRunStatus(a, null, "COMPLETED", audit("run.completed"));
        await store.setRunStatus(b, null, "COMPLETED", audit("run.completed"));
        await store.setRunStatus(a, null, "UNWINDING", audit("run.unwinding"));
        const ea = await store.listAuditEvents(a);
        const eb = await store.listAuditEvents(b);
        expect(ea.map((e) => e.seq)).toEqual([1, 2, 3]);
        expect(eb.map((e) => e.seq)).toEqual([1, 2]);
        verifyChain(ea, a);
        verifyChain(eb, b);
        expect(await store.listAuditEvents(id("run"))).toEqual([]);
      });
    });

    describe("pivots", () => {
      it("createPivot records a PENDING pivot and moves the run to AWAITING_PIVOT", async () => {
        const runId = await newRun();
        const input = pivot(runId);
        const created = await store.createPivot(input, audit("pivot.requested"));
        expect(created).toMatchObject({
          id: input.id,
          runId,
          status: "PENDING",
          summary: input.summary,
          planHash: input.planHash,
          stagedStepIds: ["stp_a", "stp_b"],
          decidedBy: null,
          decidedAt: null,
          reason: null,
        });
        expect(created.plan).toEqual(plan());
        expectDate(created.deadline);
        expect(created.deadline?.getTime()).toBe(input.deadline?.getTime());
        expectDate(created.createdAt);
        expect(await store.getPivot(input.id)).toEqual(created);
        expect((await store.getRun(runId))?.status).toBe("AWAITING_PIVOT");
        expect((await store.listAuditEvents(runId)).map((e) => e.type)).toEqual(["run.created", "pivot.requested"]);
      });

      it("lists a run's pivots oldest first; null deadline round-trips", async () => {
        const runId = await newRun();
        const first = await store.createPivot(pivot(runId, { deadline: null }), audit("pivot.requested"));
        const second = await store.createPivot(pivot(runId), audit("pivot.requested"));
        expect(first.deadline).toBeNull();
        expect((await store.listPivots(runId)).map((p) => p.id)).toEqual([first.id, second.id]);
        expect(await store.getPivot(id("piv"))).toBeNull();
        expect(await store.listPivots(id("run"))).toEqual([]);
      });

      it("decidePivot with a stale plan hash returns null and leaves the pivot PENDING", async () => {
        const runId = await newRun();
        const p = await store.createPivot(pivot(runId), audit("pivot.requested"));
        const decision = { status: "APPROVED" as const, decidedBy: "reviewer@example.com", reason: null };
        expect(await store.decidePivot(p.id, { ...decision, expectedPlanHash: "stale" }, audit("pivot.approved"))).toBeNull();
        expect(
          await store.decidePivot(p.id, { ...decision, expectedPlanHash: undefined as unknown as string }, audit("pivot.approved")),
        ).toBeNull();
        expect(await store.decidePivot(id("piv"), { ...decision, expectedPlanHash: p.planHash }, audit("pivot.approved"))).toBeNull();
        expect((await store.getPivot(p.id))?.status).toBe("PENDING");
        expect((await store.getRun(runId))?.status).toBe("AWAITING_PIVOT");
        expect(await auditCount(runId)).toBe(2);
      });

      it("approval moves the run to COMMITTING; a second decision returns null", async () => {
        const runId = await newRun();
        const p = await store.createPivot(pivot(runId), audit("pivot.requested"));
        const approved = await store.decidePivot(
          p.id,
          { status: "APPROVED", decidedBy: "reviewer@example.com", reason: null, expectedPlanHash: p.planHash },
          audit("pivot.approved", undefined, reviewer),
        );
        expect(approved).toMatchObject({ status: "APPROVED", decidedBy: "reviewer@example.com", reason: null });
        expectDate(approved?.decidedAt);
        expect(await store.getPivot(p.id)).toEqual(approved);
        expect((await store.getRun(runId))?.status).toBe("COMMITTING");

        for (const status of ["APPROVED", "REJECTED"] as const) {
          expect(
            await store.decidePivot(p.id, { status, decidedBy: "other@example.com", reason: "late", expectedPlanHash: p.planHash }, audit("pivot.decided")),
          ).toBeNull();
        }
        expect(await store.getPivot(p.id)).toEqual(approved);
        expect((await store.getRun(runId))?.status).toBe("COMMITTING");
        expect((await store.listAuditEvents(runId)).map((e) => e.type)).toEqual(["run.created", "pivot.requested", "pivot.approved"]);
      });

      it("rejection records the reason and moves the run back to RUNNING", async () => {
        const runId = await newRun();
        const p = await store.createPivot(pivot(runId), audit("pivot.requested"));
        const rejected = await store.decidePivot(
          p.id,
          { status: "REJECTED", decidedBy: "reviewer@example.com", reason: "wrong customer", expectedPlanHash: p.planHash },
          audit("pivot.rejected", undefined, reviewer),
        );
        expect(rejected).toMatchObject({ status: "REJECTED", reason: "wrong customer", decidedBy: "reviewer@example.com" });
        expect((await store.getRun(runId))?.status).toBe("RUNNING");
      });
    });

    describe("escalations", () => {
      it("raises once per dedupe key; the duplicate returns the original without an audit event", async () => {
        const runId = await newRun();
        const { step } = await store.insertIntent(intent(runId, 0), audit("step.intended"));
        const input = escalation(runId, { stepId: step.id });
        const first = await store.createEscalation(input, audit("escalation.raised"));
        expect(first.created).toBe(true);
        expect(first.escalation).toMatchObject({
          id: input.id,
          runId,
          stepId: step.id,
          kind: "OUTCOME_UNKNOWN",
          status: "OPEN",
          title: input.title,
          owner: "payments-team",
          dedupeKey: input.dedupeKey,
          claimedBy: null,
          resolution: null,
          resolvedBy: null,
          resolvedAt: null,
        });
        expect(first.escalation.detail).toEqual(input.detail);
        expectDate(first.escalation.createdAt);

        const dup = await store.createEscalation(
          escalation(runId, { dedupeKey: input.dedupeKey, title: "again" }),
          audit("escalation.raised"),
        );
        expect(dup.created).toBe(false);
        expect(dup.escalation).toEqual(first.escalation);
        expect(await store.getEscalation(input.id)).toEqual(first.escalation);
        expect(await store.findEscalationByDedupeKey(input.dedupeKey)).toEqual(first.escalation);
        expect(await store.findEscalationByDedupeKey(`none:${id("dk")}`)).toBeNull();
        expect(await store.getEscalation(id("esc"))).toBeNull();
        expect(await store.listEscalations({ runId })).toHaveLength(1);
        expect((await store.listAuditEvents(runId)).filter((e) => e.type === "escalation.raised")).toHaveLength(1);
      });

      it("lists oldest first, filtered by run and status", async () => {
        const runId = await newRun();
        const otherRun = await newRun();
        const a = await store.createEscalation(escalation(runId), audit("escalation.raised"));
        const b = await store.createEscalation(escalation(runId, { kind: "APPROVAL_REQUIRED" }), audit("escalation.raised"));
        const c = await store.createEscalation(escalation(otherRun), audit("escalation.raised"));
        await store.resolveEscalation(a.escalation.id, { resolvedBy: "r", resolution: { ok: true } }, audit("escalation.resolved"));

        expect((await store.listEscalations({ runId })).map((e) => e.id)).toEqual([a.escalation.id, b.escalation.id]);
        expect((await store.listEscalations({ runId, status: ["OPEN", "CLAIMED"] })).map((e) => e.id)).toEqual([b.escalation.id]);
        expect((await store.listEscalations({ runId, status: ["RESOLVED"] })).map((e) => e.id)).toEqual([a.escalation.id]);
        expect(await store.listEscalations({ runId, status: [] })).toEqual([]);
        const all = (await store.listEscalations({})).map((e) => e.id);
        const ours = all.filter((x) => [a, b, c].some((e) => e.escalation.id === x));
        expect(ours).toEqual([a.escalation.id, b.escalation.id, c.escalation.id]);
      });

      it("resolves once; the second resolution returns null and writes nothing", async () => {
        const runId = await newRun();
        const { escalation: esc } = await store.createEscalation(escalation(runId), audit("escalation.raised"));
        const resolution = { outcome: "NOT_EXECUTED", evidence: [{ source: "bank statement", rows: 0 }] };
        const resolved = await store.resolveEscalation(
          esc.id,
          { resolvedBy: "reviewer@example.com", resolution },
          audit("escalation.resolved", undefined, reviewer),
        );
        expect(resolved).toMatchObject({ id: esc.id, status: "RESOLVED", resolvedBy: "reviewer@example.com" });
        expect(resolved?.resolution).toEqual(resolution);
        expectDate(resolved?.resolvedAt);
        expect(await store.getEscalation(esc.id)).toEqual(resolved);

        expect(
          await store.resolveEscalation(esc.id, { resolvedBy: "other@example.com", resolution: { outcome: "CONFIRMED" } }, audit("escalation.resolved")),
        ).toBeNull();
        expect(await store.resolveEscalation(id("esc"), { resolvedBy: "x", resolution: null }, audit("x"))).toBeNull();
        expect(await store.getEscalation(esc.id)).toEqual(resolved);
        expect((await store.listAuditEvents(runId)).map((e) => e.type)).toEqual([
          "run.created",
          "escalation.raised",
          "escalation.resolved",
        ]);
      });
    });

    describe("corrections", () => {
      it("drafts one correction per step and lists by rank, then age", async () => {
        const runId = await newRun();
        const steps = [];
        for (const idx of [0, 1, 2]) steps.push((await store.insertIntent(intent(runId, idx), audit("step.intended"))).step);
        const [s0, s1, s2] = steps;
        if (!s0 || !s1 || !s2) throw new Error("expected three steps");

        const customer = await store.createCorrection(
          { id: id("cor"), runId, stepId: s0.id, audience: ["customer"], rank: 2, subject: "Sorry", body: "We emailed you by mistake." },
          audit("correction.drafted"),
        );
        expect(customer).toMatchObject({ runId, stepId: s0.id, audience: ["customer"], rank: 2, status: "DRAFT", subject: "Sorry" });
        expectDate(customer.createdAt);

        const dup = await store.createCorrection(
          { id: id("cor"), runId, stepId: s0.id, audience: ["partner"], rank: 1, subject: "Other", body: "Other" },
          audit("correction.drafted"),
        );
        expect(dup).toEqual(customer);

        const internalLate = await store.createCorrection(
          { id: id("cor"), runId, stepId: s1.id, audience: ["finance"], rank: 0, subject: "Internal", body: "b" },
          audit("correction.drafted"),
        );
        const partner = await store.createCorrection(
          { id: id("cor"), runId, stepId: s2.id, audience: ["partner", "finance"], rank: 1, subject: "Partner", body: "b" },
          audit("correction.drafted"),
        );
        expect((await store.listCorrections(runId)).map((c) => c.id)).toEqual([internalLate.id, partner.id, customer.id]);
        expect((await store.listCorrections(runId)).find((c) => c.id === partner.id)?.audience).toEqual(["partner", "finance"]);
        expect(await store.listCorrections(id("run"))).toEqual([]);
        expect((await store.listAuditEvents(runId)).filter((e) => e.type === "correction.drafted")).toHaveLength(3);
      });
    });
  });
}
