import { requireEscalationWorker } from "./escalation-access";
import { serverSearchLagMs } from "@/lib/connectors/server-connectors";
import { getPrisma } from "@/lib/db/prisma";
import { sharedSagaStore } from "@/lib/db/prisma-saga-store";
import { SagaError } from "@/lib/saga/errors";
import type { Json, ToolEffect } from "@/lib/saga/tools";
import { ZEscalationId } from "./claim-escalation";
import { connectorRegistry, withDb } from "./context";
import { systemOfTool } from "./tool-systems";
import type { TRealSystemCheck } from "./views";

/** The longest pause before the second lookup (the engine's reconcile re-checks after 2 s). */
const MAX_RECHECK_MS = 2_000;

/**
 * "Check the real system": runs the step's own lookup (its key, as the connectors send it) with the
 * connector this server holds for the tool (lib/connectors/server-connectors.ts), and reports what it
 * found. A server without one (the connectors live with the worker) says so, and the person checks by
 * hand. Changes nothing: settling
 * the outcome with this as evidence is a separate, audited decision (resolve-escalation). When the
 * first lookup finds nothing it looks once more after the search lag, because search indexes trail
 * writes.
 */
export async function checkRealSystem(escalationId: string): Promise<TRealSystemCheck> {
  const id = ZEscalationId.parse(escalationId);
  await requireEscalationWorker(id);
  const store = sharedSagaStore(await getPrisma());
  const escalation = await store.getEscalation(id);
  if (!escalation) throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${id} does not exist; reload the queue.`);
  if (!escalation.stepId) {
    throw new SagaError("STEP_NOT_FOUND", `Escalation ${id} is about a call that was held before it ran; there is no effect to look up.`);
  }
  const step = await store.getStep(escalation.stepId);
  if (!step) throw new SagaError("STEP_NOT_FOUND", `The step of escalation ${id} does not exist.`);
  const registry = connectorRegistry();
  const system = systemOfTool(step.tool, (await withDb((prisma) => prisma.toolPolicy.findUnique({ where: { name: step.tool }, select: { system: true } })))?.system);
  if (!registry.has(step.tool)) {
    throw new SagaError(
      "UNKNOWN_TOOL",
      `No connector on this server holds ${step.tool} (its connectors run with the worker), so it cannot look step key ${step.stepKey} up in ${system}; check ${system} by hand, then record what you found.`,
    );
  }
  const def = registry.tool(step.tool);
  const lookup = def.lookup;
  if (!lookup) throw new SagaError("INVALID_TOOL_DEFINITION", `${step.tool} has no lookup; check the system by hand.`);
  const parsed = def.args.safeParse(step.args);
  const args: unknown = parsed.success ? parsed.data : step.args;

  let effect: ToolEffect | null = null;
  let error: string | null = null;
  let lookups = 0;
  for (const pauseMs of [0, Math.min(serverSearchLagMs() + 100, MAX_RECHECK_MS)]) {
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    lookups++;
    try {
      effect = await lookup(step.stepKey, args);
      error = null;
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    if (effect) break;
  }
  return {
    escalationId: id,
    tool: step.tool,
    system,
    stepKey: step.stepKey,
    found: effect !== null,
    externalRef: effect?.externalRef ?? null,
    result: effect ? (JSON.parse(JSON.stringify(effect.result ?? null)) as Json) : null,
    lookups,
    error,
    checkedAt: new Date().toISOString(),
    stepStatus: step.status,
  };
}
