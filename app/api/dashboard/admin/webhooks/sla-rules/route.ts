import * as api from "@/lib/delivery/contracts/notifications";
import { userRoute } from "@/lib/delivery/user-route";
import { findNotificationSettings } from "@/lib/server/notifications/find-webhooks";
import { saveSlaRule } from "@/lib/server/sla/save-sla-settings";

export const POST = userRoute(api.adminSaveSlaRule, "tokens.manage", async ({ body, user, prisma }) => {
  await saveSlaRule(prisma, { ...body, by: user.email });
  return findNotificationSettings(prisma);
});
