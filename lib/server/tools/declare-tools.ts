import { Prisma, type PrismaClient } from "@/generated/prisma";
import { ApiError, validationError, zodIssuesToDetails, type TErrorDetail } from "@/lib/protocol/errors";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import type { Actor } from "@/lib/saga/store";
import type { Json } from "@/lib/saga/tools";
import { tokenScope } from "@/lib/server/tokens/agent-token";
import { ZAgentTokenName, type TTokenRole } from "@/lib/server/tokens/token-fields";
import { DEFAULT_WINDOW_SEC } from "./duration";
import { checkToolPolicy, DEFAULT_REVOKE_ROLES, fieldsOf, type TToolPolicyFields } from "./tool-policy";
import { ToolStatus } from "@/lib/saga/vocabulary";
import { ZToolManifest, type TDeclarationResult, type TDeclaredTool } from "@/lib/protocol/manifest";
import { recordToolVersion, ToolChange, toolScope } from "./tool-versions";
import { canonicalJson } from "@/lib/saga/keys";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";


/**
 * `name` in `namespace`, exactly: a bare name gets the prefix, a prefixed one must carry exactly this
 * namespace, and what follows it has no dot. A deeper name (`x.ops.open_case` declared by `x`) would
 * sit in the namespace of another token (`x.ops`) and block it from its own tools, so it is an error,
 * like a name in another namespace.
 */
function inNamespace(namespace: string, name: string, path: string, issues: TErrorDetail[]): string {
  const local = name.startsWith(`${namespace}.`) ? name.slice(namespace.length + 1) : name;
  if (local === name && name.includes(".")) {
    issues.push({ path, message: `must be in the namespace "${namespace}" (write it as ${namespace}.${name.split(".").pop()} or without a prefix).` });
    return name;
  }
  if (local.includes(".")) {
    const nested = `${namespace}.${local.slice(0, local.lastIndexOf("."))}`;
    issues.push({ path, message: `${namespace}.${local} would fall in the namespace "${nested}", which belongs to the token of that name; declare it as ${namespace}.${local.replaceAll(".", "_")} (no dot after the namespace).` });
  }
  return `${namespace}.${local}`;
}

/** The row fields a declaration suggests. */
function declaredFields(entry: TDeclaredTool, compensator: string | null): Omit<TToolPolicyFields, "reviewerEditableArgs"> {
  return {
    toolClass: entry.class,
    compensator,
    undoMechanism: entry.undoMechanism ?? null,
    owner: entry.owner ?? null,
    revocationWindowSec: entry.revocationWindowSec ?? DEFAULT_WINDOW_SEC[entry.class],
    keyRetentionSec: entry.keyRetentionSec ?? null,
    audienceRule: entry.audience?.join(", ") ?? null,
    revokeRoles: [...DEFAULT_REVOKE_ROLES],
    alwaysRequireApproval: false,
    correctionSubject: entry.correction?.subject ?? null,
    correctionBody: entry.correction?.body ?? null,
    description: entry.description ?? null,
    status: ToolStatus.UNREVIEWED,
  };
}

function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a ?? null) === canonicalJson(b ?? null);
}

/** Whether a declaration describes another tool than the one reviewed: other arguments or another description. */
function definitionChanged(before: unknown, after: Prisma.InputJsonValue): boolean {
  if (before === null || typeof before !== "object") return false; // reviewed before anything was declared
  const was = before as { argsSchema?: unknown; description?: unknown };
  const now = after as { argsSchema?: unknown; description?: unknown };
  return !sameJson(was.argsSchema, now.argsSchema) || !sameJson(was.description, now.description);
}

/** Options of `declareTools`. */
export interface DeclareToolsOptions {
  /** The namespace the tools go in: the declaring token's name, or the team named on the command line. */
  namespace: string;
  /** Who declares them. */
  actor: Actor;
  /** The declaring token: its scope gains the declared tools, so its agent's calls reach the gate (and are held). */
  tokenId?: string;
  /** The declaring token's role: a worker token may not declare (it would widen its own reach). */
  tokenRole?: TTokenRole;
}

