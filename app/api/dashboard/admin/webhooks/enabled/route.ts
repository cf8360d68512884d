import * as api from "@/lib/delivery/contracts/notifications";
import { userRoute } from "@/lib/delivery/user-route";
import { setWebhookEnabled } from "@/lib/server/notifications/set-webhook-enabled";

export const POST = userRoute(api.adminSetWebhookEnabled, "tokens.manage", async ({ body, user, prisma }) => setWebhookEnabled(prisma, { ...body, by: user.email }));
