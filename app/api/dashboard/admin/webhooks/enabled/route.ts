import * as api from "@/lib/api/contracts/notifications";
import { userRoute } from "@/lib/auth/user-route";
import { setWebhookEnabled } from "@/lib/notifications/set-webhook-enabled";

export const POST = userRoute(api.adminSetWebhookEnabled, "tokens.manage", async ({ body, user, prisma }) => setWebhookEnabled(prisma, { ...body, by: user.email }));
