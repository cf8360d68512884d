import { getPrisma } from "@/lib/core/db/prisma";
import { revealPersonal } from "@/lib/core/privacy/personal-data-vault";
import { z } from "zod";
import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan } from "@/lib/server/auth/roles";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { withDb } from "@/lib/desks/dashboard/context";
import { runScope } from "@/packages/client/src/saga/store";
import { AudienceSource, resolveAudience } from "@/lib/server/tools/audience";
import type { Json } from "@/packages/client/src/saga/tools";
import { ZRunStatus, ZStepStatus, ZToolClass } from "@/packages/client/src/protocol/schemas/saga";
import { CORRECTION_INCLUDE, namesByEmail, originalRecipients, queueItem, recipientsOf, sendRunId, sendStateOf } from "./correction-view";
import { sendStepsOf, settleCorrectionSends } from "./settle-correction-send";
import { stepStanding } from "@/packages/client/src/saga/step-standing";
import type { SendState, TCorrectionDetail, THistoryEntry } from "./views";

/** A correction id from a caller. */
export const ZCorrectionId = z.string().trim().min(1).max(80);

/** Not found, in words that say what to do. */
export function correctionNotFound(id: string): ApiError {
  return new ApiError("NOT_FOUND", `Correction ${id} does not exist; go back to the corrections queue and reload it.`);
}

function field(data: unknown, name: string): unknown {
  return data && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>)[name] : undefined;
}

function who(actor: string): string {
  const [type, ...rest] = actor.split(":");
  const id = rest.join(":");
  if (type === "user") return id;
  if (type === "system") return id === "correction-desk" ? "the correction desk" : `worker ${id}`;
  return `agent ${id}`;
}

function drafter(draftedBy: string | null): string {
  if (draftedBy?.startsWith("revoke:")) return `the revoke trigger ${draftedBy.slice("revoke:".length)}`;
  return "the unwind of the run";
}

/** One audit event as a sentence. */
function sentence(type: string, actor: string, data: unknown, draftedBy: string | null): string {
  const by = who(actor);
  switch (type) {
    case "correction.drafted":
      return `Drafted by ${drafter(draftedBy)} for the ${(field(data, "audience") as string[] | undefined)?.join(", ") ?? "original"} audience (${by}).`;
    case "correction.claimed":
      return `Claimed by ${by}.`;
    case "correction.released":
      return `Given back to the queue by ${by}.`;
    case "correction.edited": {
      const changed = field(data, "changed");
      return `Edited by ${by}: ${Array.isArray(changed) && changed.length ? changed.join(", ") : "no change"}.`;
    }
    case "correction.send_requested": {
      const to = field(data, "recipients");
      return `Approved and sent to the worker by ${by}, to ${Array.isArray(to) ? to.join(", ") : "its recipients"}.`;
    }
    case "correction.sent":
      return `Sent (message id ${String(field(data, "messageId") ?? "unknown")}), asked by ${String(field(data, "sentBy") ?? "someone")}.`;
    case "correction.dismissed":
      return `Dismissed by ${by}: "${String(field(data, "reason") ?? "")}".`;
    case "pivot.approved":
      return `The send was approved by ${by}, exactly as shown.`;
    case "step.intended":
      return `The worker recorded its intent to send (step ${String(field(data, "stepIdx"))}, key ${String(field(data, "stepKey") ?? "").slice(0, 12)}…) before calling the email provider.`;
    case "step.retry_intended":
      return `The worker tries the send again under the same key (the provider never got it).`;
    case "step.unknown":
      return `The email provider did not answer (${String(field(data, "message") ?? "timeout")}): outcome unknown. It is looked up by its key before anything is sent again.`;
    case "step.confirmed":
      return `The email provider accepted the message (id ${String(field(data, "externalRef") ?? "?")}).`;
    case "step.reconciled":
    case "step.settled":
      return `Looked up by its key: ${String(field(data, "status") ?? field(data, "outcome") ?? "settled")}.`;
    case "step.failed":
      return `The email provider refused the message: ${String(field(data, "message") ?? field(data, "reason") ?? "refused")}.`;
    default:
      return `${type} by ${by}.`;
  }
}

const SEND_RUN_EVENTS = new Set(["pivot.approved", "step.intended", "step.retry_intended", "step.unknown", "step.confirmed", "step.reconciled", "step.settled", "step.failed"]);

function sendText(send: SendState, messageId: string | null): string | null {
  switch (send) {
    case "none":
      return null;
    case "queued":
      return "Approved; waiting for the worker to send it.";
    case "outcome_unknown":
      return "Outcome unknown: the email provider did not answer. The worker looks the message up by its key and sends it only if it does not exist; it is never resent blindly.";
    case "refused":
      return "The email provider refused the message; nothing was sent. See the history for its answer.";
    case "confirmed":
      return `Sent; the provider's message id is ${messageId ?? "recorded on the step"}.`;
  }
}

/**
 * One correction with what it answers, in words: the original step (tool, when, to whom, its text,
 * external ref, whether its audience saw it), the run's other steps, the draft as it stands and as
 * drafted, where the send stands, and the history from the audit events of both runs.
 */
export async function getCorrection(request: PersonRequest<{ correctionId: string }>): Promise<TCorrectionDetail> {
  const view = await getCorrectionStored(request);
  // Personal fields are stored sealed: opened here, or "erased on <date>" (lib/core/privacy/ARCHITECTURE.md).
  // Not inside withDb: the reveal queues its one read of the keys on the same connection itself.
  return revealPersonal(await getPrisma(), view);
}

