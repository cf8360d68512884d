import * as api from "@/lib/delivery/contracts/notifications";
import { userRoute } from "@/lib/delivery/user-route";
import { replayDelivery } from "@/lib/server/notifications/replay-delivery";

export const POST = userRoute(api.adminReplayDelivery, "tokens.manage", async ({ body, user, prisma }) => replayDelivery(prisma, { deliveryId: body.deliveryId, by: user.email }));
