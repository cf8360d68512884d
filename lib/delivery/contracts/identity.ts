/**
 * Contracts of single sign-on's admin routes (app/api/dashboard/admin/sso/**, the break-glass
 * switch): the group -> role mapping, SCIM tokens, the break-glass account. Session-authenticated,
 * `users.manage`; the lib use cases keep their own rules (one break-glass admin, a local one).
 */
import * as z from "zod";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { ZScimTokenName } from "@/lib/server/scim/scim-token";
import { ZSavedGroupRoles, ZCreatedScimToken } from "@/lib/server/sso/sso-admin-views";
import { ZSsoSettings } from "@/lib/server/sso/find-sso-settings";
import { ZGroupRole } from "@/lib/server/sso/group-roles";
import { ZScimTokenView } from "@/lib/server/scim/scim-token";
import { ZChangedAdminUser } from "@/lib/server/users/admin-views";
import { ZUserEmail } from "@/lib/server/users/user";

const tags = ["admin"];

export const adminGetSsoSettings = defineEndpoint({
  method: "GET",
  path: DashboardPath.getSsoSettings,
  operationId: "adminGetSsoSettings",
  summary: "Single sign-on: whether it is on, the group -> role mapping, the break-glass account, SCIM tokens (never a secret)",
  tags,
  auth: "user",
  response: ZSsoSettings,
});

export const adminSaveGroupRoles = defineEndpoint({
  method: "POST",
  path: DashboardPath.saveGroupRoles,
  operationId: "adminSaveGroupRoles",
  summary: "Replace the group -> role mapping; applied at once to everyone whose role follows their groups",
  description: "A person whose groups now give a lower role, or none, loses it on their next request and their sessions end. A group listed twice is 400 naming the row.",
  tags,
  auth: "user",
  body: z.object({ mapping: z.array(ZGroupRole).max(200) }),
  response: ZSavedGroupRoles,
});

export const adminCreateScimToken = defineEndpoint({
  method: "POST",
  path: DashboardPath.createScimToken,
  operationId: "adminCreateScimToken",
  summary: "Make a SCIM bearer token for the identity provider; its secret is returned this once",
  tags,
  auth: "user",
  body: z.object({ name: ZScimTokenName }),
  response: ZCreatedScimToken,
  successStatus: 201,
});

export const adminRevokeScimToken = defineEndpoint({
  method: "POST",
  path: DashboardPath.revokeScimToken,
  operationId: "adminRevokeScimToken",
  summary: "Revoke a SCIM token: the provider's next request with it gets 401",
  tags,
  auth: "user",
  body: z.object({ name: ZScimTokenName }),
  response: ZScimTokenView,
});

export const adminSetBreakGlass = defineEndpoint({
  method: "POST",
  path: DashboardPath.setBreakGlass,
  operationId: "adminSetBreakGlass",
  summary: "Mark (or clear) the break-glass account: the one local admin who signs in with a password while single sign-on is on",
  description: "One at most: marking a second is 422 naming the first; only an enabled local admin with a password qualifies.",
  tags,
  auth: "user",
  body: z.object({ email: ZUserEmail, breakGlass: z.boolean() }),
  response: ZChangedAdminUser,
});
