/**
 * The demo's runs, played by a scripted support agent against the simulated systems. `npm run
 * db:seed` records them so a newcomer opens Sagaboard onto real saga logs: an incident that unwound,
 * a pivot waiting for a reviewer, a committed run, a held irreversible call, a failed compensation,
 * and an unwind that needs a customer-facing correction.
 */
import { ToolCallFailed, ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import { SimulatedCrash } from "@/packages/client/src/saga/crash-points";
import type { SagaEngine } from "@/packages/client/src/saga/engine";
import type { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";
import type { CallOutcome, RunContext } from "@/packages/client/src/saga/run-context";
import type { PivotRecord } from "@/packages/client/src/saga/store";
import type { Fault } from "@/lib/demo/sim/faults";
import type { WorldLike } from "@/lib/demo/sim/remote";

/** The simulated world the demo plays in: in-process (World) or hosted by the server (RemoteWorld). */
export type DemoWorld = WorldLike & { faults: { inject(op: string, fault: Fault): void | Promise<void> } };

/** Prints what the agent does, in plain words. */
export type Say = (line: string) => void;

/** The person who decides the demo's pivots (the dashboard's role; the demo plays it). */
export type DemoReviewer = (pivot: PivotRecord) => Promise<string>;

/** A reviewer that approves with the server's own engine, as the dashboard would. */
export function reviewerWith(engine: ReviewerEngine, reviewerId = "reviewer@sagaboard.local"): DemoReviewer {
  return async (pivot) => {
    await engine.decidePivot(pivot.id, { approve: true, actor: { type: "user", id: reviewerId }, planHash: pivot.planHash });
    return reviewerId;
  };
}
const apology = { to: "ada@example.com", subject: "Your replacement is on its way", body: "We re-shipped order 1182 and waived the fee." };
const PHRASINGS = ["Refund for order 1182", "Order #1182 refund", "Refund: order no. 1182"];

async function retryLikeAModel(say: Say, run: RunContext, tool: string, argsFor: (i: number) => unknown): Promise<CallOutcome> {
  for (let i = 0; ; i++) {
    try {
      return await run.call(tool, argsFor(i));
    } catch (e) {
      if (!(e instanceof ToolOutcomeUnknown) || i >= 2) throw e;
      say(`  ${tool} timed out: outcome unknown. The model retries with new wording; the harness reconciles first.`);
    }
  }
}

/** Seed 003's incident: 504 after success, a crash after the charge, a resume, a rejected reship, the unwind. */
async function refundIncident(engine: () => SagaEngine, world: DemoWorld, say: Say): Promise<string> {
  say("1. Refund-and-reship incident (seed 003)");
  await world.faults.inject("ticketing.create", { kind: "timeout_after_effect" });
  await world.faults.inject("payments.charge", { kind: "crash_after_effect" });
  await world.faults.inject("warehouse.reship", { kind: "reject", status: 422, code: "out_of_stock" });
  const play = async (run: RunContext) => {
    await run.call("search_orders", { orderId: "1182" });
    await retryLikeAModel(say, run, "create_ticket", (i) => ({ summary: PHRASINGS[i % PHRASINGS.length], orderId: "1182" }));
    await retryLikeAModel(say, run, "charge_card", () => ({ customerId: "cus_ada", amount: 1500, currency: "eur", reason: "re-shipping fee, order 1182" }));
    await run.call("reship_order", { orderId: "1182" });
  };
  const first = await engine().startRun({ title: "Refund and reship order 1182", agent: "support-agent", onBehalfOf: "ada@example.com", metadata: { orderId: "1182" } });
  try {
    await play(first);
  } catch (e) {
    if (!(e instanceof SimulatedCrash)) throw e;
    say("  The worker died right after the card was charged, before recording it. A new process resumes from the log.");
  }
  const resumed = await engine().resume(first.runId);
  try {
    await play(resumed);
  } catch (e) {
    if (!(e instanceof ToolCallFailed)) throw e;
    say(`  The warehouse refused the reship (${e.reason}); the run unwinds.`);
  }
  const report = await resumed.unwind("warehouse rejected the reship");
  say(`  Unwound: compensated steps ${report.compensated.join(", ")}; corrections: ${report.corrections.length} (receipts were off).`);
  return first.runId;
}

async function stageReship(run: RunContext): Promise<string> {
  await run.call("search_orders", { orderId: "2001" });
  await run.call("create_email_draft", { ...apology, to: "bo@example.com" });
  await run.call("create_ticket_draft", { summary: "Reship order 2001", orderId: "2001" });
  const auth = await run.call("authorize_payment", { customerId: "cus_bo", amount: 1800, currency: "eur" });
  return auth.status === "ok" ? (auth.result as { paymentIntentId: string }).paymentIntentId : "";
}

/** A happy path that stops at the pivot and waits for a reviewer. */
async function pendingPivot(engine: () => SagaEngine, say: Say): Promise<string> {
  say("2. Reship with an apology: staged, waiting at the pivot for a reviewer");
  const run = await engine().startRun({ title: "Reship order 2001 with an apology", agent: "support-agent", onBehalfOf: "bo@example.com" });
  const paymentIntentId = await stageReship(run);
  const pivot = await run.requestPivot({
    summary: "Capture the 18.00 EUR hold, open the reship ticket, and email Bo that the replacement is on its way.",
    plan: [
      { tool: "capture_payment", args: { paymentIntentId, amount: 1800 } },
      { tool: "send_email", args: { ...apology, to: "bo@example.com" } },
    ],
    deadline: new Date(Date.now() + 7 * 24 * 3600 * 1000),
  });
  say(`  Pivot ${pivot.id} requested: ${pivot.plan.length} commit calls, ${pivot.stagedStepIds.length} staged effects.`);
  return run.runId;
}

/** A pivot approved and committed. */
async function committedRun(engine: () => SagaEngine, approve: DemoReviewer, say: Say): Promise<string> {
  say("3. The same kind of run, approved and committed");
  const run = await engine().startRun({ title: "Reship order 3107", agent: "support-agent", onBehalfOf: "cy@example.com" });
  const auth = await run.call("authorize_payment", { customerId: "cus_cy", amount: 2500, currency: "eur" });
  const paymentIntentId = auth.status === "ok" ? (auth.result as { paymentIntentId: string }).paymentIntentId : "";
  const mail = { to: "cy@example.com", subject: "Your desk ships tomorrow", body: "We re-shipped order 3107." };
  const pivot = await run.requestPivot({ summary: "Capture the reship fee and tell Cy.", plan: [{ tool: "capture_payment", args: { paymentIntentId, amount: 2500 } }, { tool: "send_email", args: mail }] });
  const who = await approve(pivot);
  say(`  ${who} approved pivot ${pivot.id}; the agent commits the approved plan, item by item.`);
  await run.commitPlan(pivot.id);
  return run.runId;
}

/** An irreversible call attempted outside a pivot: held in the escalation queue. */
async function heldIrreversible(engine: () => SagaEngine, say: Say): Promise<string> {
  say("4. An irreversible email attempted outside a pivot");
  const run = await engine().startRun({ title: "Notify customer about delay", agent: "support-agent", onBehalfOf: "ada@example.com" });
  const outcome = await run.call("send_email", { to: "ada@example.com", subject: "Delay on order 1182", body: "Your order is delayed by two days." });
  if (outcome.status === "approval_required") say(`  Held: ${outcome.message} (escalation ${outcome.escalationId}).`);
  return run.runId;
}

/** A compensation that fails: escalated with the remaining state. */
async function failedCompensation(engine: () => SagaEngine, world: DemoWorld, say: Say): Promise<string> {
  say("5. A refund that the payment provider refuses during the unwind");
  const run = await engine().startRun({ title: "Goodwill credit for order 2001", agent: "support-agent", onBehalfOf: "bo@example.com" });
  await run.call("update_crm_record", { recordId: "crm_bo", patch: { goodwill: "credit issued" } });
  await run.call("charge_card", { customerId: "cus_bo", amount: 700, currency: "eur", reason: "express shipping upgrade" });
  await world.faults.inject("payments.refund", { kind: "reject", status: 402, code: "insufficient_balance" });
  const report = await run.unwind("customer cancelled the upgrade");
  say(`  Compensation failed for step(s) ${report.compensationFailed.join(", ")}; escalated with what is still charged.`);
  return run.runId;
}

/** An unwind after a customer saw an email: a correction draft for support staff. */
async function customerCorrection(engine: () => SagaEngine, approve: DemoReviewer, say: Say): Promise<string> {
  say("6. An email went out, then the run had to be unwound");
  const run = await engine().startRun({ title: "Price-match refund for order 1182", agent: "support-agent", onBehalfOf: "ada@example.com" });
  await run.call("create_ticket", { summary: "Price match order 1182", orderId: "1182" });
  const mail = { to: "ada@example.com", subject: "Your price-match refund", body: "We refunded 12.00 EUR." };
  const pivot = await run.requestPivot({ summary: "Tell Ada about the price match.", plan: [{ tool: "send_email", args: mail }] });
  await approve(pivot);
  await run.call("send_email", mail);
  const report = await run.unwind("the price match did not apply to this order");
  say(`  Ticket closed; ${report.corrections.length} correction drafted for the customer, waiting for support staff.`);
  return run.runId;
}

/** Plays every demo scenario; returns the run ids. */
export async function runDemoScenarios(engine: () => SagaEngine, world: DemoWorld, approve: DemoReviewer, say: Say): Promise<string[]> {
  await world.crm.seed("crm_bo", { tier: "silver" });
  await world.crm.seed("crm_ada", { tier: "gold" });
  return [
    await refundIncident(engine, world, say),
    await pendingPivot(engine, say),
    await committedRun(engine, approve, say),
    await heldIrreversible(engine, say),
    await failedCompensation(engine, world, say),
    await customerCorrection(engine, approve, say),
  ];
}
