import * as api from "@/lib/delivery/contracts/notifications";
import { userRoute } from "@/lib/delivery/user-route";
import { createWebhook } from "@/lib/server/notifications/create-webhook";
import { findNotificationSettings } from "@/lib/server/notifications/find-webhooks";

export const GET = userRoute(api.adminFindNotificationSettings, "tokens.manage", async ({ prisma }) => findNotificationSettings(prisma));

// The signing secret is in this one response only.
export const POST = userRoute(api.adminCreateWebhook, "tokens.manage", async ({ body, user, prisma }) => createWebhook(prisma, { ...body, createdBy: user.email }));
