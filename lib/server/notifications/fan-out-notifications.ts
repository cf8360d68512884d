/**
 * Fan-out: turns each PENDING outbox row into its deliveries (one per subscribed webhook and one per
 * email recipient) and marks it FANNED_OUT. Idempotent: the (eventId, channel, target) unique index
 * makes a second notifier's insert of the same delivery fail, which is skipped, so two notifiers (or
 * one restarted halfway) write each delivery once.
 */
import { Prisma, type NotificationEvent, type PrismaClient } from "@/generated/prisma";
import { databaseNow } from "@/lib/core/db/dialect";
import { randomIds } from "@/packages/client/src/saga/ids";
import type { Json } from "@/packages/client/src/saga/tools";
import { DeliveryChannel, DeliveryStatus, NotificationEventStatus, NotificationTopic } from "@/lib/core/outbox/vocabulary";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { withPeoplesChoices } from "./my-notifications";

function stringsOf(value: Prisma.JsonValue | null | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string" && v.length > 0) : [];
}

function field(data: Json, name: string): string | null {
  const value = data !== null && typeof data === "object" && !Array.isArray(data) ? data[name] : undefined;
  return typeof value === "string" && value.length > 0 ? value : null;
}

/** Addresses of the people with `role` whose accounts are not disabled. */
async function addressesOfRole(prisma: PrismaClient, role: string): Promise<string[]> {
  return (await prisma.user.findMany({ where: { role, disabledAt: null }, select: { email: true }, orderBy: { email: "asc" } })).map((u) => u.email);
}

/** A team's addresses (NotificationTeam); empty when the team has no row. */
async function addressesOfTeam(prisma: PrismaClient, team: string | null): Promise<string[]> {
  if (!team) return [];
  return stringsOf((await prisma.notificationTeam.findUnique({ where: { name: team } }))?.emails);
}

/**
 * The team an escalation is routed to: the owner recorded with it, else the one the tool table names
 * for its tool now (the escalation page and queue read it the same way: lib/desks/escalations/escalation-view.ts).
 */
export async function escalationOwnerOf(prisma: PrismaClient, escalationId: string): Promise<string | null> {
  const escalation = await prisma.escalation.findUnique({ where: { id: escalationId }, select: { owner: true, detail: true, step: { select: { tool: true } } } });
  if (!escalation) return null;
  if (escalation.owner) return escalation.owner;
  const detail = escalation.detail;
  const tool = escalation.step?.tool ?? (detail && typeof detail === "object" && !Array.isArray(detail) && typeof detail.tool === "string" ? detail.tool : null);
  return tool ? ((await prisma.toolPolicy.findUnique({ where: { name: tool }, select: { owner: true } }))?.owner ?? null) : null;
}

/**
 * Who is emailed about `event`: reviewers for pivots, the owner team for escalations (reviewers when
 * the team has no addresses, so an item is never announced to nobody), the backup team too on a
 * breach, support for corrections, then each person's own choices (lib/server/notifications/my-notifications.ts):
 * off takes them off, on adds them. Revokes go to webhooks only.
 */
export async function emailRecipients(prisma: PrismaClient, event: Pick<NotificationEvent, "topic" | "subjectId" | "data">): Promise<string[]> {
  const owners = async (): Promise<string[]> => {
    if (event.subjectId?.startsWith("esc_")) {
      const team = await addressesOfTeam(prisma, await escalationOwnerOf(prisma, event.subjectId));
      if (team.length > 0) return team;
    }
    return addressesOfRole(prisma, "reviewer");
  };
  const byRole = async (): Promise<string[]> => {
    switch (event.topic) {
      case NotificationTopic.pivot_waiting:
      case NotificationTopic.escalation_raised:
      case NotificationTopic.sla_reminder:
        return owners();
      case NotificationTopic.sla_breached:
        return [...new Set([...(await addressesOfTeam(prisma, field(event.data as Json, "backupTeam"))), ...(await owners())])];
      case NotificationTopic.correction_waiting:
        return addressesOfRole(prisma, "support");
      default:
        return [];
    }
  };
  // Then what each person chose for themselves (/me/notifications).
  return withPeoplesChoices(prisma, event.topic, await byRole());
}

/** How fan-out runs. */
export interface FanOutOptions {
  /** Whether email deliveries are written (false when no SMTP server is configured). */
  email: boolean;
  /**
   * Slack deliveries of waiting pivots, when Slack is configured: to `channel`, or (null) one to each
   * person who decides pivots, by email. Undefined or false: none.
   */
  slack?: { channel: string | null } | false;
  /** Outbox rows per round (default 100). */
  batch?: number;
}

/** Writes the deliveries of up to `batch` PENDING outbox rows, oldest first; returns how many rows it fanned out. */
export async function fanOutNotifications(prisma: PrismaClient, options: FanOutOptions): Promise<number> {
  const events = await prisma.notificationEvent.findMany({ where: { status: NotificationEventStatus.PENDING }, orderBy: { createdAt: "asc" }, take: options.batch ?? 100 });
  for (const event of events) {
    const hooks = (await prisma.webhook.findMany({ where: { enabled: true }, orderBy: { createdAt: "asc" } })).filter((h) => stringsOf(h.topics).includes(event.topic));
    const targets: { channel: string; webhookId: string | null; target: string }[] = hooks.map((h) => ({ channel: DeliveryChannel.webhook, webhookId: h.id, target: h.id }));
    if (options.email) for (const address of await emailRecipients(prisma, event)) targets.push({ channel: DeliveryChannel.email, webhookId: null, target: address });
    if (options.slack && event.topic === NotificationTopic.pivot_waiting) {
      const slackTargets = options.slack.channel ? [`channel:${options.slack.channel}`] : (await emailRecipients(prisma, event)).map((address) => `user:${address}`);
      for (const target of slackTargets) targets.push({ channel: DeliveryChannel.slack, webhookId: null, target });
    }
    const now = await databaseNow(prisma);
    for (const t of targets) {
      try {
        await prisma.notificationDelivery.create({
          data: { id: randomIds.next("dlv"), eventId: event.id, channel: t.channel, webhookId: t.webhookId, target: t.target, status: DeliveryStatus.PENDING, nextAttemptAt: now, createdAt: now },
        });
      } catch (e) {
        // Another notifier wrote this delivery first.
        if (!isUniqueViolation(e)) throw e;
      }
    }
    await prisma.notificationEvent.updateMany({ where: { id: event.id, status: NotificationEventStatus.PENDING }, data: { status: NotificationEventStatus.FANNED_OUT, fannedOutAt: now } });
  }
  return events.length;
}
