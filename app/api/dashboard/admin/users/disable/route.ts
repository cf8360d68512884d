import * as api from "@/lib/delivery/contracts/admin-people";
import { userRoute } from "@/lib/delivery/user-route";
import { toChangedAdminUser } from "@/lib/server/users/admin-views";
import { disableUser } from "@/lib/server/users/set-user-enabled";

// Disabling the last enabled admin is refused by the lib (422), whoever asks.
export const POST = userRoute(api.adminDisableUser, "users.manage", async ({ body, user, prisma }) =>
  toChangedAdminUser(await disableUser(prisma, { ...body, by: { type: "user", id: user.email } })),
);
