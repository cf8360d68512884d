import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan, can } from "@/lib/server/auth/roles";
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import { onConnection } from "@/lib/core/db/transactions";
import { toToolRow, type TToolTable } from "./views";

/** Names of every compensator some connector runs (registered or declared): what edits are checked against. */
export async function registeredCompensators(prisma: PrismaClient): Promise<string[]> {
  return (await prisma.compensator.findMany({ select: { name: true }, orderBy: { name: "asc" } })).map((c) => c.name);
}

/** The whole tool table, by name, for anyone signed in; `canEdit` says whether the reader is an admin. */
export async function findTools({ actor }: PersonRequest): Promise<TToolTable> {
  assertCan(actor, "read");
  const prisma = await getPrisma();
  return onConnection(prisma, async () => {
    const [rows, compensators] = [await prisma.toolPolicy.findMany({ orderBy: { name: "asc" } }), await registeredCompensators(prisma)];
    const tools = rows.map((row) => toToolRow(row, { lookupAvailable: row.lookupAvailable, compensators }));
    const counts = { UNREVIEWED: 0, REVIEWED: 0, DISABLED: 0 };
    for (const t of tools) counts[t.status]++;
    return { tools, counts, canEdit: can(actor.role, "tools.edit") };
  });
}

