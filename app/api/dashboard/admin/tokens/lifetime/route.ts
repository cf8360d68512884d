import * as api from "@/lib/delivery/contracts/admin-people";
import { userRoute } from "@/lib/delivery/user-route";
import { userActor } from "@/lib/server/auth/current-user";
import { setDefaultTokenLifetime } from "@/lib/server/tokens/token-lifetime";

export const POST = userRoute(api.adminSetTokenLifetime, "tokens.manage", async ({ body, user, prisma }) => ({
  defaultLifetimeSec: await setDefaultTokenLifetime(prisma, { seconds: body.defaultLifetimeSec, actor: userActor(user) }),
}));
