import * as api from "@/lib/delivery/contracts/notifications";
import { userRoute } from "@/lib/delivery/user-route";
import { deleteWebhook } from "@/lib/server/notifications/delete-webhook";

export const POST = userRoute(api.adminDeleteWebhook, "tokens.manage", async ({ body, user, prisma }) => deleteWebhook(prisma, { ...body, by: user.email }));
