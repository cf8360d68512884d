/** The tool-table rows of the tools a token may use (GET /api/v1/tools). */
import { TOOL_CLASSES, ToolClass } from "@/lib/saga/vocabulary";
import type { AgentCaller } from "./agent-access";

export async function listToolsForAgent({ prisma, principal }: AgentCaller) {
  const rows = await prisma.toolPolicy.findMany({ where: { name: { in: principal.tools } }, orderBy: { name: "asc" } });
  return rows
    .filter((r) => TOOL_CLASSES.includes(r.toolClass as ToolClass))
    .map((r) => ({
      name: r.name,
      toolClass: r.toolClass as ToolClass,
      compensator: r.compensator,
      owner: r.owner,
      policyVersion: r.policyVersion,
      revocationWindowSec: r.revocationWindowSec,
    }));
}
