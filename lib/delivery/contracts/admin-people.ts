/**
 * Contracts of the admin desk's JSON routes for people and agent tokens
 * (app/api/dashboard/admin/users/**, app/api/dashboard/admin/tokens/**): what /admin/users and
 * /admin/tokens read and the changes they send. Session-authenticated (auth "user"); every route
 * needs `users.manage` or `tokens.manage`, and the lib use cases keep their own rules (the last
 * enabled admin stays, a token's tools must be in the tool table).
 */
import * as z from "zod";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { ZRole } from "@/lib/server/auth/roles";
import { ZAgentTokenName, scopeFitsRole, ZTokenLifetime, ZToolScope, ZTokenRole, WORKER_NEEDS_TOOLS } from "@/lib/server/tokens/token-fields";
import { ZAdminTokenPage, ZCreatedAdminToken, ZRevokedAdminToken } from "@/lib/server/tokens/admin-views";
import { ZAdminUserPage, ZChangedAdminUser, ZCreatedAdminUser } from "@/lib/server/users/admin-views";
import { ZUserEmail, ZUserName } from "@/lib/server/users/user";

const tags = ["admin"];
const Page = z.object({
  cursor: z.string().trim().min(1).max(80).optional(),
  take: z.coerce.number().int().min(1).max(500).default(100),
});
const UserRef = z.object({ email: ZUserEmail });

export const adminFindUsers = defineEndpoint({
  method: "GET",
  path: DashboardPath.findUsers,
  operationId: "adminFindUsers",
  summary: "Every account, by email (never a password hash)",
  tags,
  auth: "user",
  query: Page,
  response: ZAdminUserPage,
});

export const adminCreateUser = defineEndpoint({
  method: "POST",
  path: DashboardPath.createUser,
  operationId: "adminCreateUser",
  summary: "Create an account; the server makes up its initial password and returns it this once",
  description: "Only the password's bcrypt hash is stored. A taken email is answered 409 naming `email`.",
  tags,
  auth: "user",
  body: z.object({ email: ZUserEmail, name: ZUserName, role: ZRole }),
  response: ZCreatedAdminUser,
  successStatus: 201,
});

export const adminSetUserRole = defineEndpoint({
  method: "POST",
  path: DashboardPath.setUserRole,
  operationId: "adminSetUserRole",
  summary: "Change an account's role, from the person's next request",
  description: "Demoting the last enabled admin is answered 422 INVALID_TRANSITION, and nothing changes.",
  tags,
  auth: "user",
  body: UserRef.extend({ role: ZRole }),
  response: ZChangedAdminUser,
});

export const adminDisableUser = defineEndpoint({
  method: "POST",
  path: DashboardPath.disableUser,
  operationId: "adminDisableUser",
  summary: "Disable an account: its next request is refused and it cannot sign in",
  description: "Disabling the last enabled admin is answered 422 INVALID_TRANSITION, and nothing changes.",
  tags,
  auth: "user",
  body: UserRef,
  response: ZChangedAdminUser,
});

export const adminEnableUser = defineEndpoint({
  method: "POST",
  path: DashboardPath.enableUser,
  operationId: "adminEnableUser",
  summary: "Enable a disabled account again, with the role and password it had",
  tags,
  auth: "user",
  body: UserRef,
  response: ZChangedAdminUser,
});

export const adminFindTokens = defineEndpoint({
  method: "GET",
  path: DashboardPath.findTokens,
  operationId: "adminFindTokens",
  summary: "Every agent token, newest first (never a secret or hash), and the tools a new one may use",
  tags,
  auth: "user",
  query: Page,
  response: ZAdminTokenPage,
});

export const adminCreateToken = defineEndpoint({
  method: "POST",
  path: DashboardPath.createToken,
  operationId: "adminCreateToken",
  summary: "Create an agent token scoped to tools of the tool table; its secret is returned this once",
  description:
    "A tool the tool table does not have is answered 400 VALIDATION_FAILED naming `tools` and each unknown name. An agent token may have no tools: a team's token for its namespace (`<name>.`), which declares its tools; a worker token needs at least one.",
  tags,
  auth: "user",
  body: z
    .object({
      name: ZAgentTokenName,
      role: ZTokenRole.default("agent"),
      tools: ZToolScope,
      /** Seconds it lives; null: never expires; absent: the default lifetime an admin set. */
      expiresInSec: ZTokenLifetime.nullable().optional(),
    })
    .refine(scopeFitsRole, { path: ["tools"], message: WORKER_NEEDS_TOOLS }),
  response: ZCreatedAdminToken,
  successStatus: 201,
});

export const adminRevokeToken = defineEndpoint({
  method: "POST",
  path: DashboardPath.revokeToken,
  operationId: "adminRevokeToken",
  summary: "Revoke an agent token: its next request gets 401",
  tags,
  auth: "user",
  body: z.object({ name: ZAgentTokenName }),
  response: ZRevokedAdminToken,
});

export const dashboardSignOutEverywhere = defineEndpoint({
  method: "POST",
  path: DashboardPath.signOutEverywhere,
  operationId: "dashboardSignOutEverywhere",
  summary: "End every session of the signed-in person (this one included)",
  tags: ["users"],
  auth: "user",
  response: z.object({ sessionsEnded: z.number().int() }),
});

export const adminSetTokenLifetime = defineEndpoint({
  method: "POST",
  path: DashboardPath.setTokenLifetime,
  operationId: "adminSetTokenLifetime",
  summary: "Set how long new agent tokens live unless their creator says otherwise (null: they do not expire)",
  description: "Tokens already made keep their expiry. The change is audited.",
  tags,
  auth: "user",
  body: z.object({ defaultLifetimeSec: ZTokenLifetime.nullable() }),
  response: z.object({ defaultLifetimeSec: z.number().int().nullable() }),
});
