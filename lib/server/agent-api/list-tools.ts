/** The tool-table rows of the tools a token may use (GET /api/v1/tools), as calls are decided with them. */
import { enforcedClass, routedOwner, storedStatus } from "@/packages/client/src/saga/tool-table";
import { TOOL_CLASSES, ToolClass, ToolStatus } from "@/packages/client/src/saga/vocabulary";
import type { AgentCaller } from "./agent-access";
import { definitionHash } from "@/packages/client/src/protocol/manifest";

export async function listToolsForAgent({ prisma, principal }: AgentCaller) {
  const rows = await prisma.toolPolicy.findMany({ where: { name: { in: principal.tools } }, orderBy: { name: "asc" } });
  return rows
    .filter((r) => TOOL_CLASSES.includes(r.toolClass as ToolClass))
    .map((r) => ({
      name: r.name,
      // An unreviewed tool is answered as the server enforces it (IRREVERSIBLE, no owner), never as declared.
      toolClass: enforcedClass(r),
      compensator: storedStatus(r.status) === ToolStatus.UNREVIEWED ? null : r.compensator,
      owner: routedOwner(r),
      policyVersion: r.policyVersion,
      revocationWindowSec: r.revocationWindowSec,
      status: storedStatus(r.status),
      definitionHash: r.declared !== null && typeof r.declared === "object" && !Array.isArray(r.declared) ? definitionHash(r.declared as { argsSchema?: unknown; description?: unknown }) : null,
    }));
}
