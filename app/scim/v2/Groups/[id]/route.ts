/** One SCIM group: read, patch (members, name), delete. */
import { scimRoute } from "@/lib/delivery/scim-route";
import { deleteScimGroup } from "@/lib/server/scim/delete-scim-group";
import { getScimGroup } from "@/lib/server/scim/get-scim-group";
import { patchScimGroup } from "@/lib/server/scim/patch-scim-group";

export const GET = scimRoute(async ({ params, prisma, baseUrl }) => ({ status: 200, body: await getScimGroup(prisma, { id: params.id ?? "", baseUrl }) }));

export const PATCH = scimRoute(async ({ params, body, by, prisma, baseUrl }) => ({ status: 200, body: await patchScimGroup(prisma, { id: params.id ?? "", body, by, baseUrl }) }));

export const DELETE = scimRoute(async ({ params, by, prisma }) => {
  await deleteScimGroup(prisma, { id: params.id ?? "", by });
  return { status: 204 };
});
