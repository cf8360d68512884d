/**
 * The outbox: which audit events notify people, and the row each of them writes in its own
 * transaction. lib/core/db/audit-chain.ts calls `recordNotification` after appending a link, so an event
 * and its notification commit (or roll back) together and a decision never waits for a delivery.
 * The saga log's hot writes (step intents and outcomes, lib/core/db/step-log-sql.ts) never notify and do
 * not come through here.
 */
import type { Prisma } from "@/generated/prisma";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { Json } from "@/packages/client/src/saga/tools";
import { NotificationEventStatus, NotificationTopic } from "./vocabulary";

type Tx = Prisma.TransactionClient;

/** The audit link just appended, as the outbox needs it. */
export interface AppendedLink {
  scope: string;
  seq: number;
  runId: string | null;
  stepId: string | null;
  type: string;
  data: Json;
}

function field(data: Json, name: string): Json | undefined {
  return data !== null && typeof data === "object" && !Array.isArray(data) ? data[name] : undefined;
}

function text(value: Json | undefined): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}

/** The event types that notify, and their topic (a rejection notifies only when an SLA expiry made it). */
export function notificationTopic(type: string, data: Json): NotificationTopic | null {
  switch (type) {
    case "pivot.requested":
      return NotificationTopic.pivot_waiting;
    case "escalation.raised":
      return NotificationTopic.escalation_raised;
    case "correction.drafted":
      return NotificationTopic.correction_waiting;
    case "revoke.pulled":
    case "revoke.run_pulled":
      return NotificationTopic.revoke_pulled;
    case "sla.reminder":
      return NotificationTopic.sla_reminder;
    case "sla.breached":
      return NotificationTopic.sla_breached;
    case "pivot.rejected":
      return field(data, "expired") === true ? NotificationTopic.sla_breached : null;
    case "escalation.resolved":
      return field(field(data, "resolution") ?? null, "expired") === true ? NotificationTopic.sla_breached : null;
    default:
      return null;
  }
}

/**
 * The item the event is about, read inside the event's transaction (after its write, so SQLite's
 * write-first rule holds): the row the same transaction created, matched by run, step and the
 * transaction's own database time.
 */
async function subjectOf(tx: Tx, now: Date, link: AppendedLink): Promise<string | null> {
  switch (link.type) {
    case "pivot.requested": {
      if (!link.runId) return null;
      const pivot = await tx.pivot.findFirst({ where: { runId: link.runId, status: "PENDING" }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], select: { id: true } });
      return pivot?.id ?? null;
    }
    case "escalation.raised": {
      if (!link.runId) return null;
      const kind = text(field(link.data, "kind"));
      const escalation = await tx.escalation.findFirst({
        where: { runId: link.runId, stepId: link.stepId, createdAt: now, ...(kind ? { kind } : {}) },
        orderBy: { id: "desc" },
        select: { id: true },
      });
      return escalation?.id ?? null;
    }
    case "correction.drafted": {
      if (!link.stepId) return null;
      const correction = await tx.correction.findUnique({ where: { stepId: link.stepId }, select: { id: true } });
      return correction?.id ?? null;
    }
    case "revoke.pulled":
    case "revoke.run_pulled":
      return text(field(link.data, "revokeId"));
    case "pivot.rejected":
      return text(field(link.data, "pivotId"));
    case "escalation.resolved":
      return text(field(link.data, "escalationId"));
    default:
      return text(field(link.data, "itemId"));
  }
}

/** Writes the outbox row of `link` when its event notifies; one per audit event (unique scope + seq). */
export async function recordNotification(tx: Tx, now: Date, link: AppendedLink): Promise<void> {
  const topic = notificationTopic(link.type, link.data);
  if (!topic) return;
  await tx.notificationEvent.create({
    data: {
      id: randomIds.next("ntf"),
      topic,
      eventType: link.type,
      scope: link.scope,
      seq: link.seq,
      runId: link.runId,
      subjectId: await subjectOf(tx, now, link),
      data: (link.data ?? {}) as Prisma.InputJsonValue,
      createdAt: now,
      status: NotificationEventStatus.PENDING,
    },
  });
}
