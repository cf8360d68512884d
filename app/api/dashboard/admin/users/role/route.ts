import * as api from "@/lib/api/contracts/admin-people";
import { userRoute } from "@/lib/auth/user-route";
import { toChangedAdminUser } from "@/lib/users/admin-views";
import { setUserRole } from "@/lib/users/set-user-role";

// Demoting the last enabled admin is refused by the lib (422), whoever asks.
export const POST = userRoute(api.adminSetUserRole, "users.manage", async ({ body, user, prisma }) =>
  toChangedAdminUser(await setUserRole(prisma, { ...body, by: { type: "user", id: user.email } })),
);
