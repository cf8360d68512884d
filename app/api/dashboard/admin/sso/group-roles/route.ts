import * as api from "@/lib/delivery/contracts/identity";
import { userRoute } from "@/lib/delivery/user-route";
import { saveGroupRoles } from "@/lib/server/sso/save-group-roles";
import { toSavedGroupRoles } from "@/lib/server/sso/sso-admin-views";

// Applied at once: people whose groups now give less lose it on their next request (lib/server/sso/person-access.ts).
export const POST = userRoute(api.adminSaveGroupRoles, "users.manage", async ({ body, user, prisma }) =>
  toSavedGroupRoles(await saveGroupRoles(prisma, { mapping: body.mapping, by: { type: "user", id: user.email } })),
);
