import type { PrismaClient } from "@/generated/prisma";
import { membersOf } from "./scim-people";
import { parseEqFilter, scimList, toScimGroup } from "./scim-resources";

/** A list of groups, as `GET /scim/v2/Groups?filter=displayName eq "..."` asks; `excludedAttributes=members` leaves members out. */
export async function findScimGroups(prisma: PrismaClient, input: { filter: string | null; startIndex: number; count: number; withMembers: boolean; baseUrl: string }): Promise<Record<string, unknown>> {
  const filter = parseEqFilter(input.filter, ["displayName", "externalId", "id"]);
  const where = filter === null ? {} : filter.attribute === "displayName" ? { displayName: filter.value } : filter.attribute === "id" ? { id: filter.value } : { externalId: filter.value };
  const total = await prisma.scimGroup.count({ where });
  const rows = await prisma.scimGroup.findMany({ where, orderBy: { createdAt: "asc" }, skip: input.startIndex - 1, take: input.count });
  const resources = [];
  for (const group of rows) resources.push(toScimGroup(group, input.withMembers ? await membersOf(prisma, group.displayName) : [], input.baseUrl));
  return scimList(resources, total, input.startIndex);
}
