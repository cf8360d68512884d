/**
 * The tool table (ToolPolicy) as the dashboard reads it: the CURRENT policy version of each tool
 * (approvals bind the version the plan was made with), its revocation window and owner.
 */
import type { PrismaClient } from "@/lib/core/db/prisma";
import type { ToolRegistry } from "@/packages/client/src/saga/tools";
import { DEFAULT_WINDOW_SEC } from "./duration";
import { storedEditableArgs } from "@/lib/server/tools/reviewer-edits";

/** Where a tool's policy facts came from. */
export const PolicySource = {
  /** The tool table row an admin maintains. */
  tool_table: "tool_table",
  /** No row: the registered tool definition and its class's default window. */
  registry_default: "registry_default",
} as const;
export type PolicySource = (typeof PolicySource)[keyof typeof PolicySource];

/** A tool's current policy facts. */
export interface ToolPolicyFacts {
  /** Tool name. */
  name: string;
  /** The version approvals must name now. */
  policyVersion: number;
  /** How long after the effect it may be released or revoked, seconds (null: never). */
  revocationWindowSec: number | null;
  /** The team that handles its escalations. */
  owner: string | null;
  /** The compensator that answers it. */
  compensator: string | null;
  /** The external system its effects live in, as the tool table says; null when it says nothing. */
  system: string | null;
  /** Who sees its effects, as the tool table says (comma-separated), null when it says nothing. */
  audienceRule: string | null;
  /** Arguments a reviewer may change before approving; null: any but a recipient or target. */
  reviewerEditableArgs: string[] | null;
  /** Where these facts came from. */
  source: PolicySource;
}

/** The current policy facts of `names`, from the tool table, else from the registry. */
export async function readToolPolicies(prisma: PrismaClient, registry: ToolRegistry, names: readonly string[]): Promise<Map<string, ToolPolicyFacts>> {
  const unique = [...new Set(names)];
  const rows = unique.length === 0 ? [] : await prisma.toolPolicy.findMany({ where: { name: { in: unique } } });
  const facts = new Map<string, ToolPolicyFacts>();
  for (const row of rows) {
    facts.set(row.name, {
      name: row.name,
      policyVersion: row.policyVersion,
      revocationWindowSec: row.revocationWindowSec,
      owner: row.owner,
      compensator: row.compensator,
      system: row.system,
      audienceRule: row.audienceRule,
      reviewerEditableArgs: storedEditableArgs(row.reviewerEditableArgs),
      source: PolicySource.tool_table,
    });
  }
  for (const name of unique) {
    if (facts.has(name)) continue;
    const def = registry.has(name) ? registry.tool(name) : null;
    facts.set(name, {
      name,
      policyVersion: def?.policyVersion ?? 1,
      revocationWindowSec: def ? DEFAULT_WINDOW_SEC[def.class] : null,
      owner: def?.owner ?? null,
      compensator: def?.compensation?.with ?? null,
      system: null,
      audienceRule: null,
      reviewerEditableArgs: null,
      source: PolicySource.registry_default,
    });
  }
  return facts;
}
