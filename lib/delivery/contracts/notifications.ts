/**
 * Contracts of the notifications admin desk (app/api/dashboard/admin/webhooks/**): webhooks and their
 * delivery logs, replays, the teams' addresses and the SLA rules. Session-authenticated; every route
 * needs `tokens.manage` (a webhook's signing secret is a credential, like a token's).
 */
import * as z from "zod";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { ZSaveSlaRuleRequest } from "@/lib/server/sla/sla-rules";
import { ZTeamInput } from "@/lib/server/sla/save-sla-settings";
import { ZCreateWebhookRequest, ZCreatedWebhook, ZDeliveryView, ZNotificationSettings, ZWebhookView } from "@/lib/server/notifications/webhook-views";
import { ZSetWebhookEnabledRequest } from "@/lib/server/notifications/set-webhook-enabled";
import { ZDeletedWebhook, ZDeleteWebhookRequest } from "@/lib/server/notifications/delete-webhook";
import { ZOperations } from "@/lib/desks/operations/views";

const tags = ["admin"];

export const adminFindNotificationSettings = defineEndpoint({
  method: "GET",
  path: DashboardPath.findNotificationSettings,
  operationId: "adminFindNotificationSettings",
  summary: "Webhooks with their latest deliveries (status, attempts, last error), the teams' addresses and the SLA rules",
  tags,
  auth: "user",
  response: ZNotificationSettings,
});

export const adminGetOperations = defineEndpoint({
  method: "GET",
  path: DashboardPath.getOperations,
  operationId: "adminGetOperations",
  summary: "Whether Sagaboard itself is healthy: workers seen, the task queue, the notifier's backlog and errors, stuck runs, the sweeps' newest marks",
  tags,
  auth: "user",
  response: ZOperations,
});

export const adminCreateWebhook = defineEndpoint({
  method: "POST",
  path: DashboardPath.createWebhook,
  operationId: "adminCreateWebhook",
  summary: "Register a webhook for some topics; its signing secret is returned this once",
  tags,
  auth: "user",
  body: ZCreateWebhookRequest,
  response: ZCreatedWebhook,
  successStatus: 201,
});

export const adminReplayDelivery = defineEndpoint({
  method: "POST",
  path: DashboardPath.replayDelivery,
  operationId: "adminReplayDelivery",
  summary: "Send a delivery again, under the same delivery id (receivers dedupe on it)",
  description: "A delivery a notifier is sending right now is answered 409 INVALID_TRANSITION.",
  tags,
  auth: "user",
  body: z.object({ deliveryId: z.string().trim().min(1).max(80) }),
  response: ZDeliveryView,
});

export const adminSetWebhookEnabled = defineEndpoint({
  method: "POST",
  path: DashboardPath.setWebhookEnabled,
  operationId: "adminSetWebhookEnabled",
  summary: "Disable (or enable again) a webhook; audited on the webhook's chain",
  description: "While disabled, its deliveries fail with a fixed reason; enable it and replay them to send them.",
  tags,
  auth: "user",
  body: ZSetWebhookEnabledRequest,
  response: ZWebhookView,
});

export const adminDeleteWebhook = defineEndpoint({
  method: "POST",
  path: DashboardPath.deleteWebhook,
  operationId: "adminDeleteWebhook",
  summary: "Delete a webhook: its waiting deliveries are given up, its log stays; audited on the webhook's chain",
  tags,
  auth: "user",
  body: ZDeleteWebhookRequest,
  response: ZDeletedWebhook,
});

export const adminSaveSlaRule = defineEndpoint({
  method: "POST",
  path: DashboardPath.saveSlaRule,
  operationId: "adminSaveSlaRule",
  summary: "Set (or with remove: true, delete) the SLA rule of pivots, an escalation kind or a tool",
  tags,
  auth: "user",
  body: ZSaveSlaRuleRequest,
  response: ZNotificationSettings,
});

export const adminSaveNotificationTeam = defineEndpoint({
  method: "POST",
  path: DashboardPath.saveNotificationTeam,
  operationId: "adminSaveNotificationTeam",
  summary: "Set a team's email addresses (an empty list removes the team)",
  tags,
  auth: "user",
  body: ZTeamInput,
  response: ZNotificationSettings,
});
