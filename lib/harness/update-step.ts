/**
 * Applies an agent's (or worker's) step transition, allowing only the moves of the state machine
 * (lib/saga/ARCHITECTURE.md). Anything else is INVALID_TRANSITION, and nothing is written.
 */
import type { PrismaClient } from "@/generated/prisma";
import { SagaError } from "@/lib/saga/errors";
import { checkGate } from "@/lib/saga/gate";
import { randomIds } from "@/lib/saga/ids";
import { argsHash } from "@/lib/saga/keys";
import type { AuditInput, StepFence, StepPatch, StepRecord } from "@/lib/saga/store";
import { CompensationState, StepStatus, ToolClass, type CompensationState as CompState, type StepStatus as Status } from "@/lib/saga/vocabulary";
import { asGuardedAgent, type GuardedAgent } from "@/lib/tokens/authenticate-agent";
import { agentActor, assertToolInScope, getAgentStep, harnessStore } from "./access";
import { ApiError } from "./errors";
import { getToolPolicy } from "./policy";
import type { AgentPrincipal } from "./principal";

/** One legal move: from which statuses, to which, touching which fields. */
interface Move {
  name: string;
  from: readonly Status[];
  to: Status | null;
  compensationFrom?: readonly CompState[];
  compensationTo?: CompState;
  fields: readonly (keyof StepPatch)[];
}

const { INTENDED, CONFIRMED, FAILED, UNKNOWN, NOT_EXECUTED, COMPENSATED, COMPENSATION_FAILED } = StepStatus;

const MOVES: readonly Move[] = [
  { name: "outcome", from: [INTENDED], to: CONFIRMED, fields: ["status", "externalRef", "result", "error", "attempts"] },
  { name: "outcome", from: [INTENDED], to: FAILED, fields: ["status", "error", "attempts"] },
  { name: "outcome", from: [INTENDED], to: UNKNOWN, fields: ["status", "error", "attempts"] },
  { name: "reconcile", from: [INTENDED, UNKNOWN], to: CONFIRMED, fields: ["status", "externalRef", "result", "error"] },
  { name: "reconcile", from: [INTENDED, UNKNOWN], to: NOT_EXECUTED, fields: ["status", "error"] },
  {
    name: "retry",
    from: [NOT_EXECUTED],
    to: INTENDED,
    fields: ["status", "args", "argsHash", "phase", "approvalId", "planItemIdx", "compensation", "correction", "audience", "error"],
  },
  {
    name: "compensation requested",
    from: [CONFIRMED],
    to: null,
    compensationFrom: [CompensationState.NONE],
    compensationTo: CompensationState.REQUESTED,
    fields: ["compensationState", "compensationRequestedAt"],
  },
  {
    name: "compensation confirmed",
    from: [CONFIRMED],
    to: COMPENSATED,
    compensationFrom: [CompensationState.NONE, CompensationState.REQUESTED],
    compensationTo: CompensationState.CONFIRMED,
    fields: ["status", "compensationState", "compensationConfirmedAt", "compensationRef", "compensationRequestedAt"],
  },
  {
    name: "compensation failed",
    from: [CONFIRMED],
    to: COMPENSATION_FAILED,
    compensationFrom: [CompensationState.NONE, CompensationState.REQUESTED],
    compensationTo: CompensationState.FAILED,
    fields: ["status", "compensationState", "compensationError"],
  },
];

function findMove(step: StepRecord, patch: StepPatch): Move | null {
  const fields = Object.keys(patch).filter((k) => patch[k as keyof StepPatch] !== undefined) as (keyof StepPatch)[];
  return (
    MOVES.find(
      (m) =>
        (patch.status ?? null) === m.to &&
        m.from.includes(step.status) &&
        (m.compensationTo === undefined ? patch.compensationState === undefined : patch.compensationState === m.compensationTo) &&
        (!m.compensationFrom || m.compensationFrom.includes(step.compensationState)) &&
        fields.every((f) => m.fields.includes(f)),
    ) ?? null
  );
}

/** An outcome (INTENDED to CONFIRMED, FAILED or UNKNOWN, with that move's fields only) whose fence lets INTENDED through. */
function isPlainOutcome(fence: StepFence, patch: StepPatch): boolean {
  if (fence.status && !fence.status.includes(INTENDED)) return false;
  const fields = Object.keys(patch).filter((k) => patch[k as keyof StepPatch] !== undefined) as (keyof StepPatch)[];
  return MOVES.some((m) => m.name === "outcome" && m.to === patch.status && fields.every((f) => m.fields.includes(f)));
}

/** Result of a transition: the row after it, or null when the fence no longer matched. */
export interface UpdateStepResult {
  /** The updated row, or null (the row moved on; read it again). */
  step: StepRecord | null;
}

