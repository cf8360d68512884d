/**
 * The per-tool reversibility table (ToolPolicy): the server's authority on what a tool is. Whatever
 * a client claims about a tool, the server decides with this table.
 */
import type { PrismaClient } from "@/generated/prisma";
import { SagaError } from "@/lib/saga/errors";
import type { GateTool } from "@/lib/saga/gate";
import type { ToolRegistry } from "@/lib/saga/tools";
import { TOOL_CLASSES, type ToolClass } from "@/lib/saga/vocabulary";

/** A tool-table row as the harness uses it. */
export interface ToolPolicyView extends GateTool {
  /** The compensator the tool's compensation must name. */
  compensator: string | null;
  /** Revocation window, seconds. */
  revocationWindowSec: number | null;
}

/** Default revocation window per class, when a registry tool first enters the table. */
const DEFAULT_WINDOW_SEC: Record<ToolClass, number | null> = { PURE: null, REVERSIBLE: 24 * 3600, COMPENSATABLE: 24 * 3600, IRREVERSIBLE: null };

/** Adds the registry's tools that are missing from the table; existing rows (admins' edits) are kept. */
export async function syncToolPolicies(prisma: PrismaClient, registry: ToolRegistry, updatedBy = "system:seed"): Promise<number> {
  let added = 0;
  for (const def of registry.list()) {
    const existing = await prisma.toolPolicy.findUnique({ where: { name: def.name } });
    if (existing) continue;
    await prisma.toolPolicy.create({
      data: {
        name: def.name,
        toolClass: def.class,
        compensator: def.compensation?.with ?? null,
        owner: def.owner ?? null,
        policyVersion: def.policyVersion ?? 1,
        revocationWindowSec: DEFAULT_WINDOW_SEC[def.class],
        description: def.description ?? null,
        updatedBy,
      },
    });
    added++;
  }
  return added;
}

const recentPolicies = new WeakMap<PrismaClient, Map<string, ToolPolicyView>>();

/**
 * The row `getToolPolicy` last read for `name` through `prisma`, or undefined. Possibly stale: only
 * for decisions that re-check it where they commit (IntentGuard.toolPolicy binds the class and the
 * policy version, which every edit bumps).
 */
export function recentToolPolicy(prisma: PrismaClient, name: string): ToolPolicyView | undefined {
  return recentPolicies.get(prisma)?.get(name);
}

/** The tool's row, or UNKNOWN_TOOL saying an admin must add it (remembered for `recentToolPolicy`). */
export async function getToolPolicy(prisma: PrismaClient, name: string): Promise<ToolPolicyView> {
  const view = await readToolPolicy(prisma, name);
  let recent = recentPolicies.get(prisma);
  if (!recent) recentPolicies.set(prisma, (recent = new Map()));
  recent.set(name, view);
  return view;
}

async function readToolPolicy(prisma: PrismaClient, name: string): Promise<ToolPolicyView> {
  const row = await prisma.toolPolicy.findUnique({ where: { name } });
  if (!row) {
    throw new SagaError("UNKNOWN_TOOL", `Tool "${name}" is not in the tool table; an admin must add it before agents can call it.`, [
      { path: "tool", message: "not in the tool table" },
    ]);
  }
  if (!TOOL_CLASSES.includes(row.toolClass as ToolClass)) {
    throw new SagaError("INVALID_TOOL_DEFINITION", `The tool table gives "${name}" an unknown class "${row.toolClass}"; an admin must fix the row.`);
  }
  return {
    name: row.name,
    class: row.toolClass as ToolClass,
    owner: row.owner ?? undefined,
    policyVersion: row.policyVersion,
    compensator: row.compensator,
    revocationWindowSec: row.revocationWindowSec,
  };
}

/** The tool-table rows of the tools a token may use. */
export async function listToolsForAgent(prisma: PrismaClient, principal: { tools: string[] }) {
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
