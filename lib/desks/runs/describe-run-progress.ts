/**
 * Whether anything is happening on a run, for the person looking at it: when its agent last wrote to
 * the saga log, what the agent (or the worker, or a person) is expected to do next, in a sentence,
 * and for an approved run, when its silence will be raised as STUCK_AFTER_PIVOT.
 *
 * Derived from what the log already holds: the agent's last contact is the newest audit event its
 * actor wrote (nothing is written per API call to know it). Pure, so the page and a test share it.
 */
import { runStatusInWords } from "@/lib/desks/dashboard/run-status-words";
import { z } from "zod";
import { actorLabel } from "@/packages/client/src/saga/store";
import { heldApprovalUsed } from "@/packages/client/src/saga/gate";

/** The agent's newest write to the run's chain. */
export const ZLastContact = z.object({
  /** When, by the database clock (ISO 8601 UTC). */
  at: z.string(),
  /** The event it wrote (`step.confirmed`). */
  type: z.string(),
  /** The step it was about, when it was about one. */
  stepIdx: z.number().int().nullable(),
});

/** What the run page says about progress. */
export const ZRunProgress = z.object({
  /** The agent's newest write, or null when it never wrote one (a run recorded by someone else). */
  lastContact: ZLastContact.nullable(),
  /** What happens next, and who is expected to do it, in one sentence. */
  expected: z.string(),
  /** Who acts next: the agent, a person, the worker, or nobody (the run is finished). */
  waitingOn: z.enum(["agent", "person", "worker", "nobody"]),
  /** For an approved run the agent is expected to move: when its silence is raised as stuck (ISO), else null. */
  stuckAt: z.string().nullable(),
  /** The open STUCK_AFTER_PIVOT escalation of this run, when there is one. */
  stuckEscalationId: z.string().nullable(),
  /** The database clock when this was worked out (ISO), so "5 min ago" is measured on one clock. */
  checkedAt: z.string(),
  /**
   * Held calls a reviewer approved that the agent has not made yet: nothing has gone out. The agent
   * makes one by calling again with the same arguments; until then it is only an approval.
   */
  approvedNotMade: z.array(z.object({ escalationId: z.string(), tool: z.string(), approvedAt: z.string().nullable(), approvedBy: z.string().nullable() })).default([]),
});
/** What the run page says about progress. */
export type TRunProgress = z.infer<typeof ZRunProgress>;

/** The parts of a run's history progress is read from. */
export interface RunProgressInput {
  /** The run. */
  run: { status: string; agent: string };
  /** Its saga log. */
  steps: readonly { stepIdx: number; tool: string; status: string; approvalId: string | null; planItemIdx: number | null; argsHash?: string; createdAt?: Date }[];
  /** Its pivots, oldest first. */
  pivots: readonly { id: string; status: string; plan: readonly { tool: string }[] }[];
  /** Its escalations. */
  escalations: readonly { id: string; kind: string; status: string; stepId: string | null; createdAt: Date; detail?: unknown; resolution?: unknown; resolvedAt?: Date | null; resolvedBy?: string | null }[];
  /** Its correction drafts. */
  corrections: readonly { status: string }[];
  /** Its audit events, in append order. */
  auditEvents: readonly { seq: number; type: string; actor: string; at: Date; stepId: string | null }[];
  /** Step ids to their index (the audit events name steps by id). */
  stepIdxById: ReadonlyMap<string, number>;
  /** The database clock now. */
  now: Date;
  /** Silence after which an approved run is raised as stuck (SAGABOARD_STUCK_AFTER_PIVOT_MS). */
  stuckAfterMs: number;
  /** The agent token the run's agent names, as the tokens table has it now (absent: no token by that name, e.g. an in-process agent). */
  agentToken?: { revoked: boolean } | null;
}

const OPEN = new Set(["OPEN", "CLAIMED"]);

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** What happens next on an approved run: the first plan item no step has made yet. */
function committingSentence(input: RunProgressInput, open: number): { expected: string; waitingOn: TRunProgress["waitingOn"] } {
  const approved = [...input.pivots].reverse().find((p) => p.status === "APPROVED");
  if (open > 0) {
    return { expected: `It waits for a person: ${plural(open, "open escalation")} below must be handled before the agent can go on.`, waitingOn: "person" };
  }
  if (!approved) return { expected: "The agent is expected to make the approved calls and then complete the run.", waitingOn: "agent" };
  const made = new Set(input.steps.filter((s) => s.approvalId === approved.id && s.planItemIdx !== null && s.status !== "FAILED").map((s) => s.planItemIdx));
  const remaining = approved.plan.map((item, idx) => ({ ...item, idx })).filter((item) => !made.has(item.idx));
  const next = remaining[0];
  if (!next) return { expected: "Every approved call has been made: the agent is expected to mark the run complete.", waitingOn: "agent" };
  const after = remaining.length - 1;
  return {
    expected:
      `The agent is expected to call ${next.tool} next (approved call ${next.idx + 1} of ${approved.plan.length})` +
      (after > 0 ? `, then ${plural(after, "more approved call")}` : "") +
      ", and then complete the run.",
    waitingOn: "agent",
  };
}

/**
 * What the page says of a run whose agent was cut off (its token revoked) before it finished: nobody
 * will come back to it, so a person decides, and a step left in flight is named (it is checked
 * against its system before anything is undone).
 */
function cutOffSentence(input: RunProgressInput): string {
  const inFlight = input.steps.filter((s) => s.status === "INTENDED" || s.status === "UNKNOWN");
  const which = inFlight.map((s) => `step ${s.stepIdx + 1} (${s.tool})`).join(", ");
  return (
    "The agent's token was revoked, so the agent cannot go on" +
    (inFlight.length > 0 ? `; nobody knows yet whether ${which} happened, and pulling back checks that first` : "") +
    ". Pull back the whole run to undo what it did, or give the agent a new token for a new run."
  );
}

