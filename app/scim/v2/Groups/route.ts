/** SCIM 2.0 Groups: list by `displayName eq "..."` (`excludedAttributes=members` leaves members out), create. */
import { scimRoute } from "@/lib/delivery/scim-route";
import { createScimGroup } from "@/lib/server/scim/create-scim-group";
import { findScimGroups } from "@/lib/server/scim/find-scim-groups";
import { pageOf } from "@/lib/server/scim/scim-resources";

export const GET = scimRoute(async ({ url, prisma, baseUrl }) => ({
  status: 200,
  body: await findScimGroups(prisma, { filter: url.searchParams.get("filter"), ...pageOf(url), withMembers: !/members/i.test(url.searchParams.get("excludedAttributes") ?? ""), baseUrl }),
}));

export const POST = scimRoute(async ({ body, by, prisma, baseUrl }) => ({ status: 201, body: await createScimGroup(prisma, { body, by, baseUrl }) }));
