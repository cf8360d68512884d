import * as api from "@/lib/api/contracts/notifications";
import { userRoute } from "@/lib/auth/user-route";
import { createWebhook } from "@/lib/notifications/create-webhook";
import { findNotificationSettings } from "@/lib/notifications/find-webhooks";

export const GET = userRoute(api.adminFindNotificationSettings, "tokens.manage", async ({ prisma }) => findNotificationSettings(prisma));

// The signing secret is in this one response only.
export const POST = userRoute(api.adminCreateWebhook, "tokens.manage", async ({ body, user, prisma }) => createWebhook(prisma, { ...body, createdBy: user.email }));
