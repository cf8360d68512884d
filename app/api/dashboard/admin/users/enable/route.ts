import * as api from "@/lib/api/contracts/admin-people";
import { userRoute } from "@/lib/auth/user-route";
import { toChangedAdminUser } from "@/lib/users/admin-views";
import { enableUser } from "@/lib/users/enable-user";

export const POST = userRoute(api.adminEnableUser, "users.manage", async ({ body, user, prisma }) =>
  toChangedAdminUser(await enableUser(prisma, { ...body, by: { type: "user", id: user.email } })),
);
