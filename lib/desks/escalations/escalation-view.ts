/** Shared by the escalation use cases: an escalation row as the queue shows it. */
import type { Prisma } from "@/generated/prisma";
import { ZEscalationKind, ZEscalationStatus } from "@/packages/client/src/protocol/schemas/saga";
import { connectorRegistry, withDb } from "@/lib/desks/dashboard/context";
import { audienceInWords } from "@/lib/desks/dashboard/audience-words";
import { planAudience } from "@/lib/desks/pivots/pivot-view";
import { callInWords } from "@/lib/desks/pivots/call-in-words";
import type { Json } from "@/packages/client/src/saga/tools";
import { EscalationKind } from "@/packages/client/src/saga/vocabulary";
import { systemOfTool } from "@/lib/server/tools/tool-systems";
import { routedOwner } from "@/packages/client/src/saga/tool-table";
import type { TEscalationQueueItem } from "@/lib/desks/escalations/views";

/** What a queue row reads besides the escalation: its run's title and its step. */
export const ESCALATION_INCLUDE = {
  run: { select: { id: true, title: true } },
  step: { select: { id: true, stepIdx: true, tool: true } },
} as const satisfies Prisma.EscalationInclude;

/** An escalation row with its run and step. */
export type EscalationRowWithRefs = Prisma.EscalationGetPayload<{ include: typeof ESCALATION_INCLUDE }>;

/** The tool an escalation is about: its step's, else the one its detail names (a held call). */
export function escalationTool(row: { step: { tool: string } | null; detail: Prisma.JsonValue }): string | null {
  if (row.step) return row.step.tool;
  const detail = row.detail;
  if (detail && typeof detail === "object" && !Array.isArray(detail) && typeof detail.tool === "string") return detail.tool;
  return null;
}

/** What the tool table says of a tool that a queue row shows: its system and its audience rule. */
export interface RowToolFacts {
  /** The external system it acts on; null when the row names none. */
  system: string | null;
  /** Who sees its effects (lib/server/tools/audience.ts); null when the row states none. */
  audienceRule: string | null;
  /** The team the tool table routes its escalations to; null when it names none or the tool is unreviewed. */
  owner: string | null;
}

/** The tool table's facts for each tool of `rows` (a tool with no row is left out). */
export async function toolSystems(rows: readonly { step: { tool: string } | null; detail: Prisma.JsonValue }[]): Promise<ReadonlyMap<string, RowToolFacts>> {
  const tools = [...new Set(rows.map(escalationTool).filter((t): t is string => t !== null))];
  if (tools.length === 0) return new Map();
  const found = await withDb((prisma) => prisma.toolPolicy.findMany({ where: { name: { in: tools } }, select: { name: true, system: true, audienceRule: true, owner: true, status: true } }));
  return new Map(found.map((r) => [r.name, { system: r.system, audienceRule: r.audienceRule, owner: routedOwner(r) }] as const));
}

/**
 * Who an escalation is routed to, and so who may claim, check and resolve it: the team the tool
 * table names now for the escalation's tool (its step's, or the held call's the server's gate
 * raised), never what whoever raised it claimed; the owner recorded when it was raised only where
 * the table has no row for its tool. The queue, the page and who may work it all read this one answer.
 */
export function escalationOwner(row: { kind: string; owner: string | null; step: { tool: string } | null; detail: Prisma.JsonValue }, systems: ReadonlyMap<string, RowToolFacts>): string | null {
  // Only a held call's tool is read from its detail: the gate wrote it; an agent's detail is its own words.
  const tool = row.step?.tool ?? (row.kind === EscalationKind.APPROVAL_REQUIRED ? escalationTool(row) : null);
  const facts = tool ? systems.get(tool) : undefined;
  return facts ? facts.owner : row.owner;
}

/** A held call in words, and who would see it (the queue row and the bulk confirmation name both). */
function heldCallOf(row: EscalationRowWithRefs, facts: RowToolFacts | undefined): TEscalationQueueItem["heldCall"] {
  const detail = row.detail;
  if (row.kind !== EscalationKind.APPROVAL_REQUIRED || !detail || typeof detail !== "object" || Array.isArray(detail) || typeof detail.tool !== "string") return null;
  const args = detail.args ?? null;
  const { audience, source } = planAudience(connectorRegistry(), { tool: detail.tool, args: args as Json }, facts);
  return { call: callInWords({ tool: detail.tool, args }), seenBy: audienceInWords(audience, source), toolClass: typeof detail.toolClass === "string" ? detail.toolClass : null, args: args as Json };
}

/** A queue row, with its age measured against `now` and its system as `systems` (from `toolSystems`) names it. */
export function queueItem(row: EscalationRowWithRefs, now: Date, systems: ReadonlyMap<string, RowToolFacts>): TEscalationQueueItem {
  const tool = escalationTool(row);
  const end = row.resolvedAt ?? now;
  return {
    id: row.id,
    kind: ZEscalationKind.parse(row.kind),
    status: ZEscalationStatus.parse(row.status),
    title: row.title,
    run: row.run,
    step: row.step,
    tool,
    system: tool ? systemOfTool(systems.get(tool)?.system) : null,
    heldCall: heldCallOf(row, tool ? systems.get(tool) : undefined),
    owner: escalationOwner(row, systems),
    claimedBy: row.claimedBy,
    claimedAt: row.claimedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    ageSeconds: Math.max(0, Math.floor((end.getTime() - row.createdAt.getTime()) / 1000)),
    resolvedBy: row.resolvedBy,
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
  };
}
