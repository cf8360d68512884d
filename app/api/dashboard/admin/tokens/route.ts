import * as api from "@/lib/delivery/contracts/admin-people";
import { userRoute } from "@/lib/delivery/user-route";
import { toAdminTokenPage, toCreatedAdminToken } from "@/lib/server/tokens/admin-views";
import { createAgentToken } from "@/lib/server/tokens/create-agent-token";
import { findAgentTokens } from "@/lib/server/tokens/find-agent-tokens";
import { findScopableTools } from "@/lib/server/tokens/find-scopable-tools";
import { getDefaultTokenLifetime } from "@/lib/server/tokens/token-lifetime";

export const GET = userRoute(api.adminFindTokens, "tokens.manage", async ({ query, prisma }) =>
  toAdminTokenPage(await findAgentTokens(prisma, { cursor: query.cursor, limit: query.take, order: "newest" }), await findScopableTools(prisma), await getDefaultTokenLifetime(prisma)),
);

// The secret is in this one response only; the row holds its sha256. Unknown tools: 400 from the lib.
export const POST = userRoute(api.adminCreateToken, "tokens.manage", async ({ body, user, prisma }) =>
  toCreatedAdminToken(await createAgentToken(prisma, { ...body, createdBy: user.email })),
);