async function getCorrectionStored({ actor, correctionId }: PersonRequest<{ correctionId: string }>): Promise<TCorrectionDetail> {
  assertCan(actor, "read");
  const id = ZCorrectionId.parse(correctionId);
  const first = await withDb((prisma) => prisma.correction.findUnique({ where: { id }, include: CORRECTION_INCLUDE }));
  if (!first) throw correctionNotFound(id);
  if (first.status === "SENDING") await settleCorrectionSends([{ id, expected: recipientsOf(first).length }]);

  const { row, run, original, steps, events, names, revoke, rule, now } = await withDb(async (prisma) => {
    const row = await prisma.correction.findUniqueOrThrow({ where: { id }, include: CORRECTION_INCLUDE });
    const run = await prisma.run.findUniqueOrThrow({ where: { id: row.runId }, select: { id: true, title: true, status: true, agent: true, onBehalfOf: true } });
    const original = await prisma.step.findUniqueOrThrow({ where: { id: row.stepId } });
    const steps = await prisma.step.findMany({ where: { runId: row.runId }, orderBy: { stepIdx: "asc" } });
    const events = await prisma.auditEvent.findMany({ where: { scope: { in: [runScope(row.runId), runScope(sendRunId(id))] } }, orderBy: [{ at: "asc" }, { seq: "asc" }] });
    const revokeId = row.draftedBy?.startsWith("revoke:") ? row.draftedBy.slice("revoke:".length) : null;
    const revoke = revokeId ? await prisma.revoke.findUnique({ where: { id: revokeId }, select: { id: true, requestedBy: true, role: true, reason: true, requestedAt: true } }) : null;
    const names = await namesByEmail(prisma, [row.claimedBy, revoke?.requestedBy ?? null]);
    const policy = await prisma.toolPolicy.findUnique({ where: { name: original.tool }, select: { audienceRule: true } });
    return { row, run, original, steps, events, names, revoke, rule: policy?.audienceRule ?? null, now: new Date() };
  });
  const sendSteps = (await sendStepsOf(row.status === "SENDING" ? [id] : [])).get(id);
  const recipients = recipientsOf(row);
  const send = sendStateOf(row.status, sendSteps, recipients.length);
  const item = queueItem(row, now, { claimedByName: row.claimedBy ? (names.get(row.claimedBy) ?? null) : null, send });

  const sendScope = runScope(sendRunId(id));
  const history: THistoryEntry[] = events
    .filter((e) =>
      e.scope === sendScope
        ? SEND_RUN_EVENTS.has(e.type)
        : e.type.startsWith("correction.") && (field(e.data, "correctionId") === id || (e.type === "correction.drafted" && e.stepId === row.stepId)),
    )
    .map((e) => ({ type: e.type, actor: e.actor, at: e.at.toISOString(), text: sentence(e.type, e.actor, e.data, row.draftedBy), data: e.data as Json }));

  const recorded = Array.isArray(original.audience) ? original.audience.filter((a): a is string => typeof a === "string") : [];
  const seenBy = resolveAudience(recorded, rule, original.args);
  const audience = seenBy.audience;
  const seen = seenBy.rank > 0;
  const args = original.args as Json;
  const subject = field(args, "subject");
  const text = field(args, "body");
  return {
    ...item,
    version: row.version,
    body: row.body,
    drafted: { subject: row.originalSubject ?? row.subject, body: row.originalBody ?? row.body },
    editedBy: row.editedBy,
    editedAt: row.editedAt?.toISOString() ?? null,
    claimedAt: row.claimedAt?.toISOString() ?? null,
    sentBy: row.sentBy,
    sentAt: row.sentAt?.toISOString() ?? null,
    messageId: row.messageId,
    sendStepId: row.sendStepId,
    sendRunId: row.status === "SENDING" || row.status === "SENT" ? sendRunId(id) : null,
    sendText: sendText(send, row.messageId),
    dismissedBy: row.dismissedBy,
    dismissedAt: row.dismissedAt?.toISOString() ?? null,
    dismissReason: row.dismissReason,
    original: {
      tool: original.tool,
      toolClass: ZToolClass.parse(original.toolClass),
      status: ZStepStatus.parse(original.status),
      at: original.createdAt.toISOString(),
      recipients: originalRecipients(original.args),
      audience,
      subject: typeof subject === "string" ? subject : null,
      text: typeof text === "string" ? text : null,
      externalRef: original.externalRef,
      seen,
      seenText: seen
        ? seenBy.source === AudienceSource.unknown
          ? `Nothing states who saw it, so it counts as customer-facing: ${original.tool} may have reached people outside the company. Check before dismissing.`
          : `Its audience (${audience.join(", ")}) saw it: ${original.tool} reached people outside the company.`
        : `Its audience (${audience.join(", ") || "nobody"}) is internal: nobody outside the company saw it, so a letter is usually not needed.`,
      args,
    },
    run: { ...run, status: ZRunStatus.parse(run.status) },
    steps: steps.map((s) => ({
      id: s.id,
      stepIdx: s.stepIdx,
      tool: s.tool,
      toolClass: ZToolClass.parse(s.toolClass),
      status: ZStepStatus.parse(s.status),
      standing: stepStanding(s),
      externalRef: s.externalRef,
      audience: Array.isArray(s.audience) ? s.audience.filter((a): a is string => typeof a === "string") : [],
      at: s.createdAt.toISOString(),
    })),
    history,
    revoke: revoke
      ? { id: revoke.id, requestedBy: revoke.requestedBy, requestedByName: names.get(revoke.requestedBy) ?? null, role: revoke.role, reason: revoke.reason, requestedAt: revoke.requestedAt.toISOString() }
      : null,
  };
}
