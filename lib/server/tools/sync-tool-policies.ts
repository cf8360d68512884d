/**
 * Registers the tools and compensators of connectors this server runs into the tool table (the
 * seed, the demo, a worker's boot): what a connector's code says about a tool becomes its first row.
 */
import type { PrismaClient } from "@/generated/prisma";
import type { CorrectionDraft, ToolDefinition, ToolRegistry } from "@/packages/client/src/saga/tools";
import { DEFAULT_WINDOW_SEC } from "@/lib/server/tools/duration";
import { ToolStatus } from "@/packages/client/src/saga/vocabulary";
import { recordToolVersion, ToolChange } from "@/lib/server/tools/tool-versions";
import { isUniqueViolation } from "@/lib/core/db/prisma-errors";
import { writeTransaction } from "@/lib/core/db/transactions";

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
    const created = await writeTransaction(prisma, async (tx, now) => {
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
    }).catch(ignoreTaken);
    if (created) added++;
  }
  return added;
}

/** Another process registered the same row first: nothing to do. */
function ignoreTaken(e: unknown): false {
  if (isUniqueViolation(e)) return false;
  throw e;
}

