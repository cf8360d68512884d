import * as api from "@/lib/delivery/contracts/identity";
import { withStatus } from "@/lib/delivery/route";
import { userRoute } from "@/lib/delivery/user-route";
import { createScimToken } from "@/lib/server/scim/scim-token";

export const POST = userRoute(api.adminCreateScimToken, "users.manage", async ({ body, user, prisma }) =>
  withStatus(201, await createScimToken(prisma, { name: body.name, by: { type: "user", id: user.email } })),
);
