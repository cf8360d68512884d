/**
 * Applies a reconcile result or a compensation move an unwind over HTTP writes (lib/saga/unwind.ts in
 * a worker), allowing only those moves of the state machine (lib/saga/ARCHITECTURE.md). Anything else
 * is INVALID_TRANSITION, and nothing is written. Outcomes and retries are the call commands'.
 */
import type { PrismaClient } from "@/generated/prisma";
import type { AuditInput, StepFence, StepPatch, StepRecord } from "@/lib/saga/store";
import { CompensationState, StepStatus, type CompensationState as CompState, type StepStatus as Status } from "@/lib/saga/vocabulary";
import { asGuardedAgent, type GuardedAgent } from "@/lib/tokens/authenticate-agent";
import { agentActor, assertToolInScope, getAgentStep, harnessStore } from "./access";
import { ApiError } from "./errors";
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

const { INTENDED, CONFIRMED, UNKNOWN, NOT_EXECUTED, COMPENSATED, COMPENSATION_FAILED } = StepStatus;

// An outcome (INTENDED to CONFIRMED, FAILED or UNKNOWN) and a retry (NOT_EXECUTED to INTENDED) are
// the call commands' (lib/agent-api/call-commands.ts): the server decides them, nobody patches them in.
// What stays here is what an unwind over HTTP writes: reconcile results and compensation moves.
const MOVES: readonly Move[] = [
  { name: "reconcile", from: [INTENDED, UNKNOWN], to: CONFIRMED, fields: ["status", "externalRef", "result", "error"] },
  { name: "reconcile", from: [INTENDED, UNKNOWN], to: NOT_EXECUTED, fields: ["status", "error"] },
  { name: "reconcile", from: [INTENDED], to: UNKNOWN, fields: ["status", "error"] },
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

/** Result of a transition: the row after it, or null when the fence no longer matched. */
export interface UpdateStepResult {
  /** The updated row, or null (the row moved on; read it again). */
  step: StepRecord | null;
}

/** `auth.activeToken`: the token was not read for this request (this path reads it first). */
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
