import type { PrismaClient } from "@/generated/prisma";
import { scimUserOrThrow } from "./scim-people";
import { toScimUser } from "./scim-resources";

/** One user by id (`GET /scim/v2/Users/{id}`); 404 when unknown. */
export async function getScimUser(prisma: PrismaClient, input: { id: string; baseUrl: string }): Promise<Record<string, unknown>> {
  return toScimUser(await scimUserOrThrow(prisma, input.id), await prisma.scimGroup.findMany(), input.baseUrl);
}
