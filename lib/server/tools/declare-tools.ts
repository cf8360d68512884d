import { Prisma, type PrismaClient, type ToolPolicy } from "@/generated/prisma";
import { ApiError, validationError, zodIssuesToDetails, type TErrorDetail } from "@/packages/client/src/protocol/errors";
import { appendAuditLink } from "@/lib/core/db/audit-chain";
import { onConnection, writeTransaction } from "@/lib/core/db/transactions";
import type { Actor } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { tokenScope } from "@/lib/server/tokens/agent-token";
import { ZAgentTokenName, type TTokenRole } from "@/lib/server/tokens/token-fields";
import { DEFAULT_WINDOW_SEC } from "./duration";
import { checkToolPolicy, DEFAULT_REVOKE_ROLES, fieldsOf, type TToolPolicyFields } from "./tool-policy";
import { ToolClass, ToolStatus } from "@/packages/client/src/saga/vocabulary";
import { ZToolManifest, type TDeclarationResult, type TDeclaredTool } from "@/packages/client/src/protocol/manifest";
import { recordToolVersion, ToolChange, toolScope } from "./tool-versions";
import { canonicalJson } from "@/packages/client/src/saga/keys";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { proposalOf, type TToolProposal } from "./tool-proposal";
import { hintsSayReadOnly, TRUSTED_READ_ONLY_KEY, trustedReadOnly } from "./trusted-read-only";

/** Where a name of a manifest points: into the declaring namespace, or across into another one. */
type Placed = { ok: true; name: string } | { ok: false; crossesInto: string };

/**
 * `name` in `namespace`: a bare name gets the prefix, a prefixed one must carry exactly this
 * namespace. A name with another prefix crosses into that namespace (refused, 403). A deeper name
 * (`x.ops.open_case` declared by `x`) would sit in the namespace of another token (`x.ops`) and block
 * it from its own tools, so it crosses too.
 */
function placeName(namespace: string, name: string): Placed {
  const local = name.startsWith(`${namespace}.`) ? name.slice(namespace.length + 1) : name;
  if (local === name && name.includes(".")) return { ok: false, crossesInto: name.slice(0, name.lastIndexOf(".")) };
  if (local.includes(".")) return { ok: false, crossesInto: `${namespace}.${local.slice(0, local.lastIndexOf("."))}` };
  return { ok: true, name: `${namespace}.${local}` };
}

/** One refused reference: the field, the name and the namespace it would reach. */
function crossing(path: string, name: string, into: string, namespace: string): TErrorDetail {
  return { path, message: `${name} is in the namespace "${into}", not "${namespace}": a declaration names only tools of its own namespace (or a compensator the server registers).` };
}

/**
 * What a declaration suggests for the row: every field its manifest entry states. A new tool's
 * suggestion also takes its class's default window, so an admin accepting it gets a whole row.
 */
function suggestedFields(entry: TDeclaredTool, compensator: string | null, isNew: boolean): Partial<TToolPolicyFields> {
  const fields: Partial<TToolPolicyFields> = { toolClass: entry.class };
  if (entry.compensation) {
    fields.compensator = compensator;
    fields.compensationArgs = Object.keys(entry.compensation.args).length > 0 ? entry.compensation.args : null;
  }
  if (entry.undoMechanism !== undefined) fields.undoMechanism = entry.undoMechanism;
  if (entry.owner !== undefined) fields.owner = entry.owner;
  if (entry.revocationWindowSec !== undefined || isNew) fields.revocationWindowSec = entry.revocationWindowSec ?? DEFAULT_WINDOW_SEC[entry.class];
  if (entry.keyRetentionSec !== undefined) fields.keyRetentionSec = entry.keyRetentionSec;
  if (entry.audience !== undefined) fields.audienceRule = entry.audience.join(", ");
  if (entry.correction) {
    fields.correctionSubject = entry.correction.subject;
    fields.correctionBody = entry.correction.body;
  }
  if (entry.description !== undefined) fields.description = entry.description;
  if (entry.personalData !== undefined) fields.personalData = entry.personalData;
  return fields;
}

/**
 * The row a declared tool enters the table with: every control at its strictest (IRREVERSIBLE, held,
 * no owner, no compensator, no window), whatever the declaration says. The declaration waits beside
 * it as a proposal until an admin accepts it.
 */
