import * as api from "@/lib/api/contracts/notifications";
import { userRoute } from "@/lib/auth/user-route";
import { findNotificationSettings } from "@/lib/notifications/find-webhooks";
import { saveNotificationTeam } from "@/lib/sla/save-sla-settings";

export const POST = userRoute(api.adminSaveNotificationTeam, "tokens.manage", async ({ body, user, prisma }) => {
  await saveNotificationTeam(prisma, { ...body, by: user.email });
  return findNotificationSettings(prisma);
});
