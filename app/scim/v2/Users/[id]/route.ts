/** One SCIM user: read, replace (PUT), patch (active=false deprovisions), delete (disables). */
import { scimRoute } from "@/lib/delivery/scim-route";
import { deleteScimUser } from "@/lib/server/scim/delete-scim-user";
import { getScimUser } from "@/lib/server/scim/get-scim-user";
import { patchScimUser } from "@/lib/server/scim/patch-scim-user";
import { replaceScimUser } from "@/lib/server/scim/replace-scim-user";

export const GET = scimRoute(async ({ params, prisma, baseUrl }) => ({ status: 200, body: await getScimUser(prisma, { id: params.id ?? "", baseUrl }) }));

export const PUT = scimRoute(async ({ params, body, by, prisma, baseUrl }) => ({ status: 200, body: await replaceScimUser(prisma, { id: params.id ?? "", body, by, baseUrl }) }));

export const PATCH = scimRoute(async ({ params, body, by, prisma, baseUrl }) => ({ status: 200, body: await patchScimUser(prisma, { id: params.id ?? "", body, by, baseUrl }) }));

export const DELETE = scimRoute(async ({ params, by, prisma }) => {
  await deleteScimUser(prisma, { id: params.id ?? "", by });
  return { status: 204 };
});
