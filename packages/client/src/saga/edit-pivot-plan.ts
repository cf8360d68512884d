/**
 * Edit before approve: a reviewer changes one plan item's arguments (an email's wording, a smaller
 * amount) on a pending pivot. The pivot's plan becomes the edited plan, so its hash changes, the
 * agent reads the edited plan back (GET /api/v1/pivots/{id}), and the gate lets only the edited
 * call run (it matches tool + argsHash of the plan item). Framework-free: a store and a registry in.
 */
import { SagaError } from "./errors";
import { argsHash, canonicalJson, planHash } from "./keys";
import { toJson } from "./reconcile";
import type { Actor, PivotEdit, PivotRecord, PlanItem, SagaStore } from "./store";
import type { Json, ToolRegistry } from "./tools";
import { PivotStatus, RunStatus } from "./vocabulary";

/** A reviewer's edit of one plan item. */
export interface EditPlanItemInput {
  /** The pivot. */
  pivotId: string;
  /** The plan hash the reviewer's page loaded (the edit is fenced on it). */
  planHash: string;
  /** The plan item's position. */
  itemIdx: number;
  /** The new arguments, whole (not a patch), validated by the tool's own schema. */
  args: Json;
  /** Why, for the agent and the audit log. */
  note: string | null;
  /** The reviewer. */
  actor: Actor;
}

/** What an edit did: the edited pivot, or why nothing was changed (values a person can act on). */
export type EditPlanItemResult =
  | { ok: true; pivot: PivotRecord; edit: PivotEdit }
  /** The plan changed since the page loaded (the agent revised it, or another reviewer edited it). */
  | { ok: false; reason: "plan_changed"; pivot: PivotRecord }
  /** Someone decided it first. */
  | { ok: false; reason: "already_decided"; pivot: PivotRecord }
  /** The run stopped waiting for this pivot. */
  | { ok: false; reason: "run_not_waiting"; runStatus: RunStatus }
  /** The new arguments are the old ones: nothing to record. */
  | { ok: false; reason: "unchanged"; pivot: PivotRecord };

/** Paths of numeric fields whose value grew from `before` to `after` (an edit may lower an amount, never raise it). */
export function raisedAmounts(before: Json, after: Json, path = ""): string[] {
  if (typeof after === "number" && typeof before === "number") return after > before && /amount/i.test(path) ? [path] : [];
  if (after && typeof after === "object" && !Array.isArray(after) && before && typeof before === "object" && !Array.isArray(before)) {
    return Object.entries(after).flatMap(([k, v]) => raisedAmounts((before as Record<string, Json>)[k] ?? null, v, path ? `${path}.${k}` : k));
  }
  return [];
}

/**
 * Parses `args` with the plan item's tool schema and applies the edit, fenced on PENDING + the
 * loaded plan hash (and the run still waiting). Refused with INVALID_ARGS when the tool is not
 * known here, the arguments fail its schema, or an amount would grow past what the agent proposed
 * (a reviewer may lower an amount within policy; a larger one is a new proposal, so reject instead).
 */
export async function editPivotPlanItem(deps: { store: SagaStore; registry: ToolRegistry }, input: EditPlanItemInput): Promise<EditPlanItemResult> {
  const { store, registry } = deps;
  if (!store.editPivotPlan) throw new SagaError("INVALID_ARGS", "This store cannot edit plans (edits are made on the server, by a reviewer).");
  const pivot = await store.getPivot(input.pivotId);
  if (!pivot) throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${input.pivotId} does not exist.`);
  if (pivot.status !== PivotStatus.PENDING) return { ok: false, reason: "already_decided", pivot };
  if (pivot.planHash !== input.planHash) return { ok: false, reason: "plan_changed", pivot };
  const item = pivot.plan[input.itemIdx];
  if (!Number.isInteger(input.itemIdx) || !item) {
    throw new SagaError("INVALID_ARGS", `Plan item ${input.itemIdx} does not exist: the plan has ${pivot.plan.length} items (0 to ${pivot.plan.length - 1}).`, [
      { path: "itemIdx", message: "no such plan item" },
    ]);
  }
  if (!registry.has(item.tool)) {
    throw new SagaError("INVALID_ARGS", `The arguments of ${item.tool} cannot be checked here (its schema is not registered with this server); reject with a reason instead.`, [
      { path: "args", message: "tool schema unknown" },
    ]);
  }
  const parsed = registry.tool(item.tool).args.safeParse(input.args);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ path: ["args", ...i.path.map(String)].join("."), message: i.message }));
    throw new SagaError("INVALID_ARGS", `The edited arguments do not fit ${item.tool}: ${details.map((d) => `${d.path}: ${d.message}`).join("; ")}.`, details);
  }
  const args = toJson(parsed.data);
  const raised = raisedAmounts(item.args, args);
  if (raised.length > 0) {
    throw new SagaError(
      "INVALID_ARGS",
      `An edit may lower an amount, not raise it (${raised.join(", ")} grew past what the agent proposed); reject with code REVISE_ARGUMENTS so the agent proposes the larger amount itself.`,
      raised.map((p) => ({ path: `args.${p}`, message: "larger than proposed" })),
    );
  }
  if (canonicalJson(args) === canonicalJson(item.args)) return { ok: false, reason: "unchanged", pivot };

  const edited: PlanItem = { ...item, args, argsHash: argsHash(args) };
  const plan = pivot.plan.map((p, i) => (i === input.itemIdx ? edited : p));
  const hash = planHash(plan);
  const edit: PivotEdit = {
    itemIdx: input.itemIdx,
    tool: item.tool,
    argsBefore: item.args,
    argsAfter: args,
    argsHashBefore: item.argsHash,
    argsHashAfter: edited.argsHash,
    planHashBefore: pivot.planHash,
    planHashAfter: hash,
    editedBy: input.actor.id,
    editedAt: new Date().toISOString(), // the store writes its own clock's time
    note: input.note?.trim() || null,
  };
  const saved = await store.editPivotPlan(
    pivot.id,
    { expectedPlanHash: input.planHash, plan, planHash: hash, edit },
    { type: "pivot.edited", actor: input.actor, data: { pivotId: pivot.id, ...edit } as unknown as Json },
  );
  if (saved) return { ok: true, pivot: saved, edit: saved.edits?.at(-1) ?? edit };
  // Lost a race: say which.
  const current = await store.getPivot(pivot.id);
  if (!current) throw new SagaError("PIVOT_NOT_FOUND", `Pivot ${pivot.id} does not exist.`);
  if (current.status !== PivotStatus.PENDING) return { ok: false, reason: "already_decided", pivot: current };
  if (current.planHash !== input.planHash) return { ok: false, reason: "plan_changed", pivot: current };
  const run = await store.getRun(current.runId);
  return { ok: false, reason: "run_not_waiting", runStatus: run?.status ?? RunStatus.UNWOUND };
}
