/**
 * Fills the tool table's `audienceRule` for rows that state none, from what a set of connectors
 * knows (the demo: lib/demo/connectors/tool-systems.ts). A blank rule already reads as customer-facing, so
 * filling it can only narrow what a reviewer is warned about to what the connector's owner states;
 * a rule an admin wrote is kept.
 */
import type { PrismaClient } from "@/lib/core/db/prisma";
import { onConnection } from "@/lib/core/db/transactions";

/** Sets `audienceRule` on each named row whose rule is empty; returns how many rows it filled. */
export async function fillAudienceRules(prisma: PrismaClient, rules: Readonly<Record<string, string>>): Promise<number> {
  let filled = 0;
  for (const [name, audienceRule] of Object.entries(rules)) {
    const { count } = await onConnection(prisma, () => prisma.toolPolicy.updateMany({ where: { name, OR: [{ audienceRule: null }, { audienceRule: "" }] }, data: { audienceRule } }));
    filled += count;
  }
  return filled;
}
