import type { NotificationDelivery, NotificationEvent, PrismaClient, Webhook } from "@/generated/prisma";
import { onConnection } from "@/lib/core/db/transactions";
import type { TDeliveryView, TNotificationSettings, TWebhookView } from "./webhook-views";
import type { DeliveryStatus } from "@/lib/core/outbox/vocabulary";

/** Deliveries shown per hook. */
const LOG_LENGTH = 50;

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** A delivery row as the log shows it. */
export function toDeliveryView(d: NotificationDelivery & { event: Pick<NotificationEvent, "topic" | "eventType" | "runId" | "subjectId"> }): TDeliveryView {
  return {
    id: d.id,
    topic: d.event.topic,
    eventType: d.event.eventType,
    runId: d.event.runId,
    subjectId: d.event.subjectId,
    status: d.status as DeliveryStatus,
    attempts: d.attempts,
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    nextAttemptAt: d.nextAttemptAt.toISOString(),
    deliveredAt: d.deliveredAt?.toISOString() ?? null,
    replayedBy: d.replayedBy,
    replayedAt: d.replayedAt?.toISOString() ?? null,
    createdAt: d.createdAt.toISOString(),
  };
}

/** A webhook row with its log, as the admin page shows it. */
export async function toWebhookView(prisma: PrismaClient, hook: Webhook): Promise<TWebhookView> {
  const [deliveries, counts] = await onConnection(prisma, async () => [
    await prisma.notificationDelivery.findMany({
      where: { webhookId: hook.id },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: LOG_LENGTH,
      include: { event: { select: { topic: true, eventType: true, runId: true, subjectId: true } } },
    }),
    await prisma.notificationDelivery.groupBy({ by: ["status"], where: { webhookId: hook.id }, _count: { _all: true } }),
  ] as const);
  return {
    id: hook.id,
    name: hook.name,
    url: hook.url,
    topics: strings(hook.topics),
    enabled: hook.enabled,
    createdBy: hook.createdBy,
    createdAt: hook.createdAt.toISOString(),
    counts: Object.fromEntries(counts.map((c) => [c.status, c._count._all])),
    deliveries: deliveries.map(toDeliveryView),
  };
}

/** Every webhook with its latest deliveries, the teams' addresses and the SLA rules. */
export async function findNotificationSettings(prisma: PrismaClient): Promise<TNotificationSettings> {
  const [hooks, teams, rules] = await onConnection(prisma, async () => [
    await prisma.webhook.findMany({ orderBy: { createdAt: "asc" } }),
    await prisma.notificationTeam.findMany({ orderBy: { name: "asc" } }),
    await prisma.slaRule.findMany({ orderBy: { target: "asc" } }),
  ] as const);
  const webhooks: TWebhookView[] = [];
  for (const hook of hooks) webhooks.push(await toWebhookView(prisma, hook));
  return {
    webhooks,
    teams: teams.map((t) => ({ name: t.name, emails: strings(t.emails), updatedBy: t.updatedBy, updatedAt: t.updatedAt.toISOString() })),
    slaRules: rules.map((r) => ({ target: r.target, slaSec: r.slaSec, reminderAt: r.reminderAt, backupTeam: r.backupTeam, expireSec: r.expireSec, updatedBy: r.updatedBy, updatedAt: r.updatedAt.toISOString() })),
    emailConfigured: Boolean(process.env.SAGABOARD_SMTP_URL?.trim()),
  };
}
