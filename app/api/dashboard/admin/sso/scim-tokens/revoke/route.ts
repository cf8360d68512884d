import * as api from "@/lib/delivery/contracts/identity";
import { userRoute } from "@/lib/delivery/user-route";
import { revokeScimToken } from "@/lib/server/scim/scim-token";

export const POST = userRoute(api.adminRevokeScimToken, "users.manage", async ({ body, user, prisma }) => revokeScimToken(prisma, { name: body.name, by: { type: "user", id: user.email } }));
