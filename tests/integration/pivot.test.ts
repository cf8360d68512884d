/**
 * The pivot gate against the simulated systems: nothing irreversible reaches the email ledger before
 * approval; after approval only the approved plan items run, once each; a rejected pivot unwinds
 * every staged effect.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SagaError } from "@/packages/client/src/saga/errors";
import type { RunContext } from "@/packages/client/src/saga/run-context";
import { makeScenario, storeFactories, type Scenario } from "../support/harness";

const reviewer = { type: "user" as const, id: "rita@example.com" };
const apology = { to: "ada@example.com", subject: "Your replacement is on its way", body: "We re-shipped order 1182 and waived the fee." };

async function stage(run: RunContext) {
  await run.call("search_orders", { orderId: "1182" });
  await run.call("create_email_draft", apology);
  await run.call("create_ticket_draft", { summary: "Reship order 1182", orderId: "1182" });
  const auth = await run.call("authorize_payment", { customerId: "cus_ada", amount: 1500, currency: "eur" });
  if (auth.status !== "ok") throw new Error("authorisation should stage freely");
  return (auth.result as { paymentIntentId: string }).paymentIntentId;
}

describe.each(storeFactories)("pivot gate on $name", (factory) => {
  let scenario: Scenario | undefined;
  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  it("refuses irreversible calls before approval, then runs exactly the approved plan", async () => {
    const s = (scenario = await makeScenario(factory.make));
    const engine = s.engine();
    const run = await engine.startRun({ title: "Reship with apology", agent: "support-agent", onBehalfOf: "cus_ada" });
    const paymentIntentId = await stage(run);

    const early = await run.call("send_email", apology);
    expect(early).toMatchObject({ status: "approval_required", reason: "IRREVERSIBLE" });
    expect(s.world.ledger.count({ op: "email.send" })).toBe(0);
    const held = await s.store.listEscalations({ runId: run.runId });
    expect(held.map((e) => e.kind)).toEqual(["APPROVAL_REQUIRED"]);

    const plan = [
      { tool: "capture_payment", args: { paymentIntentId, amount: 1500 } },
      { tool: "send_email", args: apology },
    ];
    const pivot = await run.requestPivot({ summary: "Capture the fee hold and send the apology.", plan, deadline: new Date(Date.UTC(2026, 0, 8)) });
    expect(pivot.stagedStepIds).toHaveLength(3);
    expect((await s.store.getRun(run.runId))?.status).toBe("AWAITING_PIVOT");
    expect(await run.call("send_email", apology)).toMatchObject({ status: "approval_required", reason: "PIVOT_PENDING" });

    await expect(engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: "0".repeat(64) })).rejects.toMatchObject({ code: "PIVOT_CONFLICT" });
    const approved = await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    expect(approved.status).toBe("APPROVED");
    await expect(engine.decidePivot(pivot.id, { approve: false, actor: reviewer, planHash: pivot.planHash, reason: "late" })).rejects.toBeInstanceOf(SagaError);

    expect(await run.call("capture_payment", { paymentIntentId, amount: 1500 })).toMatchObject({ status: "ok", replayed: false });
    const changed = await run.call("send_email", { ...apology, body: "We re-shipped order 1182. Also, 20% off!" });
    expect(changed).toMatchObject({ status: "approval_required", reason: "NOT_IN_PLAN" });
    expect(s.world.ledger.count({ op: "email.send" })).toBe(0);

    expect(await run.call("send_email", apology)).toMatchObject({ status: "ok" });
    // The early hold was superseded by the pivot, so neither it nor the consumed plan item lets a repeat through.
    expect(await run.call("send_email", apology)).toMatchObject({ status: "approval_required", reason: "APPROVAL_USED" });
    expect((await s.store.getEscalation(held[0]!.id))?.status).toBe("RESOLVED");
    expect(s.world.ledger.count({ op: "email.send" })).toBe(1);
    expect(s.world.ledger.count({ op: "payments.capture" })).toBe(1);

    const rows = await s.store.listSteps(run.runId);
    expect(rows.map((r) => [r.tool, r.phase])).toEqual([
      ["create_email_draft", "STAGING"],
      ["create_ticket_draft", "STAGING"],
      ["authorize_payment", "STAGING"],
      ["capture_payment", "COMMIT"],
      ["send_email", "COMMIT"],
    ]);
    expect(rows.filter((r) => r.phase === "COMMIT").every((r) => r.approvalId === pivot.id)).toBe(true);
    expect(await engine.irreversibleBeforePivot(run.runId)).toBe(0);
    await run.complete();
    expect((await s.store.getRun(run.runId))?.status).toBe("COMPLETED");
  });

  it("a plan revised while pending cannot be approved with the old plan hash", async () => {
    const s = (scenario = await makeScenario(factory.make));
    const engine = s.engine();
    const run = await engine.startRun({ title: "Revised proposal", agent: "support-agent" });
    const first = await run.requestPivot({ summary: "Send the apology.", plan: [{ tool: "send_email", args: apology }] });
    const revised = await run.requestPivot({ summary: "Send a warmer apology.", plan: [{ tool: "send_email", args: { ...apology, body: "We are so sorry." } }] });
    expect(revised.id).toBe(first.id);
    expect(revised.planHash).not.toBe(first.planHash);
    await expect(engine.decidePivot(first.id, { approve: true, actor: reviewer, planHash: first.planHash })).rejects.toMatchObject({ code: "PIVOT_CONFLICT" });
    expect((await s.store.getPivot(first.id))?.status).toBe("PENDING");
    await engine.decidePivot(first.id, { approve: true, actor: reviewer, planHash: revised.planHash });
    expect(await run.call("send_email", apology)).toMatchObject({ status: "approval_required", reason: "NOT_IN_PLAN" });
    expect(await run.call("send_email", { ...apology, body: "We are so sorry." })).toMatchObject({ status: "ok" });
    expect(s.world.ledger.count({ op: "email.send" })).toBe(1);
    expect((await s.store.listAuditEvents(run.runId)).some((e) => e.type === "pivot.revised")).toBe(true);
  });

  it("a held irreversible call runs once after a reviewer approves it in the queue", async () => {
    const s = (scenario = await makeScenario(factory.make));
    const engine = s.engine();
    const run = await engine.startRun({ title: "Urgent notice", agent: "support-agent" });
    const held = await run.call("send_email", apology);
    if (held.status !== "approval_required" || !held.escalationId) throw new Error("expected a held call");
    expect(await run.call("send_email", apology)).toMatchObject({ status: "approval_required", escalationId: held.escalationId });
    await engine.decideHeldCall(held.escalationId, { approve: true, actor: reviewer, note: "ok to send" });
    expect(await run.call("send_email", apology)).toMatchObject({ status: "ok" });
    expect(await run.call("send_email", apology)).toMatchObject({ status: "approval_required", reason: "APPROVAL_USED" });
    expect(s.world.ledger.count({ op: "email.send" })).toBe(1);
    const [row] = await s.store.listSteps(run.runId);
    expect(row).toMatchObject({ phase: "APPROVED_HOLD", approvalId: held.escalationId });
    expect(await engine.irreversibleBeforePivot(run.runId)).toBe(0);
  });

  it("a charge whose refund cannot be built needs approval before the call", async () => {
    const s = (scenario = await makeScenario(factory.make));
    const run = await s.engine().startRun({ title: "Final sale", agent: "support-agent" });
    const outcome = await run.call("charge_card", { customerId: "cus_ada", amount: 900, currency: "eur", reason: "final sale", finalSale: true });
    expect(outcome).toMatchObject({ status: "approval_required", reason: "COMPENSATION_UNBUILDABLE" });
    expect(s.world.ledger.count({ op: "payments.charge" })).toBe(0);
    expect(await s.store.listSteps(run.runId)).toEqual([]);
  });

  it("a rejected pivot unwinds every staged effect silently", async () => {
    const s = (scenario = await makeScenario(factory.make));
    const engine = s.engine();
    const run = await engine.startRun({ title: "Reship with apology", agent: "support-agent" });
    const paymentIntentId = await stage(run);
    const pivot = await run.requestPivot({ summary: "Capture and send.", plan: [{ tool: "capture_payment", args: { paymentIntentId, amount: 1500 } }] });
    await expect(engine.decidePivot(pivot.id, { approve: false, actor: reviewer, planHash: pivot.planHash })).rejects.toMatchObject({ code: "INVALID_ARGS" });
    await engine.decidePivot(pivot.id, { approve: false, actor: reviewer, planHash: pivot.planHash, reason: "the customer asked for a refund instead" });
    const report = await run.unwind("pivot rejected");
    expect(report).toMatchObject({ status: "UNWOUND", compensated: [2, 1, 0], corrections: [] });

    const { ledger } = s.world;
    expect(ledger.count({ op: "payments.cancelAuthorization" })).toBe(1);
    expect(ledger.count({ op: "email.deleteDraft" })).toBe(1);
    expect(ledger.count({ op: "ticketing.deleteDraft" })).toBe(1);
    expect(ledger.count({ op: "payments.capture" })).toBe(0);
    expect(ledger.count({ op: "email.send" })).toBe(0);
    expect((await s.world.payments.getPaymentIntent(paymentIntentId))?.status).toBe("canceled");
    expect(await s.store.listCorrections(run.runId)).toEqual([]);
  });

  it("an unwind after an email went out drafts a customer correction, ranked last", async () => {
    const s = (scenario = await makeScenario(factory.make));
    const engine = s.engine();
    const run = await engine.startRun({ title: "Wrong email", agent: "support-agent" });
    await run.call("create_ticket", { summary: "Order 1182 refund", orderId: "1182" });
    await run.call("charge_card", { customerId: "cus_ada", amount: 1500, currency: "eur", reason: "fee", receipt: true });
    const pivot = await run.requestPivot({ summary: "Send the apology.", plan: [{ tool: "send_email", args: apology }] });
    await engine.decidePivot(pivot.id, { approve: true, actor: reviewer, planHash: pivot.planHash });
    await run.call("send_email", apology);
    const report = await run.unwind("the agent emailed the wrong customer");
    expect(report.status).toBe("NEEDS_ATTENTION");
    const corrections = await s.store.listCorrections(run.runId);
    expect(corrections.map((c) => [c.rank, c.audience])).toEqual([
      [2, ["customer"]],
      [2, ["customer"]],
    ]);
    expect(s.world.ledger.count({ op: "payments.refund" })).toBe(1);
    expect(s.world.ledger.count({ op: "ticketing.close" })).toBe(1);
    expect(s.world.ledger.count({ op: "email.send" })).toBe(1);
  });
});
