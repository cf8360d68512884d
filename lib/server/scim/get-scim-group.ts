import type { PrismaClient } from "@/generated/prisma";
import type { Db } from "@/lib/core/db/dialect";
import type { ScimGroup } from "@/generated/prisma";
import { membersOf } from "./scim-people";
import { ScimError, toScimGroup } from "./scim-resources";

/** The group SCIM names by id, or 404 saying so. */
export async function scimGroupOrThrow(db: Db | PrismaClient, id: string): Promise<ScimGroup> {
  const group = await db.scimGroup.findUnique({ where: { id } });
  if (!group) throw new ScimError(404, `No group has the id ${id}; list /scim/v2/Groups?filter=displayName eq "<name>" to find its id.`);
  return group;
}

/** One group by id with its members (`GET /scim/v2/Groups/{id}`); 404 when unknown. */
export async function getScimGroup(prisma: PrismaClient, input: { id: string; baseUrl: string }): Promise<Record<string, unknown>> {
  const group = await scimGroupOrThrow(prisma, input.id);
  return toScimGroup(group, await membersOf(prisma, group.displayName), input.baseUrl);
}