/** `auth.activeToken`: the token was not read for this request (see recordIntent). */
export async function updateStepForAgent(
  prisma: PrismaClient,
  principalOrAuth: AgentPrincipal | GuardedAgent,
  stepId: string,
  fence: StepFence,
  patch: StepPatch,
  audit: Pick<AuditInput, "type" | "data">,
): Promise<UpdateStepResult> {
  const auth = asGuardedAgent(principalOrAuth);
  let principal = auth.principal;
  const store = harnessStore(prisma);
  const actor = agentActor(principal);
  // Workers take the careful path: it checks that they hold a claimed task of the step's run.
  if (isPlainOutcome(fence, patch) && principal.role !== "worker") {
    // The common call (a tool's outcome): one fenced UPDATE whose WHERE holds everything the reads
    // below would check (the step is INTENDED, its tool is in the token's scope, its run is the
    // agent's). When it misses, the careful path reads the step and says why (or answers null).
    const fast = await store.updateStep(
      stepId,
      { ...fence, status: [INTENDED], tools: principal.tools, activeToken: auth.activeToken, runAgent: principal.name },
      patch,
      { type: audit.type, actor, data: audit.data ?? {} },
    );
    if (fast) return { step: fast };
  }
  if (auth.activeToken !== undefined) principal = await auth.verified();
  const { step } = await getAgentStep(store, principal, stepId);
  assertToolInScope(principal, step.tool);
  const move = findMove(step, patch);
  if (!move) {
    // A fenced repeat of a move that already happened is answered like the store does: null, nothing written.
    const fenced = (fence.status && !fence.status.includes(step.status)) || (fence.compensationState && !fence.compensationState.includes(step.compensationState));
    if (fenced) return { step: null };
    throw new ApiError(
      "INVALID_TRANSITION",
      `Step ${step.stepIdx} is ${step.status} (compensation ${step.compensationState}); the requested change ` +
        `(${patch.status ? `to ${patch.status}` : "without a status"}, fields ${Object.keys(patch).join(", ") || "none"}) is not a move of the saga state machine.`,
    );
  }

  const now = new Date();
  const applied: StepPatch = { ...patch };
  if (patch.compensationRequestedAt !== undefined) applied.compensationRequestedAt = step.compensationRequestedAt ?? now;
  if (patch.compensationConfirmedAt !== undefined) applied.compensationConfirmedAt = now;

  if (move.name === "retry") {
    // The retry is a new intent for the same key: the server re-decides it with its own tool table.
    const args = patch.args ?? step.args;
    if ((patch.argsHash ?? step.argsHash) !== argsHash(args)) {
      throw new SagaError("INVALID_ARGS", "argsHash does not match the canonical hash of args.", [{ path: "patch.argsHash", message: "mismatch" }]);
    }
    const policy = await getToolPolicy(prisma, step.tool);
    const compensation = patch.compensation !== undefined ? patch.compensation : step.compensation;
    const needsCompensation = policy.class === ToolClass.REVERSIBLE || policy.class === ToolClass.COMPENSATABLE;
    const steps = (await store.listSteps(step.runId)).filter((s) => s.id !== step.id);
    const sameApproval = step.approvalId !== null && step.argsHash === argsHash(args);
    const decision = sameApproval
      ? { allowed: true as const, phase: step.phase, approvalId: step.approvalId, planItemIdx: step.planItemIdx }
      : await checkGate(
          { store, ids: randomIds },
          {
            runId: step.runId,
            def: policy,
            args,
            argsHash: argsHash(args),
            compensationBuildable: !needsCompensation || compensation !== null,
            pivots: await store.listPivots(step.runId),
            steps,
            actor,
          },
        );
    if (!decision.allowed) {
      throw new ApiError("APPROVAL_REQUIRED", decision.message, { extra: { reason: decision.reason, escalationId: decision.escalationId, pivotId: decision.pivotId } });
    }
    Object.assign(applied, { phase: decision.phase, approvalId: decision.approvalId, planItemIdx: decision.planItemIdx, policyVersion: policy.policyVersion ?? 1 });
  }

  const allowedFrom = move.from.filter((s) => !fence.status || fence.status.includes(s));
  const allowedComp = move.compensationFrom?.filter((c) => !fence.compensationState || fence.compensationState.includes(c));
  const updated = await store.updateStep(
    stepId,
    { status: allowedFrom, ...(allowedComp ? { compensationState: allowedComp } : fence.compensationState ? { compensationState: fence.compensationState } : {}) },
    applied,
    { type: audit.type, actor, data: audit.data ?? {} },
  );
  return { step: updated };
}
