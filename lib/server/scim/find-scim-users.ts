import type { PrismaClient } from "@/generated/prisma";
import { parseEqFilter, scimList, toScimUser } from "./scim-resources";

/** A list of users, as `GET /scim/v2/Users?filter=userName eq "..."` asks. */
export async function findScimUsers(prisma: PrismaClient, input: { filter: string | null; startIndex: number; count: number; baseUrl: string }): Promise<Record<string, unknown>> {
  const filter = parseEqFilter(input.filter, ["userName", "externalId", "emails.value", "id"]);
  const where =
    filter === null
      ? {}
      : filter.attribute === "externalId"
        ? { externalId: filter.value }
        : filter.attribute === "id"
          ? { id: filter.value }
          : { email: filter.value.trim().toLowerCase() };
  const [total, rows, groups] = [
    await prisma.user.count({ where }),
    await prisma.user.findMany({ where, orderBy: { createdAt: "asc" }, skip: input.startIndex - 1, take: input.count }),
    await prisma.scimGroup.findMany(),
  ];
  return scimList(rows.map((u) => toScimUser(u, groups, input.baseUrl)), total, input.startIndex);
}
