/** What the webhook admin screens and endpoints show: hooks, their delivery logs, teams and SLA rules. */
import * as z from "zod";
import { NOTIFICATION_TOPICS, DeliveryStatus } from "@/lib/core/outbox/vocabulary";

/** A notification topic. */
export const ZTopic = z.enum(NOTIFICATION_TOPICS as [string, ...string[]]);

/** One delivery in a hook's log. */
export const ZDeliveryView = z.object({
  id: z.string(),
  /** What it announced. */
  topic: z.string(),
  eventType: z.string(),
  runId: z.string().nullable(),
  subjectId: z.string().nullable(),
  status: z.enum(DeliveryStatus),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.iso.datetime(),
  deliveredAt: z.iso.datetime().nullable(),
  replayedBy: z.string().nullable(),
  replayedAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
});
export type TDeliveryView = z.infer<typeof ZDeliveryView>;

/** One webhook with its latest deliveries (newest first). */
export const ZWebhookView = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  topics: z.array(z.string()),
  enabled: z.boolean(),
  createdBy: z.string(),
  createdAt: z.iso.datetime(),
  /** Counts over the whole log, by status. */
  counts: z.record(z.string(), z.number().int()),
  deliveries: z.array(ZDeliveryView),
});
export type TWebhookView = z.infer<typeof ZWebhookView>;

/** A team's addresses. */
export const ZTeamView = z.object({ name: z.string(), emails: z.array(z.string()), updatedBy: z.string(), updatedAt: z.iso.datetime() });

/** An SLA rule row. */
export const ZSlaRuleView = z.object({
  target: z.string(),
  slaSec: z.number().int(),
  reminderAt: z.number(),
  backupTeam: z.string().nullable(),
  expireSec: z.number().int().nullable(),
  updatedBy: z.string(),
  updatedAt: z.iso.datetime(),
});

/** The notifications admin page. */
export const ZNotificationSettings = z.object({
  webhooks: z.array(ZWebhookView),
  teams: z.array(ZTeamView),
  slaRules: z.array(ZSlaRuleView),
  /** Whether email goes out (SAGABOARD_SMTP_URL is set where this runs). */
  emailConfigured: z.boolean(),
});
export type TNotificationSettings = z.infer<typeof ZNotificationSettings>;

/** A new webhook, as an admin fills it in. */
export const ZCreateWebhookRequest = z.object({
  name: z.string().trim().min(1, "give the webhook a name").max(80),
  url: z
    .string()
    .trim()
    .max(2000)
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), { message: "use an http:// or https:// address" }),
  topics: z.array(ZTopic).min(1, "pick at least one topic"),
});
export type TCreateWebhookRequest = z.infer<typeof ZCreateWebhookRequest>;

/** A created webhook: its signing secret is shown in this one response. */
export const ZCreatedWebhook = z.object({ webhook: ZWebhookView, secret: z.string() });