/**
 * Declares a team's tools. The manifest is checked whole before anything is written (a malformed one
 * is a 400 naming each field, and nothing stored changes), with the same rules as an admin's edit.
 * New tools land UNREVIEWED: every call is held for a person until an admin accepts the tool. A tool
 * an admin already reviewed keeps its accepted row; the new declaration is kept beside it.
 */
export async function declareTools(prisma: PrismaClient, manifest: unknown, options: DeclareToolsOptions): Promise<TDeclarationResult> {
  if (options.tokenRole === "worker") {
    throw new ApiError("FORBIDDEN", "Worker tokens cannot declare tools: a declaration adds the tools to the declaring token's scope, and a worker's scope is set by an admin. Declare with the team's agent token, or `npm run tools -- declare` as an admin.");
  }
  const ns = ZAgentTokenName.safeParse(options.namespace);
  if (!ns.success) throw validationError(zodIssuesToDetails(ns.error, "namespace"), "The namespace");
  const namespace = ns.data;
  const parsed = ZToolManifest.safeParse(manifest);
  if (!parsed.success) throw validationError(zodIssuesToDetails(parsed.error), "The tool manifest");
  const { tools, compensators } = parsed.data;

  const issues: TErrorDetail[] = [];
  const compNames = compensators.map((c, i) => inNamespace(namespace, c.name, `compensators.${i}.name`, issues));
  const toolNames = tools.map((t, i) => inNamespace(namespace, t.name, `tools.${i}.name`, issues));
  const duplicate = toolNames.find((n, i) => toolNames.indexOf(n) !== i);
  if (duplicate) issues.push({ path: "tools", message: `${duplicate} is declared twice.` });

  const [registered, existingTools, existingComps] = await onConnection(prisma, async () => [
    (await prisma.compensator.findMany({ select: { name: true } })).map((c) => c.name),
    await prisma.toolPolicy.findMany({ where: { name: { in: toolNames } } }),
    await prisma.compensator.findMany({ where: { name: { in: compNames } } }),
  ] as const);
  const knownCompensators = [...new Set([...registered, ...compNames])];
  const plans = tools.map((entry, i) => {
    const name = toolNames[i] ?? entry.name;
    let compensator: string | null = null;
    if (entry.compensation) {
      const own = inNamespace(namespace, entry.compensation.tool, `tools.${i}.compensation.tool`, []);
      compensator = compNames.includes(own) ? own : registered.includes(entry.compensation.tool) ? entry.compensation.tool : own;
    }
    const fields = declaredFields(entry, compensator);
    for (const issue of checkToolPolicy(name, fields, null, { lookupAvailable: entry.lookup, compensators: knownCompensators }).issues) {
      const path = issue.path === "compensator" ? "compensation.tool" : issue.path === "toolClass" ? "lookup" : issue.path.startsWith("correction") ? "correction" : issue.path;
      issues.push({ path: `tools.${i}.${path}`, message: issue.message });
    }
    const existing = existingTools.find((t) => t.name === name);
    if (existing && existing.namespace !== namespace) {
      issues.push({ path: `tools.${i}.name`, message: `${name} belongs to ${existing.namespace ? `the namespace "${existing.namespace}"` : "a connector the server runs"}; declare tools only in your own namespace.` });
    }
    // The declaration as stored names the compensator as resolved, so it reads like the row it suggests.
    const declared = { ...entry, name, ...(entry.compensation && compensator ? { compensation: { ...entry.compensation, tool: compensator } } : {}) };
    return { name, entry, declared, fields, existing };
  });
  for (const c of existingComps) {
    if (c.namespace !== namespace) issues.push({ path: `compensators.${compNames.indexOf(c.name)}.name`, message: `${c.name} belongs to another namespace.` });
  }
  if (issues.length > 0) throw validationError(issues, "The tool manifest");

  try {
    return await writeTransaction(prisma, async (tx, now) => {
      for (const [i, c] of compensators.entries()) {
        const name = compNames[i] ?? c.name;
        const data = { namespace, argsSchema: (c.argsSchema ?? Prisma.JsonNull) as Prisma.InputJsonValue, description: c.description ?? null, declaredBy: options.actor.id };
        await tx.compensator.upsert({ where: { name }, create: { name, ...data, createdAt: now }, update: data });
      }
      const results: TDeclarationResult["tools"] = [];
      for (const { name, entry, fields, existing, declared: suggestion } of plans) {
        const declared = suggestion as Prisma.InputJsonValue;
        const declaration = { declared, declaredBy: options.actor.id, declaredAt: now, namespace, lookupAvailable: entry.lookup };
        if (!existing) {
          const row = await tx.toolPolicy.create({ data: { name, ...fields, ...declaration, policyVersion: 1, updatedBy: `${options.actor.type}:${options.actor.id}`, createdAt: now, updatedAt: now } });
          await recordToolVersion(tx, now, row, ToolChange.declared, options.actor, null);
          results.push({ name, status: ToolStatus.UNREVIEWED, policyVersion: 1, outcome: "created" });
        } else if (existing.status === ToolStatus.UNREVIEWED && sameJson(existing.declared, declared)) {
          // The same declaration again (a gateway or connector restarting): nothing changes, no new version.
          results.push({ name, status: ToolStatus.UNREVIEWED, policyVersion: existing.policyVersion, outcome: "unchanged" });
        } else if (existing.status === ToolStatus.UNREVIEWED) {
          const row = await tx.toolPolicy.update({ where: { name }, data: { ...fields, ...declaration, policyVersion: { increment: 1 }, updatedBy: `${options.actor.type}:${options.actor.id}`, updatedAt: now } });
          await recordToolVersion(tx, now, row, ToolChange.declared, options.actor, fieldsOf(existing));
          results.push({ name, status: ToolStatus.UNREVIEWED, policyVersion: row.policyVersion, outcome: "updated" });
        } else if (existing.status === ToolStatus.REVIEWED && definitionChanged(existing.declared, declared)) {
          // The tool itself changed (its arguments or what it says it does): the review no longer covers
          // it. The row takes the declaration's suggestion again (an MCP tool's: the strictest class) and
          // every call is held until an admin reviews it; the accepted version stays in the history.
          const row = await tx.toolPolicy.update({ where: { name }, data: { ...fields, ...declaration, status: ToolStatus.UNREVIEWED, policyVersion: { increment: 1 }, updatedBy: `${options.actor.type}:${options.actor.id}`, updatedAt: now } });
          await recordToolVersion(tx, now, row, ToolChange.declared, options.actor, fieldsOf(existing));
          results.push({ name, status: ToolStatus.UNREVIEWED, policyVersion: row.policyVersion, outcome: "changed" });
        } else {
          // Accepted before: the accepted row stands (a declaration is a suggestion); the admin sees both.
          await tx.toolPolicy.update({ where: { name }, data: { declared, declaredBy: options.actor.id, declaredAt: now } });
          await appendAuditLink(tx, now, { scope: toolScope(name), runId: null, stepId: null, type: "tool.redeclared", actor: options.actor, data: { tool: name, declared: declared as Json } });
          results.push({ name, status: existing.status === ToolStatus.DISABLED ? ToolStatus.DISABLED : ToolStatus.REVIEWED, policyVersion: existing.policyVersion, outcome: "recorded" });
        }
      }
      if (options.tokenId) await extendTokenScope(tx, now, options.tokenId, toolNames, options.actor);
      return { namespace, tools: results, compensators: compNames };
    });
  } catch (e) {
    if (isUniqueViolation(e)) {
      throw new ApiError("CONFLICT", "Another declaration of the same tools committed first; send the manifest again to see where they stand.");
    }
    throw e;
  }
}

/** Adds the declared tools to the declaring token's scope, with an event on the token's chain. */
async function extendTokenScope(tx: Prisma.TransactionClient, now: Date, tokenId: string, tools: readonly string[], actor: Actor): Promise<void> {
  const token = await tx.agentToken.findUniqueOrThrow({ where: { id: tokenId }, select: { tools: true } });
  const current = Array.isArray(token.tools) ? token.tools.filter((t): t is string => typeof t === "string") : [];
  const added = tools.filter((t) => !current.includes(t));
  if (added.length === 0) return;
  await tx.agentToken.update({ where: { id: tokenId }, data: { tools: [...current, ...added].sort() } });
  await appendAuditLink(tx, now, { scope: tokenScope(tokenId), runId: null, stepId: null, type: "agent_token.scope_extended", actor, data: { added } });
}
