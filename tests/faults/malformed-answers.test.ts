/**
 * Fault matrix, second pass: malformed tool responses. The provider carries the effect out and the
 * connector is handed something that is not this call's result (lib/demo/sim/faults.ts
 * `malformed_after_effect`): an HTML error page, the body cut off halfway, a success without the id,
 * the id as a number, a body of megabytes, a well-formed answer about another key. One fault per
 * shape, each over a rotation of the support agent's tools, on this run's store (SQLite, or
 * PostgreSQL with SAGABOARD_TEST_PG=1), in process on a manual clock.
 *
 * Each trial: the call throws ToolOutcomeUnknown and its step is UNKNOWN, never CONFIRMED, with no
 * external id and the raw answer kept in its recorded reason; the ledger holds the one real effect;
 * the agent's retry reconciles by key (no second call) and confirms the provider's real id. Even
 * trials then unwind (the compensation acts on that id and reads it back undone); odd ones also
 * commit an approved email whose answer is malformed the same way: unknown, then committed again,
 * reconciled, sent once. Judged by the oracle on the ledger (tests/faults/fault-matrix.ts).
 * lookup-broken: the charge's answer has no id and the provider's search answers garbage as well (its
 * endpoint wrapped in the test): the step stays UNKNOWN with an OUTCOME_UNKNOWN escalation, the raw
 * answers in the step's reason and the escalation; a person settles it with the provider's id as
 * evidence, and the unwind refunds that charge once.
 * Trials: SAGABOARD_FAULT_MATRIX_TRIALS (default 2 per shape).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SagaError, ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import { EscalationKind, RunStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import { MALFORMED_SHAPES, type MalformedShape } from "@/lib/demo/sim/faults";
import { storeLabel } from "../support/fault-oracle";
import { makeScenario, storeFactories, type Scenario } from "../support/harness";
import { testStoreKind } from "../support/test-database";
import { figuresFor, matrixLine, MATRIX_TRIALS, recordMatrixLine } from "./fault-matrix";

const REVIEWER = { type: "user" as const, id: "reviewer@example.com" };
const AGENT = { type: "agent" as const, id: "fault-agent" };

/** The staging tools a trial rotates through: the ledger op each calls, and arguments. */
const TOOLS: { tool: string; op: string; args: (n: number) => unknown }[] = [
  { tool: "charge_card", op: "payments.charge", args: (n) => ({ customerId: "cus_ada", amount: 1500 + n, currency: "eur", reason: `reship fee ${n}` }) },
  { tool: "create_ticket", op: "ticketing.create", args: (n) => ({ summary: `Refund for order ${n}`, orderId: String(n) }) },
  { tool: "reship_order", op: "warehouse.reship", args: (n) => ({ orderId: String(n) }) },
  { tool: "create_email_draft", op: "email.createDraft", args: (n) => ({ to: "ada@example.com", subject: `Order ${n}`, body: "Draft." }) },
  { tool: "update_crm_record", op: "crm.update", args: (n) => ({ recordId: "crm_ada", patch: { note: `order ${n}` } }) },
  { tool: "authorize_payment", op: "payments.authorize", args: (n) => ({ customerId: "cus_ada", amount: 900 + n, currency: "eur" }) },
];

const factory = storeFactories.find((f) => f.name === storeLabel(testStoreKind()))!;

/** One call whose answer is malformed: unknown, raw answer kept, then reconciled by key on the retry. */
async function malformedThenReconciled(sc: Scenario, run: Awaited<ReturnType<ReturnType<Scenario["engine"]>["startRun"]>>, tool: string, op: string, args: unknown, shape: MalformedShape) {
  sc.world.faults.inject(op, { kind: "malformed_after_effect", shape });
  const first = await run.call(tool, args).then(
    () => null,
    (e: unknown) => e,
  );
  expect(first, `${tool} on a ${shape} answer`).toBeInstanceOf(ToolOutcomeUnknown);
  expect(sc.world.faults.pending(op), "the fault fired").toBe(0);
  const steps = await sc.store.listSteps(run.runId);
  const step = steps.at(-1)!;
  expect(step).toMatchObject({ tool, status: StepStatus.UNKNOWN });
  expect(step.externalRef ?? null, "no id is recorded from a malformed answer").toBeNull();
  expect(JSON.stringify(step.error)).toMatch(/Raw answer/);
  const effects = sc.world.ledger.effects({ op }).filter((e) => e.key === step.stepKey);
  expect(effects, "the provider did it once").toHaveLength(1);

  const again = await run.call(tool, args);
  expect(again).toMatchObject({ status: "ok", stepIdx: step.stepIdx });
  const settled = (await sc.store.listSteps(run.runId)).find((s) => s.id === step.id)!;
  expect(settled.status).toBe(StepStatus.CONFIRMED);
  expect(settled.externalRef, "confirmed on the provider's own id, found by key").toBe(effects[0]!.ref);
  expect(sc.world.ledger.effects({ op }).filter((e) => e.key === step.stepKey), "no second call").toHaveLength(1);
}

