/**
 * Delivery: claims due deliveries with a lease and a claim number (the fencing token), sends each
 * (a signed POST, or an email), and records the result only under the claim it holds: a notifier
 * that stalled past its lease and wakes up changes nothing, and the delivery is sent again by whoever
 * took it over. So a delivery is sent at least once; its id (the same on every attempt and replay)
 * is what the receiver dedupes on. Failures back off exponentially up to `maxAttempts`, then the
 * delivery is FAILED and waits for an admin's replay.
 */
import type { NotificationDelivery, NotificationEvent, PrismaClient, Webhook } from "@/generated/prisma";
import { databaseNow } from "@/lib/core/db/dialect";
import { onConnection } from "@/lib/core/db/transactions";
import { approvalEmailLines } from "@/lib/server/approvals/approval-email";
import { postPivotToSlack } from "@/lib/server/slack/post-pivot-to-slack";
import type { SlackConfig } from "@/lib/server/slack/slack-config";
import { composeNotification } from "./compose-notification";
import { DeliveryChannel, DeliveryStatus } from "@/lib/core/outbox/vocabulary";
import { postWebhook, UNREACHABLE_ERROR } from "./post-webhook";
import { signWebhookBody, WEBHOOK_HEADERS } from "./webhook-signature";
import { REFUSAL_WORDS, webhookTargetPolicy, type WebhookTargetPolicy } from "./webhook-target";

/** Sends one email (nodemailer's Transporter fits). */
export interface Mailer {
  sendMail(message: { from: string; to: string; subject: string; text: string; headers?: Record<string, string> }): Promise<{ messageId?: string }>;
}

/** How deliveries are sent. */
export interface DeliverOptions {
  /** Recorded as the holder of claimed deliveries. */
  notifierId: string;
  /** Where links point (publicBaseUrl()). */
  baseUrl: string;
  /** The SMTP transport; null: email deliveries wait (none are written without one). */
  mailer: Mailer | null;
  /** The From address of emails. */
  from: string;
  /** Deliveries claimed per round (default 20). */
  batch?: number;
  /** How long a claim holds (default 60 s; a webhook call times out well before it). */
  leaseMs?: number;
  /** The first retry's delay; each further one doubles it, up to an hour (default 5 s). */
  backoffMs?: number;
  /** Attempts before a delivery is FAILED (default 8). */
  maxAttempts?: number;
  /** A webhook call's timeout (default 10 s). */
  timeoutMs?: number;
  /** Where webhooks may point, and the resolver (default: webhookTargetPolicy(), the system's DNS). */
  targetPolicy?: WebhookTargetPolicy;
  /** Slack's settings; null or absent: Slack deliveries wait (none are written without it). */
  slack?: SlackConfig | null;
}

/** What one attempt did. */
export interface DeliveryAttempt {
  deliveryId: string;
  channel: string;
  target: string;
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  /** Whether the result was recorded (false: the claim was taken over meanwhile). */
  recorded: boolean;
}

type Claimed = NotificationDelivery & { event: NotificationEvent; webhook: Webhook | null };

/** The delay before attempt `attempts + 1`. */
export function backoffDelayMs(attempts: number, baseMs: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempts - 1), 3_600_000);
}

/** Claims up to `batch` due deliveries: PENDING ones whose time has come, and SENDING ones whose lease ran out. */
async function claimDue(prisma: PrismaClient, options: DeliverOptions): Promise<Claimed[]> {
  return onConnection(prisma, async () => {
    const now = await databaseNow(prisma);
    const due = await prisma.notificationDelivery.findMany({
      where: { OR: [{ status: DeliveryStatus.PENDING, nextAttemptAt: { lte: now } }, { status: DeliveryStatus.SENDING, leaseUntil: { lt: now } }] },
      orderBy: { nextAttemptAt: "asc" },
      take: options.batch ?? 20,
      select: { id: true, claim: true, status: true },
    });
    const leaseUntil = new Date(now.getTime() + (options.leaseMs ?? 60_000));
    const claimed: Claimed[] = [];
    for (const d of due) {
      // Fenced on the claim number read: of two notifiers, one moves it.
      const { count } = await prisma.notificationDelivery.updateMany({
        where: { id: d.id, claim: d.claim, status: d.status },
        data: { status: DeliveryStatus.SENDING, claim: d.claim + 1, claimedBy: options.notifierId, leaseUntil },
      });
      if (count === 1) claimed.push(await prisma.notificationDelivery.findUniqueOrThrow({ where: { id: d.id }, include: { event: true, webhook: true } }));
    }
    return claimed;
  });
}

function errorText(e: unknown): string {
  const message = e instanceof Error ? (e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message) : String(e);
  return message.slice(0, 500);
}

