/**
 * The tool table as the demo leaves it: a row per support tool (added when missing), each naming
 * the external system it acts on and who sees its effects. The seed, the demo agent, the browser
 * tests' agent and the tests that read systems or audiences all start from it.
 */
import type { PrismaClient } from "@/lib/core/db/prisma";
import type { ToolRegistry } from "@/packages/client/src/saga/tools";
import { SUPPORT_TOOL_AUDIENCES, SUPPORT_TOOL_SYSTEMS } from "@/lib/demo/connectors/tool-systems";
import { fillAudienceRules } from "@/lib/server/tools/fill-audience-rules";
import { fillToolSystems } from "@/lib/server/tools/fill-tool-systems";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";

/** Adds the registry's missing rows and fills their systems and audience rules; returns how many rows were added. */
export async function seedSupportToolTable(prisma: PrismaClient, registry: ToolRegistry, updatedBy?: string): Promise<number> {
  const added = await syncToolPolicies(prisma, registry, updatedBy);
  await fillToolSystems(prisma, SUPPORT_TOOL_SYSTEMS);
  await fillAudienceRules(prisma, SUPPORT_TOOL_AUDIENCES);
  return added;
}
