import type { PrismaClient } from "@/generated/prisma";

/**
 * The names of the tools a token may be scoped to: every row of the tool table, by name. Reads the
 * names only, so it stays right whatever else the table comes to hold.
 */
export async function findScopableTools(prisma: PrismaClient): Promise<string[]> {
  const rows = await prisma.toolPolicy.findMany({ select: { name: true }, orderBy: { name: "asc" } });
  return rows.map((row) => row.name);
}
