import * as api from "@/lib/delivery/contracts/admin-people";
import { userRoute } from "@/lib/delivery/user-route";
import { toAdminUserPage, toCreatedAdminUser } from "@/lib/server/users/admin-views";
import { createUserWithInitialPassword } from "@/lib/server/users/create-user-with-initial-password";
import { findUsers } from "@/lib/server/users/find-users";

export const GET = userRoute(api.adminFindUsers, "users.manage", async ({ query, user, prisma }) =>
  toAdminUserPage(await findUsers(prisma, { cursor: query.cursor, limit: query.take }), user.email),
);

// The initial password is in this one response only; the row holds its bcrypt hash.
export const POST = userRoute(api.adminCreateUser, "users.manage", async ({ body, user, prisma }) =>
  toCreatedAdminUser(await createUserWithInitialPassword(prisma, { ...body, by: { type: "user", id: user.email } })),
);