describe(`malformed tool responses on ${factory.name}`, () => {
  // One database for every shape: each fault is judged on its own runs and its own part of the ledger.
  let sc: Scenario;
  beforeAll(async () => {
    sc = await makeScenario(factory.make);
  });
  afterAll(async () => {
    await sc?.cleanup();
  });

  it.each(MALFORMED_SHAPES.map((shape) => ({ shape })))("$shape: never CONFIRMED on the answer; UNKNOWN, reconciled by key, once", async ({ shape }) => {
    try {
      const runIds: string[] = [];
      const from = sc.world.ledger.operations().length;
      for (let t = 0; t < MATRIX_TRIALS; t++) {
        const n = 7000 + 10 * MALFORMED_SHAPES.indexOf(shape) + t;
        const pick = TOOLS[(MALFORMED_SHAPES.indexOf(shape) + t) % TOOLS.length]!;
        const engine = sc.engine();
        const run = await engine.startRun({ title: `malformed ${shape} ${t}`, agent: AGENT.id });
        runIds.push(run.runId);
        await malformedThenReconciled(sc, run, pick.tool, pick.op, pick.args(n), shape);

        if (t % 2 === 0) {
          const report = await sc.engine().unwind(run.runId, AGENT, `malformed ${shape}: roll back`);
          expect(report.status).toBe(RunStatus.UNWOUND);
          expect((await sc.store.listSteps(run.runId)).map((s) => s.status)).toEqual([StepStatus.COMPENSATED]);
        } else {
          const mail = { to: "ada@example.com", subject: `About order ${n}`, body: "It is on its way." };
          const pivot = await run.requestPivot({ summary: `Tell Ada (${shape}).`, plan: [{ tool: "send_email", args: mail }] });
          await engine.decidePivot(pivot.id, { approve: true, actor: REVIEWER, planHash: pivot.planHash });
          sc.world.faults.inject("email.send", { kind: "malformed_after_effect", shape });
          await expect(run.commitPlan(pivot.id)).rejects.toBeInstanceOf(ToolOutcomeUnknown);
          const sendStep = (await sc.store.listSteps(run.runId)).at(-1)!;
          expect(sendStep).toMatchObject({ tool: "send_email", status: StepStatus.UNKNOWN });
          const committed = await (await sc.engine().resume(run.runId)).commitPlan(pivot.id);
          expect(committed.status).toBe("committed");
          expect(sc.world.ledger.effects({ op: "email.send" }).filter((e) => e.key === sendStep.stepKey), "sent once").toHaveLength(1);
        }
      }
      const { figures, escalations } = await figuresFor(sc.store, sc.world.ledger.operations().slice(from), runIds);
      const line = matrixLine({ name: `malformed-answers:${shape}`, trials: MATRIX_TRIALS, figures, escalated: escalations.length });
      recordMatrixLine(line);
      expect(figures.violations, line).toEqual([]);
      expect(figures.effects, "each trial's effects were counted").toBeGreaterThanOrEqual(MATRIX_TRIALS);
    } finally {
      sc.world.faults.clear();
    }
  });

  it("lookup-broken: the lookup cannot settle it either; a person does, from the raw answers kept", async () => {
    const payments = sc.world.payments;
    const search = payments.searchByMetadata;
    try {
      const runIds: string[] = [];
      const from = sc.world.ledger.operations().length;
      for (let t = 0; t < MATRIX_TRIALS; t++) {
        const engine = sc.engine();
        const run = await engine.startRun({ title: `lookup broken ${t}`, agent: AGENT.id });
        runIds.push(run.runId);
        const args = { customerId: "cus_ada", amount: 2500 + t, currency: "eur", reason: `lookup broken ${t}` };
        sc.world.faults.inject("payments.charge", { kind: "malformed_after_effect", shape: "no_id" });
        await expect(run.call("charge_card", args)).rejects.toBeInstanceOf(ToolOutcomeUnknown);
        payments.searchByMetadata = async () => [{ error: "<html>search is down</html>" }] as unknown as Awaited<ReturnType<typeof search>>;
        const retried = await run.call("charge_card", args).then(
          () => null,
          (e: unknown) => e,
        );
        expect(retried instanceof ToolOutcomeUnknown || retried instanceof SagaError, String(retried)).toBe(true);
        payments.searchByMetadata = search;

        const step = (await sc.store.listSteps(run.runId)).at(-1)!;
        expect(step.status, "never confirmed, never guessed").toBe(StepStatus.UNKNOWN);
        const [open] = await sc.store.listEscalations({ runId: run.runId, status: ["OPEN"] });
        expect(open).toMatchObject({ kind: EscalationKind.OUTCOME_UNKNOWN, stepId: step.id });
        expect(JSON.stringify(step.error) + JSON.stringify(open!.detail), "the raw answers are kept for the person").toMatch(/search is down/);
        const [effect] = sc.world.ledger.effects({ op: "payments.charge" }).filter((e) => e.key === step.stepKey);
        expect(effect, "the charge happened").toBeTruthy();
        await engine.settleUnknown(open!.id, { outcome: "CONFIRMED", evidence: `payment ${effect!.ref} carries the step's key`, externalRef: effect!.ref!, actor: REVIEWER });
        const report = await sc.engine().unwind(run.runId, AGENT, "lookup broken: roll back");
        expect(report.status).toBe(RunStatus.UNWOUND);
        expect((await sc.store.listSteps(run.runId)).map((s) => s.status)).toEqual([StepStatus.COMPENSATED]);
      }
      const { figures, escalations } = await figuresFor(sc.store, sc.world.ledger.operations().slice(from), runIds);
      const line = matrixLine({ name: "malformed-answers:lookup-broken", trials: MATRIX_TRIALS, figures, escalated: escalations.length });
      recordMatrixLine(line);
      expect(figures.violations, line).toEqual([]);
      expect(escalations.length, "each trial went to a person").toBe(MATRIX_TRIALS);
    } finally {
      payments.searchByMetadata = search;
      sc.world.faults.clear();
    }
  });
});
