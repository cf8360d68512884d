import { SimulatedCrash, CrashPoint } from "./crash-points";
import { recordReconcile } from "./calls";
import type { ReconcileReport } from "./messages";
import { backoffDelay, type EngineDeps } from "./deps";
import { SagaError } from "./errors";
import type { Actor, StepRecord } from "./store";
import type { Json, ToolDefinition, ToolEffect } from "./tools";
import { UNSETTLED_STATUSES } from "./vocabulary";

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

/** Looks the key up, retrying a failing lookup with backoff; the last error when it never answered. */
async function lookupWithRetry(deps: Pick<EngineDeps, "maxAttempts" | "backoffMs" | "clock">, def: ToolDefinition, step: StepRecord): Promise<LookupResult> {
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
 * Looks an unsettled step's key up in the real system: found; absent twice, with a pause between
 * because search indexes lag; or the lookup itself failing after its retries. Runs where the
 * connector is (the agent's or worker's process); `recordReconcile` then writes what it found.
 */
export async function lookUpStep(deps: Pick<EngineDeps, "maxAttempts" | "backoffMs" | "clock" | "recheckAfterMs">, def: ToolDefinition, step: StepRecord): Promise<ReconcileReport> {
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
  if (result.kind === "found") return { kind: "found", externalRef: result.effect.externalRef, result: toJson(result.effect.result), lookups };
  if (result.kind === "absent") return { kind: "absent", lookups, recheckAfterMs: deps.recheckAfterMs };
  return { kind: "lookup_failed", message: result.message, attempts: deps.maxAttempts };
}

/**
 * Resolves an INTENDED or UNKNOWN row by looking its key up in the real system: found -> CONFIRMED with
 * the found external ref; absent twice (a pause between, because search indexes lag) -> NOT_EXECUTED,
 * the only state that permits a retry; the lookup itself failing -> the row stays UNKNOWN and an
 * OUTCOME_UNKNOWN escalation asks a person. Rows already settled are returned as they are.
 */
export async function reconcileStep(deps: EngineDeps, step: StepRecord, actor: Actor): Promise<StepRecord> {
  if (!UNSETTLED_STATUSES.includes(step.status)) return step;
  const startedAt = new Date(); // the reconcile span covers the lookups
  const def = deps.registry.tool(step.tool);
  const report = await lookUpStep(deps, def, step);
  if (report.kind === "found") deps.crashPoints.hit(CrashPoint.DURING_RECONCILE);
  return recordReconcile(deps, { step, report, actor, owner: def.owner ?? null, startedAt });
}
