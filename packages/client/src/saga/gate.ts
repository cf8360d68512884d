import type { EngineDeps } from "./deps";
import { EscalationSource } from "./observer";
import { raiseEscalation } from "./raise-escalation";
import type { Actor, EscalationRecord, PivotRecord, StepRecord } from "./store";
import type { Json } from "./tools";
import type { GateTool } from "./tool-table";
import { ApprovalReason, EscalationKind, EscalationStatus, Phase, PivotStatus, StepStatus, ToolClass } from "./vocabulary";

/** The gate's answer for one call. */
export type GateDecision =
  | { allowed: true; phase: Phase; approvalId: string | null; planItemIdx: number | null }
  | { allowed: false; reason: ApprovalReason; message: string; escalationId: string | null; pivotId: string | null };

/** Whether a call of `def` needs a person before it may run outside an approved plan. */
export function needsApprovalBeforePivot(def: GateTool, compensationBuildable: boolean): boolean {
  return def.class === ToolClass.IRREVERSIBLE || !compensationBuildable || def.holdEveryCall !== undefined;
}

/** The policy version a tool is at now. */
export function currentPolicyVersion(def: GateTool): number {
  return def.policyVersion ?? 1;
}

/** Everything the gate decides on. */
export interface GateInput {
  /** The run. */
  runId: string;
  /** The tool as the deciding side knows it. */
  def: GateTool;
  /** The call's arguments. */
  args: Json;
  /** Their hash. */
  argsHash: string;
  /** False when no compensation could be built for these arguments. */
  compensationBuildable: boolean;
  /** The run's pivots, oldest first. */
  pivots: readonly PivotRecord[];
  /** The run's log (other rows than the one being decided). */
  steps: readonly StepRecord[];
  /** Who is calling. */
  actor: Actor;
}

/** Plan items already consumed by a logged call (a NOT_EXECUTED retry keeps its own item). */
function consumedItems(steps: readonly StepRecord[], approvalId: string): Set<number> {
  return new Set(
    steps.filter((s) => s.approvalId === approvalId && s.planItemIdx !== null && s.status !== StepStatus.NOT_EXECUTED).map((s) => s.planItemIdx as number),
  );
}

/**
 * The pivot gate. Before a pivot is approved, releasable calls stage freely; irreversible calls (and
 * calls whose compensation cannot be built) are held as APPROVAL_REQUIRED escalations until a reviewer
 * approves that exact call. After approval, only calls matching an unconsumed plan item (same tool, same
 * args hash, same policy version) run.
 */
export async function checkGate(deps: Pick<EngineDeps, "store" | "ids">, input: GateInput): Promise<GateDecision> {
  const { def, pivots } = input;
  const latest = pivots.at(-1);
  if (latest?.status === PivotStatus.PENDING) {
    return {
      allowed: false,
      reason: ApprovalReason.PIVOT_PENDING,
      message: `Pivot ${latest.id} is waiting for a reviewer; wait for the decision before calling ${def.name}.`,
      escalationId: null,
      pivotId: latest.id,
    };
  }

  const version = currentPolicyVersion(def);
  if (latest?.status === PivotStatus.APPROVED) {
    const consumed = consumedItems(input.steps, latest.id);
    const candidates = latest.plan
      .map((item, idx) => ({ item, idx }))
      .filter(({ item, idx }) => item.tool === def.name && item.argsHash === input.argsHash && !consumed.has(idx));
    const match = candidates.find(({ item }) => item.policyVersion === version);
    if (match) return { allowed: true, phase: Phase.COMMIT, approvalId: latest.id, planItemIdx: match.idx };
    if (candidates.length > 0) {
      return hold(deps, input, ApprovalReason.POLICY_CHANGED,
        `The policy of ${def.name} changed (now version ${version}) since pivot ${latest.id} was approved; a fresh approval is needed.`);
    }
    return hold(deps, input, ApprovalReason.NOT_IN_PLAN,
      `${def.name} with these arguments is not an unconsumed item of the approved plan of pivot ${latest.id}; it is held for a reviewer.`);
  }

  if (!needsApprovalBeforePivot(def, input.compensationBuildable)) return { allowed: true, phase: Phase.STAGING, approvalId: null, planItemIdx: null };
  const [reason, message] = holdReason(def);
  return hold(deps, input, reason, message);
}

/**
 * The gate for a call addressed by its place in an approved plan (`beginPlanItem`): the item is the
 * approval, so only its policy version is checked. A tool whose policy changed since the approval is
 * held (POLICY_CHANGED) for a fresh approval, exactly as a matching free-form call would be.
 */
export async function checkPlanItem(
  deps: Pick<EngineDeps, "store" | "ids">,
  input: GateInput & { pivot: PivotRecord; planItemIdx: number },
): Promise<GateDecision> {
  const item = input.pivot.plan[input.planItemIdx];
  const version = currentPolicyVersion(input.def);
  if (item && item.policyVersion === version) return { allowed: true, phase: Phase.COMMIT, approvalId: input.pivot.id, planItemIdx: input.planItemIdx };
  return hold(deps, input, ApprovalReason.POLICY_CHANGED,
    `The policy of ${input.def.name} changed (now version ${version}) since pivot ${input.pivot.id} was approved; a fresh approval is needed.`);
}

