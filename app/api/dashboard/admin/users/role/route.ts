import * as api from "@/lib/delivery/contracts/admin-people";
import { userRoute } from "@/lib/delivery/user-route";
import { toChangedAdminUser } from "@/lib/server/users/admin-views";
import { setUserRole } from "@/lib/server/users/set-user-role";

// Demoting the last enabled admin is refused by the lib (422), whoever asks.
export const POST = userRoute(api.adminSetUserRole, "users.manage", async ({ body, user, prisma }) =>
  toChangedAdminUser(await setUserRole(prisma, { ...body, by: { type: "user", id: user.email } })),
);
