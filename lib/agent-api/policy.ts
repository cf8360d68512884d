/**
 * The per-tool reversibility table (ToolPolicy): the server's authority on what a tool is. Whatever
 * a client claims about a tool, the server decides with this table.
 */
import * as z from "zod";
import type { PrismaClient, ToolPolicy } from "@/generated/prisma";
import { databaseNow } from "@/lib/db/dialect";
import { SagaError } from "@/lib/saga/errors";
import { ApprovalReason, type GateTool } from "@/lib/saga/gate";
import type { CorrectionDraft, Json, ToolDefinition, ToolRegistry } from "@/lib/saga/tools";
import { TOOL_CLASSES, ToolClass } from "@/lib/saga/vocabulary";
import { audiencesOf, DEFAULT_WINDOW_SEC, fillTemplate, storedStatus, ToolStatus } from "@/lib/tools/tool-policy";
import { TX_OPTIONS } from "@/lib/db/transactions";
import { recordToolVersion, ToolChange } from "@/lib/tools/tool-versions";

/** A tool-table row as the harness uses it. */
export interface ToolPolicyView extends GateTool {
  /** The compensator the tool's compensation must name. */
  compensator: string | null;
  /** Revocation window, seconds. */
  revocationWindowSec: number | null;
  /** Review status: a disabled tool takes no new intents, an unreviewed one holds every call. */
  status: ToolStatus;
  /** Who disabled it (for the refusal), when disabled. */
  disabledBy: string | null;
  /** The row's audiences, when it names any. */
  audiences: string[];
  /** The row's correction template, when it has one. */
  correctionTemplate: { subject: string; body: string } | null;
  /** The arguments' schema its team declared (JSON Schema, compiled), or null when none was declared. */
  argsSchema: z.ZodType | null;
}

/**
 * A connector's correction as a template: its function called with arguments whose every field
 * reads `{{field}}`, so `Correction: ${args.subject}` becomes `Correction: {{subject}}`. Kept only
 * when every placeholder names an argument and nothing was computed from one (`NaN`, a changed
 * case): a function that does arithmetic on its arguments has no template, and the row says so.
 */
function correctionTemplateOf(def: ToolDefinition): { subject: string; body: string } | null {
  if (!def.correction) return null;
  const placeholders = new Proxy({}, { get: (_target, field) => (typeof field === "string" ? `{{${field}}}` : undefined) });
  let draft: CorrectionDraft | null;
  try {
    draft = def.correction(placeholders as never);
  } catch {
    return null;
  }
  if (!draft) return null;
  const shape = (def.args as { shape?: Record<string, unknown> }).shape ?? {};
  const text = `${draft.subject}\n${draft.body}`;
  const named = [...text.matchAll(/\{\{([^}]*)\}\}/g)].map((m) => m[1] ?? "");
  if (/NaN|undefined|\[object /.test(text) || named.some((field) => !(field in shape))) return null;
  return { subject: draft.subject, body: draft.body };
}

/**
 * Registers the tools and compensators of connectors this server runs: each missing tool enters the
 * table as REVIEWED (the operator deployed its code) with version 1 in its history, each missing
 * compensator enters the list edits are checked against. Existing rows (admins' edits) are kept.
 */
export async function syncToolPolicies(prisma: PrismaClient, registry: ToolRegistry, updatedBy = "system:seed"): Promise<number> {
  const actor = { type: "system" as const, id: updatedBy.replace(/^system:/, "") };
  const compensators = registry.listCompensators();
  const knownCompensators = new Set((await prisma.compensator.findMany({ where: { name: { in: compensators.map((c) => c.name) } }, select: { name: true } })).map((c) => c.name));
  for (const comp of compensators) {
    if (knownCompensators.has(comp.name)) continue;
    await prisma.compensator.createMany({ data: [{ name: comp.name, description: null, declaredBy: updatedBy }] }).catch(ignoreTaken);
  }
  let added = 0;
  for (const def of registry.list()) {
    const existing = await prisma.toolPolicy.findUnique({ where: { name: def.name }, select: { name: true } });
    if (existing) continue;
    const template = correctionTemplateOf(def);
    const created = await prisma
      .$transaction(async (tx) => {
        const now = await databaseNow(tx);
        const row = await tx.toolPolicy.create({
          data: {
            name: def.name,
            toolClass: def.class,
            compensator: def.compensation?.with ?? null,
            lookupAvailable: def.lookup !== undefined,
            owner: def.owner ?? null,
            policyVersion: def.policyVersion ?? 1,
            revocationWindowSec: DEFAULT_WINDOW_SEC[def.class],
            correctionSubject: template?.subject ?? null,
            correctionBody: template?.body ?? null,
            description: def.description ?? null,
            status: ToolStatus.REVIEWED,
            updatedBy,
            createdAt: now,
          },
        });
        await recordToolVersion(tx, now, row, ToolChange.created, actor, null);
        return true;
      }, TX_OPTIONS)
      .catch(ignoreTaken);
    if (created) added++;
  }
  return added;
}

