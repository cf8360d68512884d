/**
 * The per-tool reversibility table (ToolPolicy) as the agent API reads it: the server's authority on
 * what a tool is. Whatever a client claims about a tool, the server decides with this table.
 */
import * as z from "zod";
import type { PrismaClient, ToolPolicy } from "@/generated/prisma";
import { SagaError } from "@/packages/client/src/saga/errors";
import { tableTool, type TableTool } from "@/packages/client/src/saga/tool-table";
import type { CompensationPlan, CorrectionDraft, Json } from "@/packages/client/src/saga/tools";
import { ToolClass } from "@/packages/client/src/saga/vocabulary";
import { declaredArgsSchema } from "@/lib/server/tools/declared-args-schema";
import { audiencesOf, buildCompensationArgs, fillTemplate, storedCompensationArgs } from "@/lib/server/tools/tool-policy";

/** A tool-table row as a call is decided with it. */
export interface ToolPolicyView extends TableTool {
  /** Revocation window, seconds. */
  revocationWindowSec: number | null;
  /** The row's audiences, when it names any. */
  audiences: string[];
  /** The row's audience rule as written (a fixed list, or a recipient rule applied to each call's arguments). */
  audienceRule: string | null;
  /** The row's correction template, when it has one. */
  correctionTemplate: { subject: string; body: string } | null;
  /** The compensator's arguments as templates over the call's (the compensation written when the agent sends none). */
  compensationTemplate: Record<string, string> | null;
  /** The arguments' schema its team declared (JSON Schema, compiled), or null when none was declared. */
  argsSchema: z.ZodType | null;
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

/** A stored row as a call is decided with it: the saga core's reading of the row plus what the server adds. */
export function toolPolicyView(row: ToolPolicy): ToolPolicyView {
  return {
    ...tableTool(row),
    revocationWindowSec: row.revocationWindowSec,
    audiences: audiencesOf(row.audienceRule),
    audienceRule: row.audienceRule,
    correctionTemplate: row.correctionSubject && row.correctionBody ? { subject: row.correctionSubject, body: row.correctionBody } : null,
    compensationTemplate: storedCompensationArgs(row.compensationArgs),
    argsSchema: declaredArgsSchema(row.declared),
  };
}

/** Refuses arguments that fail the tool's declared schema, naming each field. */
export function assertArgsMatchDeclared(policy: ToolPolicyView, args: Json): void {
  if (!policy.argsSchema) return;
  const parsed = policy.argsSchema.safeParse(args);
  if (parsed.success) return;
  const issues = parsed.error.issues.map((i) => ({ path: ["args", ...i.path.map(String)].join("."), message: i.message }));
  throw new SagaError("INVALID_ARGS", `The arguments of ${policy.name} fail its declared schema: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}.`, issues);
}

/** The correction the table drafts for an irreversible call whose client sent none. */
export function tableCorrection(policy: ToolPolicyView, args: Json, audience: string[]): CorrectionDraft | null {
  if (policy.class !== ToolClass.IRREVERSIBLE || !policy.correctionTemplate) return null;
  return { audience, subject: fillTemplate(policy.correctionTemplate.subject, args), body: fillTemplate(policy.correctionTemplate.body, args) };
}

/**
 * The compensation the table writes for a call whose agent sent none: its compensator with the
 * template's arguments filled from the call's. Null when the row has no template, or a placeholder
 * names no argument of this call (then nothing can be built and the call needs a person first).
 */
export function tableCompensation(policy: ToolPolicyView, args: Json): CompensationPlan | null {
  if (!policy.compensator || !policy.compensationTemplate) return null;
  const built = buildCompensationArgs(policy.compensationTemplate, args);
  return built ? { tool: policy.compensator, args: built as Json } : null;
}
