import * as api from "@/lib/delivery/contracts/admin-people";
import { userRoute } from "@/lib/delivery/user-route";
import { toRevokedAdminToken } from "@/lib/server/tokens/admin-views";
import { revokeAgentToken } from "@/lib/server/tokens/revoke-agent-token";

// The token's next request gets 401: authentication reads the row every time.
export const POST = userRoute(api.adminRevokeToken, "tokens.manage", async ({ body, user, prisma }) =>
  toRevokedAdminToken(await revokeAgentToken(prisma, { name: body.name, revokedBy: user.email })),
);