/** Why a call that needs a person is held, and the sentence that says so. */
function holdReason(def: GateTool): [ApprovalReason, string] {
  if (def.holdEveryCall === ApprovalReason.UNREVIEWED) {
    return [def.holdEveryCall, `${def.name} was declared by its team and no admin has reviewed it yet, so every call is held until a person approves it (or an admin accepts the tool in the tool table).`];
  }
  if (def.holdEveryCall === ApprovalReason.ALWAYS_APPROVE) {
    return [def.holdEveryCall, `The tool table says every call of ${def.name} needs a person's approval; it is held until a reviewer approves it.`];
  }
  if (def.class === ToolClass.IRREVERSIBLE) return [ApprovalReason.IRREVERSIBLE, `${def.name} is irreversible and no approved pivot covers it; it is held until a reviewer approves it.`];
  return [ApprovalReason.COMPENSATION_UNBUILDABLE, `No compensation can be built for ${def.name} with these arguments, so it needs approval before the call.`];
}

/**
 * One held call per (run, tool, args). A hold because the tool is unreviewed carries the policy
 * version: an admin's review resolves those holds, and a resolved one must never answer a later call.
 */
export function holdKey(input: Pick<GateInput, "runId" | "def" | "argsHash">, reason?: ApprovalReason): string {
  const base = `hold:${input.runId}:${input.def.name}:${input.argsHash}`;
  return reason === ApprovalReason.UNREVIEWED ? `${base}:unreviewed-v${currentPolicyVersion(input.def)}` : base;
}

/**
 * Whether a held call's resolved escalation was used: a step ran under its approval, or the same call
 * (tool and argument hash) was carried out since it was raised (e.g. as a pivot plan item). One rule,
 * read by the gate (an approval is used once) and by the run page (an approved call never made).
 */
export function heldApprovalUsed(
  held: { id: string; createdAt: Date },
  call: { tool: string; argsHash: string },
  steps: readonly { status: string; approvalId: string | null; tool: string; argsHash: string; createdAt: Date }[],
): boolean {
  return steps.some(
    (s) =>
      s.status !== StepStatus.NOT_EXECUTED &&
      (s.approvalId === held.id || (s.tool === call.tool && s.argsHash === call.argsHash && s.createdAt.getTime() >= held.createdAt.getTime())),
  );
}

function isApproved(e: EscalationRecord): boolean {
  const r = e.resolution as { approved?: unknown } | null;
  return e.status === EscalationStatus.RESOLVED && r?.approved === true;
}

/** Holds the call as an escalation, or lets it through when a reviewer already approved this exact call. */
async function hold(deps: Pick<EngineDeps, "store" | "ids">, input: GateInput, reason: ApprovalReason, message: string): Promise<GateDecision> {
  const existing = await deps.store.findEscalationByDedupeKey(holdKey(input, reason));
  if (existing && existing.status === EscalationStatus.RESOLVED) {
    // Used: run under this approval, or the same call was carried out since (e.g. as a pivot plan item).
    const used = heldApprovalUsed(existing, { tool: input.def.name, argsHash: input.argsHash }, input.steps);
    if (isApproved(existing) && !used) {
      return { allowed: true, phase: Phase.APPROVED_HOLD, approvalId: existing.id, planItemIdx: null };
    }
    const spent = isApproved(existing) || Boolean((existing.resolution as { supersededBy?: unknown } | null)?.supersededBy);
    return {
      allowed: false,
      reason: spent ? ApprovalReason.APPROVAL_USED : ApprovalReason.REJECTED,
      message: spent
        ? `The approval ${existing.id} for this call was already used (or a pivot covered it); a repeat needs a new approval.`
        : `A reviewer (${existing.resolvedBy ?? "unknown"}) rejected this call: ${JSON.stringify(existing.resolution)}.`,
      escalationId: existing.id,
      pivotId: null,
    };
  }
  const { escalation } = await raiseEscalation(deps, {
    runId: input.runId,
    stepId: null,
    kind: EscalationKind.APPROVAL_REQUIRED,
    title: `Approve ${input.def.name}? (${reason.toLowerCase().replace(/_/g, " ")})`,
    detail: { tool: input.def.name, toolClass: input.def.class, args: input.args, argsHash: input.argsHash, reason, message },
    owner: input.def.owner ?? null,
    dedupeKey: holdKey(input, reason),
    actor: input.actor,
    facts: { tool: input.def.name, reason },
    source: EscalationSource.held_call,
  });
  return { allowed: false, reason, message, escalationId: escalation.id, pivotId: latest(input.pivots)?.id ?? null };
}

function latest(pivots: readonly PivotRecord[]): PivotRecord | undefined {
  return pivots.at(-1);
}