/** Another process registered the same row first: nothing to do. */
function ignoreTaken(e: unknown): false {
  if (typeof e === "object" && e !== null && (e as { code?: unknown }).code === "P2002") return false;
  throw e;
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

/** The tool's row, or UNKNOWN_TOOL saying how it gets into the table (remembered for `recentToolPolicy`). */
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
    throw new SagaError(
      "UNKNOWN_TOOL",
      `Tool "${name}" is not in the tool table. Declare it with a manifest (POST /api/v1/tools/declarations, or npm run tools -- declare --file manifest.json) and have an admin review it at /admin/tools.`,
      [{ path: "tool", message: "not in the tool table" }],
    );
  }
  return toolPolicyView(row);
}

/** The harness's view of a stored row. */
export function toolPolicyView(row: ToolPolicy): ToolPolicyView {
  if (!TOOL_CLASSES.includes(row.toolClass as ToolClass)) {
    throw new SagaError("INVALID_TOOL_DEFINITION", `The tool table gives "${row.name}" an unknown class "${row.toolClass}"; an admin must fix the row.`);
  }
  const status = storedStatus(row.status);
  const holdEveryCall = status === ToolStatus.UNREVIEWED ? ApprovalReason.UNREVIEWED : row.alwaysRequireApproval ? ApprovalReason.ALWAYS_APPROVE : undefined;
  return {
    name: row.name,
    class: row.toolClass as ToolClass,
    owner: row.owner ?? undefined,
    policyVersion: row.policyVersion,
    ...(holdEveryCall ? { holdEveryCall } : {}),
    compensator: row.compensator,
    revocationWindowSec: row.revocationWindowSec,
    status,
    disabledBy: row.disabledBy,
    audiences: audiencesOf(row.audienceRule),
    correctionTemplate: row.correctionSubject && row.correctionBody ? { subject: row.correctionSubject, body: row.correctionBody } : null,
    argsSchema: declaredArgsSchema(row),
  };
}

/** The declared JSON Schema of a tool's arguments as zod, or null (none declared, or not one zod can read). */
function declaredArgsSchema(row: ToolPolicy): z.ZodType | null {
  const declared = row.declared as { argsSchema?: unknown } | null;
  const schema = declared?.argsSchema;
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return null;
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return null; // an unreadable schema checks nothing; the admin sees the declaration as sent
  }
}

/** Refuses arguments that fail the tool's declared schema, naming each field. */
export function assertArgsMatchDeclared(policy: ToolPolicyView, args: Json): void {
  if (!policy.argsSchema) return;
  const parsed = policy.argsSchema.safeParse(args);
  if (parsed.success) return;
  const issues = parsed.error.issues.map((i) => ({ path: ["args", ...i.path.map(String)].join("."), message: i.message }));
  throw new SagaError("INVALID_ARGS", `The arguments of ${policy.name} fail its declared schema: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}.`, issues);
}

/** Refuses a new intent for a disabled tool, naming the tool and who disabled it. */
export function assertToolEnabled(policy: ToolPolicyView): void {
  if (policy.status === ToolStatus.DISABLED) {
    throw new SagaError("TOOL_DISABLED", `Tool "${policy.name}" was disabled in the tool table by ${policy.disabledBy ?? "an admin"}; no new calls are recorded. Ask them (or an admin) to enable it at /admin/tools/${policy.name}.`, [
      { path: "tool", message: "disabled in the tool table" },
    ]);
  }
}

/** The correction the table drafts for an irreversible call whose client sent none. */
export function tableCorrection(policy: ToolPolicyView, args: Json, audience: string[]): CorrectionDraft | null {
  if (policy.class !== ToolClass.IRREVERSIBLE || !policy.correctionTemplate) return null;
  return { audience, subject: fillTemplate(policy.correctionTemplate.subject, args), body: fillTemplate(policy.correctionTemplate.body, args) };
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
