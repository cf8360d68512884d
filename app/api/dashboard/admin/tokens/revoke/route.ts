import * as api from "@/lib/api/contracts/admin-people";
import { userRoute } from "@/lib/auth/user-route";
import { toRevokedAdminToken } from "@/lib/tokens/admin-views";
import { revokeAgentToken } from "@/lib/tokens/revoke-agent-token";

// The token's next request gets 401: authentication reads the row every time.
export const POST = userRoute(api.adminRevokeToken, "tokens.manage", async ({ body, user, prisma }) =>
  toRevokedAdminToken(await revokeAgentToken(prisma, { name: body.name, revokedBy: user.email })),
);
