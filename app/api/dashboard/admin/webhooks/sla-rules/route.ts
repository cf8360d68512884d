import * as api from "@/lib/api/contracts/notifications";
import { userRoute } from "@/lib/auth/user-route";
import { findNotificationSettings } from "@/lib/notifications/find-webhooks";
import { saveSlaRule } from "@/lib/sla/save-sla-settings";

export const POST = userRoute(api.adminSaveSlaRule, "tokens.manage", async ({ body, user, prisma }) => {
  await saveSlaRule(prisma, { ...body, by: user.email });
  return findNotificationSettings(prisma);
});
