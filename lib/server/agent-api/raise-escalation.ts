/**
 * An agent raises an escalation on its run (agents raise, people resolve), deduplicated by a key that
 * names the run or the step. What people rely on is the server's, never the agent's: the team it is
 * routed to (and so who may claim, check and resolve it) is the tool table's owner of the step's tool;
 * a held call or a revoke is raised only by the server; the agent's `owner` is at most a note.
 */
import { ApiError } from "@/packages/client/src/protocol/errors";
import { SagaError } from "@/packages/client/src/saga/errors";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { CreateEscalationResult, NewEscalation } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { routedOwner } from "@/packages/client/src/saga/tool-table";
import { EscalationKind } from "@/packages/client/src/saga/vocabulary";
import { agentActor, getAgentRun, getAgentStep, agentApiStore, type AgentCaller } from "./agent-access";

/** The kinds an agent may raise: what it saw go wrong. Approvals of held calls and revokes are the server's and people's. */
export const AGENT_RAISED_KINDS: readonly string[] = [EscalationKind.OUTCOME_UNKNOWN, EscalationKind.COMPENSATION_FAILED, EscalationKind.STUCK_AFTER_PIVOT];

/** What an agent sends: the escalation (its `owner` is ignored for routing) and an optional note for people. */
export type AgentEscalation = Omit<NewEscalation, "runId" | "id" | "owner"> & { id?: string; owner?: string | null; note?: string | null };

export async function raiseEscalationForAgent({
  prisma,
  principal,
  runId,
  escalation: input,
  event,
}: AgentCaller & { runId: string; escalation: AgentEscalation; event: { type: string; data?: Json } }): Promise<CreateEscalationResult> {
  if (!AGENT_RAISED_KINDS.includes(input.kind)) {
    throw new ApiError("FORBIDDEN", `escalation.kind: an agent cannot raise ${input.kind}: ${input.kind === EscalationKind.APPROVAL_REQUIRED ? "a held call is raised by the server's gate when the agent calls the tool" : "a revoke is pulled by a person"}. An agent raises ${AGENT_RAISED_KINDS.join(", ")}.`, {
      details: [{ path: "escalation.kind", message: `not one an agent raises (${AGENT_RAISED_KINDS.join(", ")})` }],
    });
  }
  // The gate's keys (`hold:<run>:<tool>:<args hash>`) decide whether a call may run: an escalation
  // planted under one could pass as a person's approval of a call nobody saw.
  if (input.dedupeKey.startsWith("hold:")) {
    throw new ApiError("FORBIDDEN", "escalation.dedupeKey: keys starting with \"hold:\" are the server's gate's (a held call's approval); use another prefix, e.g. \"unknown:<stepId>\".", {
      details: [{ path: "escalation.dedupeKey", message: "reserved for held calls" }],
    });
  }
  const store = agentApiStore(prisma);
  await getAgentRun(store, principal, runId);
  let owner: string | null = null;
  if (input.stepId) {
    const { step } = await getAgentStep(store, principal, input.stepId);
    if (step.runId !== runId) throw new SagaError("STEP_NOT_FOUND", `Step ${input.stepId} is not part of run ${runId}.`);
    const row = await prisma.toolPolicy.findUnique({ where: { name: step.tool }, select: { owner: true, status: true } });
    owner = row ? routedOwner(row) : null;
  }
  // Dedupe keys are unique across every agent. A key that names the caller's own run or step (as
  // every key the engine makes does: hold:<run>..., compfail:<step>) cannot be another agent's, so
  // nobody can read back, or squat on, an escalation of a run they may not act on.
  if (!input.dedupeKey.includes(runId) && !(input.stepId && input.dedupeKey.includes(input.stepId))) {
    throw new SagaError("INVALID_ARGS", `dedupeKey must name the run (${runId}) or the step it is about, e.g. "compfail:<stepId>" or "unknown:${runId}:...", so it can never collide with another agent's.`, [
      { path: "escalation.dedupeKey", message: "must contain the run id or the step id" },
    ]);
  }
  const { owner: suggested, note, ...rest } = input;
  const words = [note?.trim(), suggested && suggested !== owner ? `The agent suggested routing it to "${suggested}"; it goes to the tool table's owner instead.` : null].filter(Boolean).join(" ");
  const detail = (words ? { ...(isObject(rest.detail) ? rest.detail : { value: rest.detail }), agentNote: words } : rest.detail) as Json;
  const result = await store.createEscalation({ ...rest, detail, owner, id: input.id ?? randomIds.next("esc"), runId }, { type: event.type, actor: agentActor(principal), data: event.data ?? {} });
  if (result.escalation.runId !== runId) throw new SagaError("CONFLICT", "That dedupeKey belongs to another run; use one that names this run or its step.");
  return result;
}

function isObject(value: unknown): value is Record<string, Json> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
