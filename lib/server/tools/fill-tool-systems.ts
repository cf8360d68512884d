/**
 * Fills the tool table's `system` column for rows that name none, from what a set of connectors
 * knows (the demo: lib/demo/connectors/tool-systems.ts). A row an admin gave a system keeps it. Not a
 * policy edit: the system groups and names effects, it decides nothing, so no version is bumped and
 * no approval goes stale.
 */
import type { PrismaClient } from "@/lib/core/db/prisma";
import { onConnection } from "@/lib/core/db/transactions";

/** Sets `system` on each named row whose system is empty; returns how many rows it filled. */
export async function fillToolSystems(prisma: PrismaClient, systems: Readonly<Record<string, string>>): Promise<number> {
  let filled = 0;
  for (const [name, system] of Object.entries(systems)) {
    const { count } = await onConnection(prisma, () => prisma.toolPolicy.updateMany({ where: { name, OR: [{ system: null }, { system: "" }] }, data: { system } }));
    filled += count;
  }
  return filled;
}
