/** Shared by the correction use cases: a correction row as the queue and its page show it. */
import type { Prisma } from "@/generated/prisma";
import { UNKNOWN_AUDIENCE } from "@/lib/server/tools/audience";
import { CorrectionStatus, StepStatus, UNSETTLED_STATUSES, type StepStatus as TStepStatus } from "@/packages/client/src/saga/vocabulary";
import { SendState, type CorrectionState, type TCorrectionQueueItem } from "./views";

/** What a queue row reads besides the correction: its run's title and its original step. */
export const CORRECTION_INCLUDE = {
  run: { select: { id: true, title: true } },
  step: { select: { id: true, stepIdx: true, tool: true, args: true } },
} as const satisfies Prisma.CorrectionInclude;

/** A correction row with its run and step. */
export type CorrectionRowWithRefs = Prisma.CorrectionGetPayload<{ include: typeof CORRECTION_INCLUDE }>;

/** How long a correction may wait, by blast radius: a customer's letter first, internal notes last. */
export const SLA_HOURS_BY_RANK: Readonly<Record<number, number>> = { 0: 24, 1: 8, 2: 4 };

/**
 * The run that sends a correction: derived from the correction, so a repeated, replayed or
 * concurrent Send finds the same run (and the same step keys) instead of making another.
 */
export function sendRunId(correctionId: string): string {
  return `run_${correctionId}`;
}

/** The agent name the send runs are recorded under (people approve them; the worker calls the tool). */
export const CORRECTION_AGENT = "correction-desk";

/** The correction's state on the desk. */
export function correctionState(row: { status: string; claimedBy: string | null }): CorrectionState {
  switch (row.status) {
    case CorrectionStatus.SENT:
      return "sent";
    case CorrectionStatus.DISMISSED:
      return "dismissed";
    case CorrectionStatus.SENDING:
      return "sending";
    default:
      return row.claimedBy ? "claimed" : "draft";
  }
}

function stringList(value: Prisma.JsonValue | null | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** Addresses the original effect went to, when its call names one (`to`, `email`). */
export function originalRecipients(args: Prisma.JsonValue): string[] {
  if (!args || typeof args !== "object" || Array.isArray(args)) return [];
  const found = [args.to, args.email].filter((v): v is string => typeof v === "string" && v.includes("@"));
  return [...new Set(found)];
}

/** Who the correction goes to: the addresses support set, else the original's. */
export function recipientsOf(row: { recipients: Prisma.JsonValue | null; step: { args: Prisma.JsonValue } }): string[] {
  return row.recipients === null ? originalRecipients(row.step.args) : stringList(row.recipients);
}

/** Where a send stands, from the statuses of its run's steps (none when no send was asked). */
export function sendStateOf(status: string, sendSteps: readonly { status: string }[] | undefined, expected: number): SendState {
  if (status === CorrectionStatus.SENT) return SendState.confirmed;
  if (status !== CorrectionStatus.SENDING) return SendState.none;
  const steps = sendSteps ?? [];
  if (steps.some((s) => UNSETTLED_STATUSES.includes(s.status as TStepStatus))) return SendState.outcome_unknown;
  if (steps.some((s) => s.status === StepStatus.FAILED)) return SendState.refused;
  if (steps.length >= expected && steps.length > 0 && steps.every((s) => s.status === StepStatus.CONFIRMED)) return SendState.confirmed;
  return SendState.queued;
}

function duration(seconds: number): string {
  const s = Math.abs(seconds);
  if (s < 3600) return `${Math.max(1, Math.round(s / 60))} min`;
  if (s < 48 * 3600) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} days`;
}

/** A queue row, its age and SLA measured against `now`. */
export function queueItem(
  row: CorrectionRowWithRefs,
  now: Date,
  extra: { claimedByName?: string | null; send?: SendState } = {},
): TCorrectionQueueItem {
  const state = correctionState(row);
  const end = row.sentAt ?? row.dismissedAt ?? now;
  const ageSeconds = Math.max(0, Math.floor((end.getTime() - row.createdAt.getTime()) / 1000));
  const slaSeconds = (SLA_HOURS_BY_RANK[row.rank] ?? 4) * 3600;
  const dueAt = new Date(row.createdAt.getTime() + slaSeconds * 1000);
  const left = slaSeconds - ageSeconds;
  const handled = state === "sent" || state === "dismissed";
  const sla = handled
    ? { state: "met" as const, label: `handled in ${duration(ageSeconds)}` }
    : left < 0
      ? { state: "overdue" as const, label: `overdue by ${duration(-left)}` }
      : { state: left < slaSeconds / 4 ? ("due_soon" as const) : ("ok" as const), label: `due in ${duration(left)}` };
  return {
    id: row.id,
    state,
    // A correction whose audience nothing states counts as customer-facing, never as internal.
    audience: stringList(row.audience).length > 0 ? stringList(row.audience) : [UNKNOWN_AUDIENCE],
    rank: stringList(row.audience).length > 0 ? Math.min(2, Math.max(0, row.rank)) : 2,
    subject: row.subject,
    recipients: recipientsOf(row),
    run: row.run,
    step: { id: row.step.id, stepIdx: row.step.stepIdx, tool: row.step.tool },
    draftedBy: row.draftedBy,
    claimedBy: row.claimedBy,
    claimedByName: extra.claimedByName ?? null,
    send: extra.send ?? sendStateOf(row.status, undefined, 0),
    createdAt: row.createdAt.toISOString(),
    ageSeconds,
    sla: { dueAt: dueAt.toISOString(), ...sla },
  };
}

/** Display names of dashboard users by email (for "held by Sam Support"). */
export async function namesByEmail(prisma: Prisma.TransactionClient | { user: Prisma.TransactionClient["user"] }, emails: readonly (string | null)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(emails.filter((e): e is string => Boolean(e)))];
  if (wanted.length === 0) return new Map();
  const rows = await prisma.user.findMany({ where: { email: { in: wanted } }, select: { email: true, name: true } });
  return new Map(rows.map((r) => [r.email, r.name]));
}