/** A held call's tool and argument hash, as the gate wrote them in its escalation's detail. */
function heldCallOf(detail: unknown): { tool: string; argsHash: string } | null {
  if (!detail || typeof detail !== "object" || Array.isArray(detail)) return null;
  const d = detail as Record<string, unknown>;
  return typeof d.tool === "string" && typeof d.argsHash === "string" ? { tool: d.tool, argsHash: d.argsHash } : null;
}

/** Held calls a reviewer approved and the agent never made (the gate's rule: `heldApprovalUsed`). */
function approvedNotMade(input: RunProgressInput): TRunProgress["approvedNotMade"] {
  const steps = input.steps.map((s) => ({ ...s, argsHash: s.argsHash ?? "", createdAt: s.createdAt ?? new Date(0) }));
  return input.escalations.flatMap((e) => {
    const call = heldCallOf(e.detail);
    const approved = (e.resolution as { approved?: unknown } | null | undefined)?.approved === true;
    if (e.kind !== "APPROVAL_REQUIRED" || e.status !== "RESOLVED" || !approved || !call || heldApprovalUsed(e, call, steps)) return [];
    return [{ escalationId: e.id, tool: call.tool, approvedAt: e.resolvedAt?.toISOString() ?? null, approvedBy: e.resolvedBy ?? null }];
  });
}

/** Works out what the run page says about progress. */
export function describeRunProgress(input: RunProgressInput): TRunProgress {
  const agentActor = actorLabel({ type: "agent", id: input.run.agent });
  let last: RunProgressInput["auditEvents"][number] | undefined;
  let sinceForStuck: Date | null = null;
  for (const event of input.auditEvents) {
    if (event.actor === agentActor) last = event;
    // The sweep measures the silence from the agent's last write or the approval, whichever is later.
    if (event.actor === agentActor || event.type === "pivot.approved") sinceForStuck = event.at;
  }
  const open = input.escalations.filter((e) => OPEN.has(e.status));
  const stuck = open.find((e) => e.kind === "STUCK_AFTER_PIVOT" && e.stepId === null) ?? null;
  let expected: string;
  let waitingOn: TRunProgress["waitingOn"];
  switch (input.run.status) {
    case "RUNNING":
      expected = "The agent is staging: it makes calls whose effects can still be taken back, then proposes a pivot for a reviewer.";
      waitingOn = "agent";
      break;
    case "AWAITING_PIVOT":
      expected = "Nothing moves until a reviewer approves or rejects the pivot; the agent waits for the decision.";
      waitingOn = "person";
      break;
    case "COMMITTING":
      ({ expected, waitingOn } = committingSentence(input, open.length));
      break;
    case "UNWINDING":
      expected = "The worker is undoing the run's effects, newest first; nothing is expected of the agent.";
      waitingOn = "worker";
      break;
    case "NEEDS_ATTENTION": {
      const drafts = input.corrections.filter((c) => c.status === "DRAFT").length;
      const parts = [open.length > 0 ? `${plural(open.length, "open escalation")} below must be handled` : null, drafts > 0 ? `support must send or dismiss ${plural(drafts, "correction draft")}` : null].filter(Boolean);
      expected = parts.length > 0 ? `It waits for people: ${parts.join(", and ")}.` : "It waits for a person: an effect could not be undone or settled.";
      waitingOn = "person";
      break;
    }
    case "COMPLETED":
    case "UNWOUND":
      expected = "The run is finished: nothing more is expected of anyone.";
      waitingOn = "nobody";
      break;
    default:
      expected = `The run is ${runStatusInWords(input.run.status)}.`;
      waitingOn = "nobody";
  }
  // An approval is not a call: until the agent makes it, nothing went out, whatever the run's status says.
  const notMade = ["RUNNING", "COMMITTING", "AWAITING_PIVOT"].includes(input.run.status) ? approvedNotMade(input) : [];
  if (notMade.length > 0 && waitingOn === "agent") {
    const which = notMade.map((n) => n.tool).join(", ");
    expected = `A reviewer approved ${notMade.length === 1 ? `the held call ${which}` : `${notMade.length} held calls (${which})`}, but the agent has not made ${notMade.length === 1 ? "it" : "them"} yet: nothing has gone out. The agent is expected to call ${notMade.length === 1 ? "it" : "them"} again with the same arguments.`;
  }
  // A run its agent can no longer move waits for a person, whatever the agent was expected to do.
  if (input.agentToken?.revoked && (waitingOn === "agent" || input.run.status === "AWAITING_PIVOT")) {
    expected = cutOffSentence(input);
    waitingOn = "person";
  }
  // The sweep raises one escalation per silence: once a person settled it, the same silence is not raised again.
  const settled = sinceForStuck !== null && input.escalations.some((e) => e.kind === "STUCK_AFTER_PIVOT" && e.stepId === null && e.createdAt >= sinceForStuck!);
  const watched = input.run.status === "COMMITTING" && waitingOn === "agent" && sinceForStuck !== null && !settled;
  return {
    lastContact: last ? { at: last.at.toISOString(), type: last.type, stepIdx: last.stepId ? (input.stepIdxById.get(last.stepId) ?? null) : null } : null,
    expected,
    waitingOn,
    stuckAt: watched ? new Date(sinceForStuck!.getTime() + input.stuckAfterMs).toISOString() : null,
    stuckEscalationId: stuck?.id ?? null,
    checkedAt: input.now.toISOString(),
    approvedNotMade: notMade,
  };
}
