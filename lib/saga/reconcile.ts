import { SimulatedCrash, CrashPoint } from "./crash-points";
import { backoffDelay, type EngineDeps } from "./deps";
import { SagaError } from "./errors";
import { actorLabel, type Actor, type StepRecord } from "./store";
import type { Json, ToolDefinition, ToolEffect } from "./tools";
import { EscalationKind, StepStatus, UNSETTLED_STATUSES } from "./vocabulary";

/** What a lookup attempt said: found, absent, or the lookup itself failed. */
type LookupResult = { kind: "found"; effect: ToolEffect } | { kind: "absent" } | { kind: "error"; message: string };

async function lookupOnce(def: ToolDefinition, step: StepRecord): Promise<LookupResult> {
  try {
    const effect = await def.lookup!(step.stepKey, step.args);
    return effect ? { kind: "found", effect } : { kind: "absent" };
  } catch (e) {
    if (e instanceof SimulatedCrash) throw e;
    return { kind: "error", message: e instanceof Error ? e.message : String(e) };
  }
}

/** Looks the key up, retrying a failing lookup with backoff; null when the lookup never answered. */
async function lookupWithRetry(deps: EngineDeps, def: ToolDefinition, step: StepRecord): Promise<LookupResult> {
  let last: LookupResult = { kind: "error", message: "no lookup attempted" };
  for (let attempt = 1; attempt <= deps.maxAttempts; attempt++) {
    last = await lookupOnce(def, step);
    if (last.kind !== "error") return last;
    if (attempt < deps.maxAttempts) await deps.clock.sleep(backoffDelay(deps, attempt));
  }
  return last;
}

/** Stored form of a tool result: exactly what JSON keeps, so a replay returns the same shape. */
export function toJson(value: unknown): Json {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json);
}

/**
 * Resolves an INTENDED or UNKNOWN row by looking its key up in the real system: found -> CONFIRMED with
 * the found external ref; absent twice (a pause between, because search indexes lag) -> NOT_EXECUTED,
 * the only state that permits a retry; the lookup itself failing -> the row stays UNKNOWN and an
 * OUTCOME_UNKNOWN escalation asks a person. Rows already settled are returned as they are.
 */
export async function reconcileStep(deps: EngineDeps, step: StepRecord, actor: Actor): Promise<StepRecord> {
  if (!UNSETTLED_STATUSES.includes(step.status)) return step;
  const def = deps.registry.tool(step.tool);
  if (!def.lookup) {
    throw new SagaError("INVALID_TOOL_DEFINITION", `Tool "${step.tool}" has no lookup, so step ${step.stepIdx} cannot be reconciled.`);
  }

  let result = await lookupWithRetry(deps, def, step);
  let lookups = 1;
  if (result.kind === "absent") {
    await deps.clock.sleep(deps.recheckAfterMs);
    result = await lookupWithRetry(deps, def, step);
    lookups = 2;
  }

  if (result.kind === "found") {
    deps.crashPoints.hit(CrashPoint.DURING_RECONCILE);
    const effect = { externalRef: result.effect.externalRef, result: toJson(result.effect.result) };
    const updated = await deps.store.updateStep(
      step.id,
      { status: UNSETTLED_STATUSES },
      { status: StepStatus.CONFIRMED, externalRef: effect.externalRef, result: effect.result, error: null },
      { type: "step.reconciled", actor, data: { outcome: StepStatus.CONFIRMED, externalRef: effect.externalRef, lookups } },
    );
    if (updated) await closeUnknownEscalation(deps, updated, actor);
    return updated ?? (await reread(deps, step));
  }

  if (result.kind === "absent") {
    const updated = await deps.store.updateStep(
      step.id,
      { status: UNSETTLED_STATUSES },
      { status: StepStatus.NOT_EXECUTED, error: { reason: "not_found", message: `no effect found for key ${step.stepKey} after ${lookups} lookups` } },
      { type: "step.reconciled", actor, data: { outcome: StepStatus.NOT_EXECUTED, lookups, recheckAfterMs: deps.recheckAfterMs } },
    );
    if (updated) await closeUnknownEscalation(deps, updated, actor);
    return updated ?? (await reread(deps, step));
  }

  // The real system could not be asked: nothing is known, so a person decides.
  const unknown =
    step.status === StepStatus.UNKNOWN
      ? step
      : ((await deps.store.updateStep(
          step.id,
          { status: [StepStatus.INTENDED] },
          { status: StepStatus.UNKNOWN, error: { reason: "lookup_failed", message: result.message } },
          { type: "step.unknown", actor, data: { reason: "lookup_failed", message: result.message } },
        )) ?? (await reread(deps, step)));
  await deps.store.createEscalation(
    {
      id: deps.ids.next("esc"),
      runId: step.runId,
      stepId: step.id,
      kind: EscalationKind.OUTCOME_UNKNOWN,
      title: `Did ${step.tool} (step ${step.stepIdx}) happen? The lookup failed ${deps.maxAttempts} times.`,
      detail: { stepKey: step.stepKey, tool: step.tool, args: step.args, lookupError: result.message },
      owner: def.owner ?? null,
      dedupeKey: `unknown:${step.id}`,
    },
    { type: "escalation.raised", actor, data: { kind: EscalationKind.OUTCOME_UNKNOWN, stepIdx: step.stepIdx } },
  );
  return unknown;
}

async function reread(deps: EngineDeps, step: StepRecord): Promise<StepRecord> {
  const current = await deps.store.getStep(step.id);
  if (!current) throw new SagaError("STEP_NOT_FOUND", `Step ${step.id} disappeared from the saga log.`);
  return current;
}

/** A step that reconcile settled no longer needs a person: its OUTCOME_UNKNOWN item is resolved. */
async function closeUnknownEscalation(deps: EngineDeps, step: StepRecord, actor: Actor): Promise<void> {
  const open = await deps.store.findEscalationByDedupeKey(`unknown:${step.id}`);
  if (!open || open.status === "RESOLVED") return;
  const resolution = { outcome: step.status, settledBy: "reconcile", externalRef: step.externalRef };
  await deps.store.resolveEscalation(open.id, { resolvedBy: actorLabel(actor), resolution }, {
    type: "escalation.resolved",
    actor,
    data: { escalationId: open.id, kind: open.kind, resolution },
  });
}
