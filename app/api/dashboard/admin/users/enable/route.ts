import * as api from "@/lib/delivery/contracts/admin-people";
import { userRoute } from "@/lib/delivery/user-route";
import { toChangedAdminUser } from "@/lib/server/users/admin-views";
import { enableUser } from "@/lib/server/users/set-user-enabled";

export const POST = userRoute(api.adminEnableUser, "users.manage", async ({ body, user, prisma }) =>
  toChangedAdminUser(await enableUser(prisma, { ...body, by: { type: "user", id: user.email } })),
);