function strictRow(entry: TDeclaredTool): TToolPolicyFields {
  return {
    toolClass: ToolClass.IRREVERSIBLE,
    compensator: null,
    compensationArgs: null,
    undoMechanism: null,
    owner: null,
    system: null,
    revocationWindowSec: null,
    keyRetentionSec: null,
    audienceRule: null,
    revokeRoles: [...DEFAULT_REVOKE_ROLES],
    alwaysRequireApproval: false,
    reviewerEditableArgs: null,
    personalData: null,
    correctionSubject: null,
    correctionBody: null,
    description: entry.description ?? null,
    status: ToolStatus.UNREVIEWED,
  };
}

/** A row's fields as Prisma writes them (JSON columns take DbNull for null). */
function rowData(fields: TToolPolicyFields) {
  return {
    ...fields,
    compensationArgs: fields.compensationArgs ?? Prisma.DbNull,
    reviewerEditableArgs: fields.reviewerEditableArgs ?? Prisma.DbNull,
    personalData: fields.personalData ?? Prisma.DbNull,
  };
}

/** A proposal as Prisma writes it. */
function proposalData(proposal: TToolProposal | null, actor: Actor, now: Date) {
  return proposal ? { proposal: proposal as Prisma.InputJsonValue, proposedBy: actor.id, proposedAt: now } : { proposal: Prisma.DbNull, proposedBy: null, proposedAt: null };
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
 * Declares a team's tools. A declaration is a proposal, never a change to a control: the manifest is
 * checked whole before anything is written (a name or compensator in another namespace is a 403
 * naming the field and where it points; a malformed entry a 400 naming each field; nothing stored
 * changes). A new tool enters the table UNREVIEWED at its strictest (IRREVERSIBLE, every call held,
 * no owner) with the declaration as its proposal. A tool an admin reviewed keeps its row exactly:
 * what the declaration suggests differently waits beside it as a proposal the admin accepts or
 * refuses (desk or CLI). Only a changed definition (other arguments or description) touches the
 * row, and only to make it stricter: unreviewed again, every call held, until an admin reviews it.
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

  const crossings: TErrorDetail[] = [];
  const place = (name: string, path: string): string => {
    const placed = placeName(namespace, name);
    if (placed.ok) return placed.name;
    crossings.push(crossing(path, name, placed.crossesInto, namespace));
    return name;
  };
  const compNames = compensators.map((c, i) => place(c.name, `compensators.${i}.name`));
  const toolNames = tools.map((t, i) => place(t.name, `tools.${i}.name`));

  const [registered, existingTools, existingComps] = await onConnection(prisma, async () => [
    await prisma.compensator.findMany({ select: { name: true, namespace: true } }),
    await prisma.toolPolicy.findMany({ where: { name: { in: toolNames } } }),
    await prisma.compensator.findMany({ where: { name: { in: compNames } } }),
  ] as const);
  // A compensator the server registers (no namespace) is shared with every team; one of another team is not.
  const shared = registered.filter((c) => c.namespace === null).map((c) => c.name);
  const ownRegistered = registered.filter((c) => c.namespace === namespace).map((c) => c.name);
  const compensatorOf = (entry: TDeclaredTool, i: number): string | null => {
    if (!entry.compensation) return null;
    const named = entry.compensation.tool;
    const placed = placeName(namespace, named);
    // The team's own compensator first (in this manifest, or declared before), then one the server shares.
    if (placed.ok && (compNames.includes(placed.name) || ownRegistered.includes(placed.name))) return placed.name;
    if (shared.includes(named)) return named;
    if (!placed.ok) {
      crossings.push(crossing(`tools.${i}.compensation.tool`, named, placed.crossesInto, namespace));
      return null;
    }
    return placed.name; // unknown: the policy check below names it
  };
  const resolved = tools.map((entry, i) => compensatorOf(entry, i));
  for (const t of existingTools) {
    if (t.namespace !== namespace) {
      crossings.push({ path: `tools.${toolNames.indexOf(t.name)}.name`, message: `${t.name} belongs to ${t.namespace ? `the namespace "${t.namespace}"` : "a connector the server runs"}; declare tools only in your own namespace "${namespace}".` });
    }
  }
  for (const c of existingComps) {
    if (c.namespace !== namespace) {
      crossings.push({ path: `compensators.${compNames.indexOf(c.name)}.name`, message: `${c.name} belongs to ${c.namespace ? `the namespace "${c.namespace}"` : "the server"}; declare compensators only in your own namespace "${namespace}".` });
    }
  }
  if (crossings.length > 0) {
    throw new ApiError("FORBIDDEN", `The manifest reaches outside the namespace "${namespace}": ${crossings.map((c) => `${c.path}: ${c.message}`).join("; ")} Nothing was declared.`, { details: crossings });
  }

  const issues: TErrorDetail[] = [];
  const duplicate = toolNames.find((n, i) => toolNames.indexOf(n) !== i);
  if (duplicate) issues.push({ path: "tools", message: `${duplicate} is declared twice.` });
  const knownCompensators = [...new Set([...shared, ...ownRegistered, ...compNames])];
  const plans = tools.map((entry, i) => {
    const name = toolNames[i] ?? entry.name;
    const compensator = resolved[i] ?? null;
    const existing = existingTools.find((t) => t.name === name);
    const suggestion = suggestedFields(entry, compensator, existing === undefined);
    // The suggestion is checked as a whole row would be, so a team learns at once what an admin could not accept.
    const asRow: TToolPolicyFields = { ...strictRow(entry), ...suggestion, status: ToolStatus.UNREVIEWED };
    for (const issue of checkToolPolicy(name, asRow, null, { lookupAvailable: entry.lookup, compensators: knownCompensators }).issues) {
      const path = issue.path === "compensator" || issue.path === "compensationArgs" ? "compensation.tool" : issue.path === "toolClass" ? "lookup" : issue.path.startsWith("correction") ? "correction" : issue.path;
      issues.push({ path: `tools.${i}.${path}`, message: issue.message });
    }
    // The declaration as stored names the compensator as resolved, so it reads like the row it suggests.
    const declared = { ...entry, name, ...(entry.compensation && compensator ? { compensation: { ...entry.compensation, tool: compensator } } : {}) } as Prisma.InputJsonValue;
    return { name, entry, declared, suggestion, existing };
  });
  if (issues.length > 0) throw validationError(issues, "The tool manifest");

  try {
    return await writeTransaction(prisma, async (tx, now) => {
      for (const [i, c] of compensators.entries()) {
        const name = compNames[i] ?? c.name;
        const data = { namespace, argsSchema: (c.argsSchema ?? Prisma.JsonNull) as Prisma.InputJsonValue, description: c.description ?? null, declaredBy: options.actor.id };
        await tx.compensator.upsert({ where: { name }, create: { name, ...data, createdAt: now }, update: data });
      }
      const results: TDeclarationResult["tools"] = [];
      const trusted = await trustedReadOnly(tx);
      const trust = trusted.namespaces.includes(namespace) ? trusted.updatedBy : null;
      for (const plan of plans) results.push(await declareOne(tx, now, plan, namespace, options.actor, trust));
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

/** One tool's plan: its name, the entry, the declaration as stored, what it suggests, and the row it finds. */
interface DeclarationPlan {
  name: string;
  entry: TDeclaredTool;
  declared: Prisma.InputJsonValue;
  suggestion: Partial<TToolPolicyFields>;
  existing: ToolPolicy | undefined;
}

/**
 * Writes one tool's declaration: a new strict row, or a proposal beside the row in force. `trustedBy`
 * is who trusts this namespace's read-only hints (null: nobody): a new tool they mark read-only
 * enters reviewed as PURE, saying so in its history.
 */
async function declareOne(tx: Prisma.TransactionClient, now: Date, plan: DeclarationPlan, namespace: string, actor: Actor, trustedBy: string | null): Promise<TDeclarationResult["tools"][number]> {
  const { name, entry, declared, suggestion, existing } = plan;
  const declaration = { declared, declaredBy: actor.id, declaredAt: now, namespace };
  const by = `${actor.type}:${actor.id}`;
  if (!existing && trustedBy !== null && hintsSayReadOnly(entry)) {
    const fields: TToolPolicyFields = { ...strictRow(entry), toolClass: ToolClass.PURE, status: ToolStatus.REVIEWED };
    const row = await tx.toolPolicy.create({
      data: { name, ...rowData(fields), ...declaration, lookupAvailable: entry.lookup, ...proposalData(null, actor, now), policyVersion: 1, updatedBy: by, verifiedBy: `policy:${TRUSTED_READ_ONLY_KEY}`, verifiedAt: now, createdAt: now, updatedAt: now },
    });
    await recordToolVersion(tx, now, row, ToolChange.reviewed, actor, null, `reviewed as PURE by policy: ${trustedBy} trusts the read-only hints of the namespace "${namespace}" (npm run tools -- trust-read-only)`);
    return { name, status: ToolStatus.REVIEWED, policyVersion: 1, outcome: "created", proposed: [] };
  }
  if (!existing) {
    const fields = strictRow(entry);
    const proposal = proposalOf(fields, suggestion, entry.lookup, entry.lookup);
    const row = await tx.toolPolicy.create({
      data: { name, ...rowData(fields), ...declaration, lookupAvailable: entry.lookup, ...proposalData(proposal, actor, now), policyVersion: 1, updatedBy: by, createdAt: now, updatedAt: now },
    });
    await recordToolVersion(tx, now, row, ToolChange.declared, actor, null);
    return { name, status: ToolStatus.UNREVIEWED, policyVersion: 1, outcome: "created", proposed: Object.keys(proposal ?? {}) };
  }
  const before = fieldsOf(existing);
  const proposal = proposalOf(before, suggestion, entry.lookup, existing.lookupAvailable);
  const proposed = Object.keys(proposal ?? {});
  if (existing.status === ToolStatus.UNREVIEWED) {
    if (sameJson(existing.declared, declared)) {
      // The same declaration again (a gateway or connector restarting): nothing changes, no new version.
      return { name, status: ToolStatus.UNREVIEWED, policyVersion: existing.policyVersion, outcome: "unchanged", proposed };
    }
    // Still held; the new declaration replaces the proposal, and the version moves so approvals of held calls made under the old one lapse.
    const row = await tx.toolPolicy.update({
      where: { name },
      data: { ...declaration, lookupAvailable: entry.lookup, description: entry.description ?? existing.description, ...proposalData(proposalOf(before, suggestion, entry.lookup, entry.lookup), actor, now), policyVersion: { increment: 1 }, updatedBy: by, updatedAt: now },
    });
    await recordToolVersion(tx, now, row, ToolChange.declared, actor, before);
    return { name, status: ToolStatus.UNREVIEWED, policyVersion: row.policyVersion, outcome: "updated", proposed };
  }
  if (existing.status === ToolStatus.REVIEWED && definitionChanged(existing.declared, declared)) {
    // The tool itself changed (its arguments or what it says it does): the review no longer covers it.
    // Only the status moves, to the strictest: every call held (and decided as IRREVERSIBLE) until an
    // admin reviews it again. Every control keeps the admin's value; the suggestions wait as a proposal.
    const row = await tx.toolPolicy.update({
      where: { name },
      data: { ...declaration, status: ToolStatus.UNREVIEWED, ...proposalData(proposal, actor, now), policyVersion: { increment: 1 }, updatedBy: by, updatedAt: now },
    });
    await recordToolVersion(tx, now, row, ToolChange.declared, actor, before, "its team declared another definition (arguments or description): held until an admin reviews it again");
    return { name, status: ToolStatus.UNREVIEWED, policyVersion: row.policyVersion, outcome: "changed", proposed };
  }
  // Reviewed (or disabled): the row in force stands exactly; the declaration and what it proposes are kept beside it.
  await tx.toolPolicy.update({ where: { name }, data: { declared, declaredBy: actor.id, declaredAt: now, ...proposalData(proposal, actor, now) } });
  await appendAuditLink(tx, now, {
    scope: toolScope(name),
    runId: null,
    stepId: null,
    type: proposal ? "tool.change_proposed" : "tool.redeclared",
    actor,
    data: { tool: name, declared: declared as Json, ...(proposal ? { proposal: proposal as unknown as Json } : {}) },
  });
  return { name, status: existing.status === ToolStatus.DISABLED ? ToolStatus.DISABLED : ToolStatus.REVIEWED, policyVersion: existing.policyVersion, outcome: "recorded", proposed };
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
