import * as api from "@/lib/api/contracts/notifications";
import { userRoute } from "@/lib/auth/user-route";
import { replayDelivery } from "@/lib/notifications/replay-delivery";

export const POST = userRoute(api.adminReplayDelivery, "tokens.manage", async ({ body, user, prisma }) => replayDelivery(prisma, { deliveryId: body.deliveryId, by: user.email }));
