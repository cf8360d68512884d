/**
 * What the tool table says about pulling a step back: its window (by the database clock), who may
 * pull it, and the sentence a confirmation shows. Shared by the options a page reads and the pull.
 */
import type { Correction, Escalation, PrismaClient, Revoke, Step, ToolPolicy } from "@/generated/prisma";
import { systemInWords, systemOfTool } from "@/lib/server/tools/tool-systems";
import { onConnection } from "@/lib/core/db/transactions";
import type { Role } from "@/lib/server/auth/roles";
import { EscalationKind, StepStatus, ToolClass } from "@/packages/client/src/saga/vocabulary";
import { DEFAULT_WINDOW_SEC } from "@/lib/server/tools/duration";
import { DEFAULT_REVOKE_ROLES, storedRevokeRoles } from "@/lib/server/tools/tool-policy";
import { toRevokeSummary, type TRevokeSummary } from "./views";

/** The step's revocation window: when it closes, and whether it is open at `now`. */
export interface RevokeWindow {
  /** When it closes; null: no window (irreversible: a correction may be drafted any time; else: never revocable). */
  endsAt: Date | null;
  /** Whether the step may be pulled back at `now`. */
  open: boolean;
}

/** The window of `step` under its tool's row (the class default when the tool has no row). */
export function revokeWindow(step: Pick<Step, "createdAt" | "toolClass">, policy: Pick<ToolPolicy, "revocationWindowSec"> | null, now: Date): RevokeWindow {
  const seconds = policy ? policy.revocationWindowSec : (DEFAULT_WINDOW_SEC[step.toolClass as ToolClass] ?? null);
  if (seconds === null) return { endsAt: null, open: step.toolClass === ToolClass.IRREVERSIBLE };
  const endsAt = new Date(step.createdAt.getTime() + seconds * 1000);
  return { endsAt, open: now.getTime() < endsAt.getTime() };
}

/** Roles the tool's row lets pull it back. */
export function revokeRolesOf(policy: Pick<ToolPolicy, "revokeRoles"> | null): Role[] {
  return policy ? storedRevokeRoles(policy.revokeRoles) : [...DEFAULT_REVOKE_ROLES];
}

/** Step states a whole-run revoke leaves alone: nothing exists (failed, not executed) or it is already undone. */
const UNTOUCHED_BY_RUN_REVOKE: readonly string[] = [StepStatus.FAILED, StepStatus.NOT_EXECUTED, StepStatus.COMPENSATED];

/**
 * The one rule for who may pull back what: a step by the roles its tool's row names; a whole run
 * only when the person may pull back every step its unwind would touch, whatever that step's state
 * (an UNKNOWN or INTENDED step is reconciled and, when it happened, compensated like a confirmed
 * one). Returns the steps the person may not pull, so the refusal can name them; empty: allowed.
 */
export function stepsBeyondRole<S extends Pick<Step, "id" | "tool" | "status">>(role: Role, steps: readonly S[], policyOf: (tool: string) => Pick<ToolPolicy, "revokeRoles"> | null): S[] {
  return steps.filter((s) => !UNTOUCHED_BY_RUN_REVOKE.includes(s.status) && !revokeRolesOf(policyOf(s.tool)).includes(role));
}

/** What pulling `step` back will do, which system it touches and who will see it: one sentence. */
export function whatHappens(step: Pick<Step, "tool" | "toolClass" | "compensation" | "audience">, policy: Pick<ToolPolicy, "owner" | "system"> | null, window: RevokeWindow): string {
  const audience = Array.isArray(step.audience) && step.audience.length > 0 ? step.audience.join(", ") : "whoever saw the original";
  if (!window.open) {
    return `The revocation window of ${step.tool} has closed, so nothing is undone automatically: pulling it opens an escalation for ${policy?.owner ?? "the team that owns the tool"} to decide.`;
  }
  if (step.toolClass === ToolClass.IRREVERSIBLE) {
    return `${step.tool} cannot be taken back: a correction message is drafted for the support desk, who decide whether and how to send it (its audience: ${audience}). Nothing is sent without a person.`;
  }
  const compensation = step.compensation as { tool?: unknown } | null;
  const system = systemInWords(systemOfTool(policy?.system), step.tool);
  const counter = typeof compensation?.tool === "string" ? compensation.tool : "its compensation";
  return step.toolClass === ToolClass.REVERSIBLE
    ? `The worker runs ${counter} in ${system} under its own key and reads ${system} back to confirm it: a silent delete, nobody outside the run sees it.`
    : `The worker runs ${counter} in ${system} under its own key and reads ${system} back to confirm it. The original stays on record; ${audience} will see the counter-action.`;
}

/** Revokes with how each ended, read from the steps, escalations and corrections they led to (three reads). */
export async function summarizeRevokes(prisma: PrismaClient, revokes: readonly Revoke[]): Promise<TRevokeSummary[]> {
  if (revokes.length === 0) return [];
  const stepIds = [...new Set(revokes.flatMap((r) => (r.stepId ? [r.stepId] : [])))];
  const runIds = [...new Set(revokes.filter((r) => r.kind === "RUN").map((r) => r.runId))];
  const [steps, escalations, corrections, runs] = await onConnection(prisma, async () => [
    await prisma.step.findMany({ where: { id: { in: stepIds } }, select: { id: true, status: true, compensationState: true, compensationRef: true, manualRepair: true } }),
    await prisma.escalation.findMany({
      where: { OR: [{ id: { in: revokes.flatMap((r) => (r.escalationId ? [r.escalationId] : [])) } }, { stepId: { in: stepIds }, kind: EscalationKind.COMPENSATION_FAILED }] },
      select: { id: true, status: true, resolvedBy: true, stepId: true, kind: true },
    }),
    await prisma.correction.findMany({ where: { stepId: { in: stepIds } }, select: { id: true, status: true, stepId: true } }),
    await prisma.run.findMany({ where: { id: { in: runIds } }, select: { id: true, status: true } }),
  ] as const);
  const byId = <T extends { id: string }>(rows: readonly T[]) => new Map(rows.map((r) => [r.id, r]));
  const stepById = byId(steps);
  const escalationById = byId(escalations);
  return revokes.map((r) => {
    const escalation: Pick<Escalation, "id" | "status" | "resolvedBy"> | null =
      (r.escalationId ? escalationById.get(r.escalationId) : undefined) ?? escalations.find((e) => e.stepId === r.stepId && e.kind === EscalationKind.COMPENSATION_FAILED) ?? null;
    const correction: Pick<Correction, "id" | "status"> | null = corrections.find((c) => c.stepId === r.stepId) ?? null;
    const summary = toRevokeSummary(r, {
      step: r.stepId ? (stepById.get(r.stepId) ?? null) : null,
      escalation,
      correction,
      runStatus: runs.find((x) => x.id === r.runId)?.status,
    });
    return { ...summary, escalationId: summary.escalationId ?? escalation?.id ?? null, correctionId: summary.correctionId ?? correction?.id ?? null };
  });
}
