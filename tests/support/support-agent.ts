/**
 * A scripted support agent that imitates a model: it rephrases its arguments every time it retries,
 * and retries eagerly when told an outcome is unknown. It knows nothing of the log; the harness does.
 */
import { SimulatedCrash } from "@/packages/client/src/saga/crash-points";
import type { SagaEngine } from "@/packages/client/src/saga/engine";
import { ToolCallFailed, ToolOutcomeUnknown } from "@/packages/client/src/saga/errors";
import type { CallOutcome, RunContext } from "@/packages/client/src/saga/run-context";
import type { UnwindReport } from "@/packages/client/src/saga/messages";
import type { World } from "@/lib/demo/sim/world";

/** How a model rewords the same ticket summary on each retry (seed 003). */
export const TICKET_PHRASINGS = ["Refund for order 1182", "Order #1182 refund", "Refund: order no. 1182", "1182 - refund request"];

/** Calls a tool, retrying with reworded args when the outcome is unknown (up to 4 tries). */
export async function callLikeAModel(run: RunContext, tool: string, argsFor: (attempt: number) => unknown): Promise<CallOutcome> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run.call(tool, argsFor(attempt));
    } catch (e) {
      if (e instanceof ToolOutcomeUnknown && attempt < 3) continue;
      throw e;
    }
  }
}

/** The seed-003 refund-and-reship run. Returns "failed" when the warehouse refuses the reship. */
export async function refundAndReship(run: RunContext): Promise<"done" | "failed"> {
  await run.call("search_orders", { orderId: "1182" });
  await callLikeAModel(run, "create_ticket", (i) => ({ summary: TICKET_PHRASINGS[i % TICKET_PHRASINGS.length], orderId: "1182" }));
  await callLikeAModel(run, "charge_card", (i) => ({
    customerId: "cus_ada",
    amount: 1500,
    currency: "eur",
    reason: i === 0 ? "re-shipping fee for order 1182" : "Reship fee, order #1182",
    receipt: false,
  }));
  try {
    await callLikeAModel(run, "reship_order", () => ({ orderId: "1182" }));
  } catch (e) {
    if (e instanceof ToolCallFailed) return "failed";
    throw e;
  }
  return "done";
}

/**
 * The seed-003 incident end to end: the ticket's answer is lost (created, reconciled), the worker is
 * killed right after the charge (the engine's crash point must be armed by the caller's
 * `crash_after_effect` fault), the warehouse refuses the reship; a new process resumes from the log
 * and unwinds. The run's id and the unwind's report.
 */
export async function playSeed003(world: Pick<World, "faults">, engine: () => SagaEngine, agent = "support-agent"): Promise<{ runId: string; report: UnwindReport }> {
  world.faults.inject("ticketing.create", { kind: "timeout_after_effect" });
  world.faults.inject("payments.charge", { kind: "crash_after_effect" });
  world.faults.inject("warehouse.reship", { kind: "reject", status: 422, code: "out_of_stock" });
  const first = await engine().startRun({ title: "Refund and reship order 1182", agent });
  const crashed = await refundAndReship(first).then(
    () => false,
    (e: unknown) => {
      if (e instanceof SimulatedCrash) return true;
      throw e;
    },
  );
  if (!crashed) throw new Error("seed 003: the worker should have been killed after the charge");
  const resumed = await engine().resume(first.runId);
  if ((await refundAndReship(resumed)) !== "failed") throw new Error("seed 003: the warehouse should have refused the reship");
  return { runId: first.runId, report: await resumed.unwind("warehouse rejected the reship") };
}
