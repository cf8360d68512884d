import type { PersonRequest } from "@/lib/server/auth/current-user";
import { assertCan, can } from "@/lib/server/auth/roles";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { getPrisma } from "@/lib/core/db/prisma";
import { onConnection } from "@/lib/core/db/transactions";
import { declaredArgsSchema } from "./declared-args-schema";
import { registeredCompensators } from "./find-tools";
import { toToolProposal, toToolRow, toToolVersion, type TToolDetail } from "./views";

/** How many versions the history shows; older ones stay in the database and the audit log. */
const HISTORY_LIMIT = 100;

/** The tool-not-found error, saying how a tool gets into the table. */
export function toolNotFound(name: string): ApiError {
  return new ApiError("NOT_FOUND", `No tool named "${name}" is in the tool table. Tools enter it from a connector the server runs or from a team's manifest (npm run tools -- declare).`, {
    details: [{ path: "name", message: "not in the tool table" }],
  });
}

/** One tool with its declaration, its history (newest first) and the compensators an edit may pick. */
export async function getTool({ actor, name }: PersonRequest<{ name: string }>): Promise<TToolDetail> {
  assertCan(actor, "read");
  const prisma = await getPrisma();
  return onConnection(prisma, async () => {
    const row = await prisma.toolPolicy.findUnique({ where: { name } });
    if (!row) throw toolNotFound(name);
    const versions = await prisma.toolPolicyVersion.findMany({ where: { toolName: name }, orderBy: { version: "desc" }, take: HISTORY_LIMIT });
    const compensators = await registeredCompensators(prisma);
    // The picker offers the compensators of the tool's own team (its namespace; the server's for a
    // connector the server runs): another team's tool undoes nothing of this one's. The current choice stays listed.
    const ownTeam = await prisma.compensator.findMany({ where: { namespace: row.namespace }, select: { name: true }, orderBy: { name: "asc" } });
    const choices = [...new Set([...ownTeam.map((c) => c.name), ...(row.compensator ? [row.compensator] : [])])].sort();
    return {
      tool: toToolRow(row, { lookupAvailable: row.lookupAvailable, compensators }),
      proposal: toToolProposal(row),
      declared: row.declared !== null && typeof row.declared === "object" && !Array.isArray(row.declared) ? (row.declared as Record<string, unknown>) : null,
      declaredBy: row.declaredBy,
      declaredAt: row.declaredAt?.toISOString() ?? null,
      argsSchemaMissing: row.declared !== null && declaredArgsSchema(row.declared) === null,
      history: versions.map(toToolVersion),
      compensators: choices,
      canEdit: can(actor.role, "tools.edit"),
    };
  });
}
