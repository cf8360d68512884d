/**
 * Fault matrix, random mix (faults combined at random, as production mixes them): F1-F5 injected at 2%, 10% and 30% x at least 50 seeded trials per
 * cell, in-process (manual clock), on every store factory (memory, SQLite, and PostgreSQL with
 * SAGABOARD_TEST_PG=1). Each trial is a multi-step run driven like a model: reworded retries on an
 * unknown outcome, an irreversible commit phase behind an approved pivot, and an unwind at the end of
 * failed runs (and of some others). Faults:
 *   F1 failure before the call        reject (4xx) or server_error (5xx before any effect)
 *   F2 effect done, ack lost          timeout_after_effect, or crash_after_effect (the process dies:
 *                                     a fresh engine resumes the run and replays its log)
 *   F3 failure during compensation    the compensator refused (4xx) or timed out on every attempt
 *   F4 duplicate delivery             the same call dispatched twice concurrently by two processes
 *                                     on the same run, or replayed by a fresh process after success
 *   F5 timeout, unknown outcome       timeout_before_effect (the caller cannot tell it from F2)
 * The oracle (tests/support/fault-oracle.ts) checks the world's ledger against the saga log.
 * TRIALS: SAGABOARD_FAULT_TRIALS (default 50 per cell).
 */
