import * as api from "@/lib/api/contracts/notifications";
import { userRoute } from "@/lib/auth/user-route";
import { deleteWebhook } from "@/lib/notifications/delete-webhook";

export const POST = userRoute(api.adminDeleteWebhook, "tokens.manage", async ({ body, user, prisma }) => deleteWebhook(prisma, { ...body, by: user.email }));
