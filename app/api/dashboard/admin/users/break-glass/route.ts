import * as api from "@/lib/delivery/contracts/identity";
import { userRoute } from "@/lib/delivery/user-route";
import { setBreakGlass } from "@/lib/server/sso/set-break-glass";
import { toChangedAdminUser } from "@/lib/server/users/admin-views";

// One break-glass account at most, a local enabled admin with a password: the lib refuses anything else (422).
export const POST = userRoute(api.adminSetBreakGlass, "users.manage", async ({ body, user, prisma }) =>
  toChangedAdminUser(await setBreakGlass(prisma, { ...body, by: { type: "user", id: user.email } })),
);