/** One attempt at one delivery; never throws. */
async function send(prisma: PrismaClient, d: Claimed, options: DeliverOptions): Promise<{ ok: boolean; statusCode: number | null; error: string | null }> {
  try {
    if (d.channel === DeliveryChannel.slack) {
      if (!options.slack) return { ok: false, statusCode: null, error: "Slack is not configured (SAGABOARD_SLACK_BOT_TOKEN, SAGABOARD_SLACK_SIGNING_SECRET)" };
      await postPivotToSlack(prisma, options.slack, { pivotId: d.event.subjectId ?? "", target: d.target, baseUrl: options.baseUrl });
      return { ok: true, statusCode: 200, error: null };
    }
    const composed = await onConnection(prisma, () => composeNotification(prisma, d.event, options.baseUrl));
    if (d.channel === DeliveryChannel.webhook) {
      if (!d.webhook) return { ok: false, statusCode: null, error: "the webhook was deleted" };
      if (!d.webhook.enabled) return { ok: false, statusCode: null, error: "the webhook is disabled; enable it and replay the delivery" };
      const body = JSON.stringify({
        deliveryId: d.id,
        topic: d.event.topic,
        summary: composed.subject,
        link: composed.link,
        event: { id: d.event.id, type: d.event.eventType, runId: d.event.runId, subjectId: d.event.subjectId, at: d.event.createdAt.toISOString(), data: d.event.data },
      });
      const sent = await postWebhook(d.webhook.url, {
        headers: {
          "content-type": "application/json",
          "user-agent": "Sagaboard-Webhooks/1",
          [WEBHOOK_HEADERS.signature]: signWebhookBody(d.webhook.secret, body, Math.floor(Date.now() / 1000)),
          [WEBHOOK_HEADERS.delivery]: d.id,
          [WEBHOOK_HEADERS.topic]: d.event.topic,
        },
        body,
        timeoutMs: options.timeoutMs ?? 10_000,
        policy: options.targetPolicy ?? webhookTargetPolicy(),
      });
      // The log keeps a status and a fixed line: never what the receiver wrote back.
      // A name that stopped resolving is one more way of not reaching the receiver: the same words.
      if (sent.kind === "unreachable" || (sent.kind === "refused" && sent.reason === "unresolvable")) return { ok: false, statusCode: null, error: UNREACHABLE_ERROR };
      if (sent.kind === "refused") return { ok: false, statusCode: null, error: `the target was refused: ${REFUSAL_WORDS[sent.reason]}` };
      if (sent.status >= 200 && sent.status < 300) return { ok: true, statusCode: sent.status, error: null };
      const redirect = sent.status >= 300 && sent.status < 400 ? " (redirects are not followed)" : "";
      return { ok: false, statusCode: sent.status, error: `the receiver answered HTTP ${sent.status}${redirect}` };
    }
    if (!options.mailer) return { ok: false, statusCode: null, error: "no SMTP server is configured (SAGABOARD_SMTP_URL)" };
    // A waiting pivot's email carries its recipient's own approval link (lib/server/approvals/approval-email.ts).
    const personal = await approvalEmailLines(prisma, d, options.baseUrl);
    const text = [composed.text, ...personal].join("\n");
    await options.mailer.sendMail({ from: options.from, to: d.target, subject: composed.subject, text, headers: { "X-Sagaboard-Delivery": d.id } });
    return { ok: true, statusCode: 250, error: null };
  } catch (e) {
    const code = (e as { responseCode?: unknown }).responseCode;
    return { ok: false, statusCode: typeof code === "number" ? code : null, error: errorText(e) };
  }
}

/** Records an attempt under the claim this notifier holds. */
async function record(prisma: PrismaClient, d: Claimed, result: { ok: boolean; statusCode: number | null; error: string | null }, options: DeliverOptions): Promise<boolean> {
  return onConnection(prisma, async () => {
    const now = await databaseNow(prisma);
    const attempts = d.attempts + 1;
    const giveUp = !result.ok && attempts >= (options.maxAttempts ?? 8);
    const { count } = await prisma.notificationDelivery.updateMany({
      where: { id: d.id, claim: d.claim, status: DeliveryStatus.SENDING },
      data: {
        status: result.ok ? DeliveryStatus.DELIVERED : giveUp ? DeliveryStatus.FAILED : DeliveryStatus.PENDING,
        attempts,
        lastStatusCode: result.statusCode,
        lastError: result.error,
        deliveredAt: result.ok ? now : null,
        nextAttemptAt: result.ok || giveUp ? now : new Date(now.getTime() + backoffDelayMs(attempts, options.backoffMs ?? 5_000)),
        claimedBy: null,
        leaseUntil: null,
      },
    });
    return count === 1;
  });
}

/** One round: claims due deliveries, sends them concurrently, records each attempt. */
export async function deliverNotifications(prisma: PrismaClient, options: DeliverOptions): Promise<DeliveryAttempt[]> {
  const claimed = await claimDue(prisma, options);
  return Promise.all(
    claimed.map(async (d) => {
      const result = await send(prisma, d, options);
      const recorded = await record(prisma, d, result, options);
      return { deliveryId: d.id, channel: d.channel, target: d.target, ...result, recorded };
    }),
  );
}
