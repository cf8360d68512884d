/**
 * What reviewers' decisions need of a saga store, as one suite every store runs (the memory store,
 * the Prisma store on SQLite and on PostgreSQL): edit before approve (fenced on PENDING + the
 * loaded plan hash; only the edited call may run, once), a rejection code the agent reads back, and
 * a manual repair written back to the step that finishes the run when nothing else is left.
 * The engine drives real runs over the store; the fake system's effects are the oracle.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SagaError } from "@/packages/client/src/saga/errors";
import { editPivotPlanItem } from "@/packages/client/src/saga/edit-pivot-plan";
import { attentionLeft, finishUnwoundRun } from "@/packages/client/src/saga/finish-unwound-run";
import { recordManualRepair } from "@/packages/client/src/saga/record-manual-repair";
import { decidePivot } from "@/packages/client/src/saga/decide-pivot";
import type { Actor, SagaStore } from "@/packages/client/src/saga/store";
import { FakeSystem, fakeCompensator, fakeTools } from "@/packages/client/src/saga/testkit";
import { ToolRegistry } from "@/packages/client/src/saga/tools";
import { EscalationKind, RunStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import type { ContractStore } from "./saga-store-contract";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

const reviewer: Actor = { type: "user", id: "rita@example.com" };

/** Runs the reviewer contract against `makeStore` (called once per test). */
export function describeReviewerStoreContract(name: string, makeStore: () => Promise<ContractStore>): void {
  describe(`Reviewer decisions on the store: ${name}`, () => {
    let store: SagaStore;
    let cleanup: (() => Promise<void>) | undefined;
    let sys: FakeSystem;
    let registry: ToolRegistry;
    let engine: ReviewerEngine;

    beforeEach(async () => {
      const made = await makeStore();
      store = made.store;
      cleanup = made.cleanup;
      sys = new FakeSystem();
      registry = new ToolRegistry(fakeTools(sys), [fakeCompensator(sys, "undo"), fakeCompensator(sys, "refund")]);
      engine = new ReviewerEngine({ store, registry, recheckAfterMs: 0, backoffMs: 1, maxAttempts: 1 });
    });

    afterEach(async () => {
      await cleanup?.();
      cleanup = undefined;
    });

    async function pendingPivot() {
      const run = await engine.startRun({ title: "reship order 7", agent: "contract-agent" });
      await run.call("stage_draft", { text: "draft" });
      const pivot = await run.requestPivot({
        summary: "email the customer and charge",
        plan: [
          { tool: "send_email", args: { text: "Your order ships Monday." } },
          { tool: "charge_card", args: { text: "reship fee", amount: 500 } },
        ],
      });
      return { run, pivot };
    }

    it("an edit replaces the plan item, changes the plan hash, keeps the diff, and only the edited call runs, once", async () => {
      const { run, pivot } = await pendingPivot();
      const edited = await editPivotPlanItem(
        { store, registry },
        { pivotId: pivot.id, planHash: pivot.planHash, itemIdx: 0, args: { text: "Your order ships Tuesday." }, note: "the date was wrong", actor: reviewer },
      );
      if (!edited.ok) throw new Error(`edit refused: ${edited.reason}`);
      expect(edited.pivot.planHash).not.toBe(pivot.planHash);
      expect(edited.pivot.plan[0]?.args).toEqual({ text: "Your order ships Tuesday." });
      expect(edited.pivot.plan[1]).toEqual(pivot.plan[1]);

      // What the agent reads back is the edited plan, with the diff.
      const read = await store.getPivot(pivot.id);
      expect(read?.planHash).toBe(edited.pivot.planHash);
      expect(read?.edits).toHaveLength(1);
      expect(read?.edits?.[0]).toMatchObject({
        itemIdx: 0,
        tool: "send_email",
        argsBefore: { text: "Your order ships Monday." },
        argsAfter: { text: "Your order ships Tuesday." },
        planHashBefore: pivot.planHash,
        planHashAfter: edited.pivot.planHash,
        editedBy: reviewer.id,
        note: "the date was wrong",
      });
      expect(Number.isNaN(Date.parse(read?.edits?.[0]?.editedAt ?? ""))).toBe(false);
      const events = await store.listAuditEvents(run.runId);
      expect(events.filter((e) => e.type === "pivot.edited")).toHaveLength(1);

      // A second edit (or a decision) holding the old hash changes nothing.
      const stale = await editPivotPlanItem({ store, registry }, { pivotId: pivot.id, planHash: pivot.planHash, itemIdx: 0, args: { text: "x" }, note: null, actor: reviewer });
      expect(stale).toMatchObject({ ok: false, reason: "plan_changed" });
      await expect(engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash })).rejects.toBeInstanceOf(SagaError);

      await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: edited.pivot.planHash });
      const original = await run.call("send_email", { text: "Your order ships Monday." });
      expect(original.status).toBe("approval_required");
      const ok = await run.call("send_email", { text: "Your order ships Tuesday." });
      expect(ok.status).toBe("ok");
      const again = await run.call("charge_card", { text: "reship fee", amount: 500 });
      expect(again.status).toBe("ok");
      expect(sys.effects.filter((e) => e.tool === "send_email").map((e) => e.args)).toEqual([{ text: "Your order ships Tuesday." }]);
    });

    it("an edit may lower an amount but not raise it, must fit the tool's schema, and is refused once decided", async () => {
      const { pivot } = await pendingPivot();
      const raise = editPivotPlanItem({ store, registry }, { pivotId: pivot.id, planHash: pivot.planHash, itemIdx: 1, args: { text: "reship fee", amount: 900 }, note: null, actor: reviewer });
      await expect(raise).rejects.toThrow(/lower an amount, not raise it/);
      const bad = editPivotPlanItem({ store, registry }, { pivotId: pivot.id, planHash: pivot.planHash, itemIdx: 1, args: { text: "" }, note: null, actor: reviewer });
      await expect(bad).rejects.toThrow(/do not fit charge_card: args.text/);
      const same = await editPivotPlanItem({ store, registry }, { pivotId: pivot.id, planHash: pivot.planHash, itemIdx: 1, args: { amount: 500, text: "reship fee" }, note: null, actor: reviewer });
      expect(same).toMatchObject({ ok: false, reason: "unchanged" });
      const lower = await editPivotPlanItem({ store, registry }, { pivotId: pivot.id, planHash: pivot.planHash, itemIdx: 1, args: { text: "reship fee", amount: 300 }, note: null, actor: reviewer });
      expect(lower.ok).toBe(true);
      if (!lower.ok) return;
      await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: lower.pivot.planHash });
      const late = await editPivotPlanItem({ store, registry }, { pivotId: pivot.id, planHash: lower.pivot.planHash, itemIdx: 0, args: { text: "late" }, note: null, actor: reviewer });
      expect(late).toMatchObject({ ok: false, reason: "already_decided" });
    });

    it("a rejection carries a code from the closed list back to the agent", async () => {
      const { run, pivot } = await pendingPivot();
      const rejected = await decidePivot({ store }, { pivotId: pivot.id, approve: false, planHash: pivot.planHash, reasonCode: "REVISE_ARGUMENTS", reason: "Say Tuesday, not Monday.", actor: reviewer });
      expect(rejected).toMatchObject({ status: "REJECTED", reasonCode: "REVISE_ARGUMENTS", reason: "Say Tuesday, not Monday.", decidedBy: reviewer.id });
      expect((await store.getPivot(pivot.id))?.reasonCode).toBe("REVISE_ARGUMENTS");
      expect((await store.getRun(run.runId))?.status).toBe(RunStatus.RUNNING);
      // Decided: a second decision with the same hash is fenced out.
      await expect(decidePivot({ store }, { pivotId: pivot.id, approve: false, planHash: pivot.planHash, reasonCode: "OTHER", reason: "again", actor: reviewer })).rejects.toThrow(/already rejected/);
      await expect(decidePivot({ store }, { pivotId: pivot.id, approve: false, planHash: pivot.planHash, reasonCode: "NOPE" as never, reason: "x", actor: reviewer })).rejects.toThrow(/reasonCode must be one of/);
    });

    async function runWithFailedCompensation() {
      const run = await engine.startRun({ title: "refund order 9", agent: "contract-agent" });
      const ticket = await run.call("create_ticket", { text: "ticket" });
      const charge = await run.call("charge_card", { text: "charge", amount: 700 });
      if (ticket.status !== "ok" || charge.status !== "ok") throw new Error("staging should succeed");
      const steps = await store.listSteps(run.runId);
      for (const s of steps) sys.refuseCompensationOf.add(s.stepKey);
      const report = await run.unwind("customer cancelled");
      expect(report.status).toBe(RunStatus.NEEDS_ATTENTION);
      const escalations = await store.listEscalations({ runId: run.runId, status: ["OPEN", "CLAIMED"] });
      expect(escalations.map((e) => e.kind)).toEqual([EscalationKind.COMPENSATION_FAILED, EscalationKind.COMPENSATION_FAILED]);
      return { runId: run.runId, escalations };
    }

    it("a manual repair is written back to its step, and the run is UNWOUND once nothing is left for people", async () => {
      const { runId, escalations } = await runWithFailedCompensation();
      const [first, second] = escalations;
      if (!first || !second) throw new Error("two escalations expected");

      const one = await recordManualRepair(store, { escalationId: first.id, note: "Closed the ticket by hand.", repairRef: "SUP-77", actor: reviewer });
      expect(one.step.status).toBe(StepStatus.COMPENSATION_FAILED); // the log keeps what the compensation did
      expect(one.step.manualRepair).toMatchObject({ repairedBy: reviewer.id, repairRef: "SUP-77", note: "Closed the ticket by hand.", escalationId: first.id });
      expect(one.escalation).toMatchObject({ status: "RESOLVED", resolvedBy: reviewer.id });
      expect(one.run.finished).toBe(false);
      expect(one.run.left).toEqual([{ kind: "open_escalation", escalationId: second.id, escalationKind: "COMPENSATION_FAILED" }, expect.objectContaining({ kind: "unrepaired_compensation" })]);
      expect((await store.getRun(runId))?.status).toBe(RunStatus.NEEDS_ATTENTION);
      const read = await store.getStep(first.stepId ?? "");
      expect(read?.manualRepair?.repairRef).toBe("SUP-77");

      // Twice: refused, and nothing changes.
      await expect(recordManualRepair(store, { escalationId: first.id, note: "again", repairRef: null, actor: reviewer })).rejects.toThrow(/already resolved/);

      const two = await recordManualRepair(store, { escalationId: second.id, note: "Refunded 7.00 EUR in the console.", repairRef: null, actor: reviewer });
      expect(two.run.finished).toBe(true);
      expect((await store.getRun(runId))?.status).toBe(RunStatus.UNWOUND);
      const events = (await store.listAuditEvents(runId)).map((e) => e.type);
      expect(events.filter((t) => t === "step.repaired_by_hand")).toHaveLength(2);
      expect(events.filter((t) => t === "run.settled")).toHaveLength(1);
      expect(attentionLeft({ steps: await store.listSteps(runId), escalations: await store.listEscalations({ runId }), corrections: await store.listCorrections(runId) })).toEqual([]);
      // Finishing again does nothing; unwinding again finds nothing left for people.
      expect((await finishUnwoundRun(store, runId, reviewer)).finished).toBe(false);
      const again = await (await engine.resume(runId)).unwind("unwound again");
      expect(again.status).toBe(RunStatus.UNWOUND);
      expect(again.compensationFailed).toEqual([]);
    });

    it("a repair of a step whose compensation settled meanwhile is refused and writes nothing", async () => {
      const { runId, escalations } = await runWithFailedCompensation();
      const first = escalations[0];
      if (!first?.stepId) throw new Error("escalation with a step expected");
      // The worker's retry confirmed the compensation after all.
      await store.updateStep(first.stepId, { status: [StepStatus.COMPENSATION_FAILED] }, { status: StepStatus.COMPENSATED, compensationState: "CONFIRMED" }, { type: "step.compensated", actor: reviewer });
      await expect(recordManualRepair(store, { escalationId: first.id, note: "by hand", repairRef: null, actor: reviewer })).rejects.toThrow(/not COMPENSATION_FAILED/);
      expect((await store.getEscalation(first.id))?.status).toBe("OPEN");
      expect((await store.getStep(first.stepId))?.manualRepair ?? null).toBeNull();
      expect((await store.getRun(runId))?.status).toBe(RunStatus.NEEDS_ATTENTION);
    });
  });
}