import { afterAll, describe, expect, it } from "vitest";
import { SimulatedCrash } from "@/packages/client/src/saga/crash-points";
import { SagaError, ToolCallFailed, ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import type { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";
import type { RunContext } from "@/packages/client/src/saga/run-context";
import type { StepRecord, EscalationRecord } from "@/packages/client/src/saga/store";
import { RunStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import type { Fault } from "@/lib/demo/sim/faults";
import { makeScript, TOOLS_BY_CLASS, type ScriptCall } from "../support/fault-agent";
import { addFigures, computeFigures, emptyFigures, figureLine, goalsMet, Prng, type FaultFigures } from "../support/fault-oracle";
import { makeScenario, storeFactories, type Scenario } from "../support/harness";

const TRIALS = Number(process.env.SAGABOARD_FAULT_TRIALS ?? "50");
const RATES = [0.02, 0.1, 0.3];

/** The ledger op each forward tool's call goes to. */
const OP_OF: Record<string, string> = {
  create_ticket_draft: "ticketing.createDraft",
  create_ticket: "ticketing.create",
  create_email_draft: "email.createDraft",
  charge_card: "payments.charge",
  authorize_payment: "payments.authorize",
  reship_order: "warehouse.reship",
  update_crm_record: "crm.update",
  send_email: "email.send",
};
const COMPENSATION_OPS = ["payments.refund", "payments.cancelAuthorization", "ticketing.close", "ticketing.deleteDraft", "email.deleteDraft", "warehouse.cancelShipment", "crm.restore"];
const MENU = [...TOOLS_BY_CLASS.REVERSIBLE, ...TOOLS_BY_CLASS.COMPENSATABLE, ...TOOLS_BY_CLASS.IRREVERSIBLE];
const REVIEWER = { type: "user" as const, id: "reviewer@example.com" };

interface Counters {
  trials: number;
  F1: number;
  F2: number;
  F3: number;
  F4: number;
  F5: number;
  resumes: number;
  unwound: number;
  completed: number;
  heldIrreversible: number;
  compensatedNotUndone: number;
}

function counters(): Counters {
  return { trials: 0, F1: 0, F2: 0, F3: 0, F4: 0, F5: 0, resumes: 0, unwound: 0, completed: 0, heldIrreversible: 0, compensatedNotUndone: 0 };
}

/** A forward fault of class F1, F2 or F5 (F4 is a delivery pattern, not a provider fault). */
function forwardFault(r: Prng, c: Counters): Fault {
  switch (r.int(1, 3)) {
    case 1:
      c.F1++;
      return r.chance(0.5) ? { kind: "reject", status: 422, code: "invalid_request" } : { kind: "server_error", status: 503 };
    case 2:
      c.F2++;
      return r.chance(0.5) ? { kind: "timeout_after_effect" } : { kind: "crash_after_effect" };
    default:
      c.F5++;
      return { kind: "timeout_before_effect" };
  }
}

/** One seeded trial; returns the run id. */
async function trial(sc: Scenario, seed: number, p: number, c: Counters): Promise<string> {
  const r = new Prng(seed ^ 0x5bd1e995);
  const script = makeScript(seed, MENU, { unwindChance: 0.3, minCalls: 2, maxCalls: 5 });
  let engine: ReviewerEngine = sc.engine();
  let ctx: RunContext = await engine.startRun({ title: `random mix ${seed}`, agent: "fault-agent" });
  const runId = ctx.runId;
  const history: { tool: string; args: unknown }[] = [];

  /** A new process: fresh engine, resume, replay the calls the log holds (each must come back replayed). */
  async function freshProcess(): Promise<RunContext> {
    const e = sc.engine();
    const fresh = await e.resume(runId);
    for (const h of history) {
      try {
        const out = await fresh.call(h.tool, h.args);
        expect(out.status === "ok" && out.replayed, `replay of ${h.tool} in run ${runId} (seed ${seed})`).toBe(true);
      } catch (err) {
        if (!(err instanceof ToolCallFailed)) throw err;
      }
    }
    return fresh;
  }

  async function resume(): Promise<void> {
    c.resumes++;
    engine = sc.engine();
    ctx = await freshProcess();
  }

  /** Calls like a model: reworded retries on unknown outcomes, a resume when the process "died". */
  async function modelCall(call: ScriptCall): Promise<"ok" | "failed" | "held" | "gave_up"> {
    for (let attempt = 0; attempt < 8; attempt++) {
      const args = call.args(attempt);
      if (r.chance(p)) sc.world.faults.inject(OP_OF[call.tool]!, forwardFault(r, c));
      const duplicate = attempt === 0 && r.chance(p);
      try {
        let out;
        if (duplicate) {
          // F4: two processes dispatch the same call at once.
          c.F4++;
          const other = await freshProcess();
          const [mine, theirs] = await Promise.allSettled([ctx.call(call.tool, args), other.call(call.tool, args)]);
          if (theirs.status === "rejected" && !(theirs.reason instanceof ToolOutcomeUnknown || theirs.reason instanceof ToolCallFailed || theirs.reason instanceof SimulatedCrash)) {
            throw theirs.reason;
          }
          if (mine.status === "rejected") throw mine.reason;
          out = mine.value;
        } else {
          out = await ctx.call(call.tool, args);
        }
        if (out.status === "approval_required") return "held";
        history.push({ tool: call.tool, args });
        if (r.chance(p)) {
          // F4: a retry after success (a new process replays the log up to here).
          c.F4++;
          ctx = await freshProcess();
          c.resumes++;
        }
        return "ok";
      } catch (err) {
        if (err instanceof ToolOutcomeUnknown) continue;
        if (err instanceof SimulatedCrash) {
          await resume();
          continue;
        }
        if (err instanceof ToolCallFailed) {
          history.push({ tool: call.tool, args });
          return "failed";
        }
        if (err instanceof SagaError && err.code === "STEP_UNRESOLVED") continue;
        throw err;
      } finally {
        sc.world.faults.clear();
      }
    }
    return "gave_up";
  }

  let failed = false;
  for (const call of script.staging) {
    if ((await modelCall(call)) !== "ok") {
      failed = true;
      break;
    }
  }
  if (!failed && r.chance(0.25)) {
    // An irreversible call outside any pivot: the gate must hold it.
    const held = await ctx.call("send_email", { to: "ada@example.com", subject: "Unapproved", body: `sent without approval (${seed})` });
    expect(held.status).toBe("approval_required");
    c.heldIrreversible++;
  }
  if (!failed && script.commit.length > 0) {
    const pivot = await ctx.requestPivot({ summary: `commit of seed ${seed}`, plan: script.commit.map((x) => ({ tool: x.tool, args: x.args(0) })) });
    await engine.decidePivot(pivot.id, { approve: true, actor: REVIEWER, planHash: pivot.planHash });
    for (const call of script.commit) {
      const outcome = await modelCall(call);
      expect(outcome, `commit call of seed ${seed}`).not.toBe("held");
      if (outcome !== "ok") {
        failed = true;
        break;
      }
    }
  }

  let unwind = failed || script.ending === "unwind";
  if (!unwind) {
    try {
      await ctx.complete();
      c.completed++;
    } catch (err) {
      if (!(err instanceof SagaError)) throw err;
      unwind = true;
    }
  }
  if (unwind) {
    // F3: compensators refuse or time out on every attempt, at the trial's rate.
    for (const op of COMPENSATION_OPS) {
      if (!r.chance(p)) continue;
      c.F3++;
      if (r.chance(0.5)) sc.world.faults.inject(op, { kind: "reject", status: 409, code: "compensation_refused" });
      else sc.world.faults.inject(op, { kind: "timeout_before_effect" }, { times: 3 });
    }
    const report = await sc.engine().unwind(runId, { type: "agent", id: "fault-agent" }, `seed ${seed} failed`);
    expect([RunStatus.UNWOUND, RunStatus.NEEDS_ATTENTION]).toContain(report.status);
    sc.world.faults.clear();
    c.unwound++;
  }
  c.trials++;
  return runId;
}

/** COMPENSATED rows whose effect the real system still shows (the compensator's own read-back). */
async function compensatedNotUndone(sc: Scenario, steps: readonly StepRecord[]): Promise<number> {
  const registry = sc.engine().deps.registry;
  let n = 0;
  for (const s of steps) {
    if (s.status !== StepStatus.COMPENSATED || !s.compensation || !s.compensationKey) continue;
    const comp = registry.compensator(s.compensation.tool);
    const check = await comp.verify(comp.args.parse(s.compensation.args), {
      compensationKey: s.compensationKey,
      target: { stepKey: s.stepKey, externalRef: s.externalRef, tool: s.tool, args: s.args },
    });
    if (!check.done) n++;
  }
  return n;
}

const lines: string[] = [];
afterAll(() => {
  for (const line of lines) console.log(line);
});

describe.each(storeFactories)("random fault mix on $name", ({ name, make }) => {
  it(`F1-F5 at ${RATES.map((x) => `${x * 100}%`).join(", ")} x ${TRIALS} trials`, async () => {
    let total = emptyFigures();
    const all = counters();
    const started = Date.now();
    for (const [ri, p] of RATES.entries()) {
      const sc = await makeScenario(make);
      try {
        const c = counters();
        const runIds: string[] = [];
        for (let t = 0; t < TRIALS; t++) runIds.push(await trial(sc, 1000 * (ri + 1) + t, p, c));
        const steps: StepRecord[] = [];
        const escalations: EscalationRecord[] = [];
        for (const id of runIds) {
          steps.push(...(await sc.store.listSteps(id)));
          escalations.push(...(await sc.store.listEscalations({ runId: id })));
        }
        const figures: FaultFigures = computeFigures(sc.world.ledger.operations(), steps, escalations);
        c.compensatedNotUndone = await compensatedNotUndone(sc, steps);
        total = addFigures(total, figures);
        for (const k of Object.keys(all) as (keyof Counters)[]) all[k] += c[k];
        console.log(
          figureLine(`random-mix ${p * 100}%`, name, figures, {
            trials: c.trials,
            F1: c.F1,
            F2: c.F2,
            F3: c.F3,
            F4: c.F4,
            F5: c.F5,
            resumes: c.resumes,
            unwound: c.unwound,
            "compensated but not undone": c.compensatedNotUndone,
          }),
        );
      } finally {
        await sc.cleanup();
      }
    }
    const line = figureLine("random-mix", name, total, {
      trials: all.trials,
      F1: all.F1,
      F2: all.F2,
      F3: all.F3,
      F4: all.F4,
      F5: all.F5,
      resumes: all.resumes,
      unwound: all.unwound,
      completed: all.completed,
      "held irreversible": all.heldIrreversible,
      "compensated but not undone": all.compensatedNotUndone,
      seconds: ((Date.now() - started) / 1000).toFixed(1),
    });
    lines.push(line);
    expect(total.violations, line).toEqual([]);
    expect(goalsMet(total), line).toBe(true);
    expect(all.compensatedNotUndone, line).toBe(0);
    expect(all.F3, "F3 was injected").toBeGreaterThan(0);
  }, 600_000);
});
