/** SCIM 2.0 Users (identity providers' provisioning): list by `userName eq "..."`, create. */
import { scimRoute } from "@/lib/delivery/scim-route";
import { createScimUser } from "@/lib/server/scim/create-scim-user";
import { findScimUsers } from "@/lib/server/scim/find-scim-users";
import { pageOf } from "@/lib/server/scim/scim-resources";

export const GET = scimRoute(async ({ url, prisma, baseUrl }) => ({ status: 200, body: await findScimUsers(prisma, { filter: url.searchParams.get("filter"), ...pageOf(url), baseUrl }) }));

export const POST = scimRoute(async ({ body, by, prisma, baseUrl }) => ({ status: 201, body: await createScimUser(prisma, { body, by, baseUrl }) }));
