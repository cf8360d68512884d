/**
 * What the tool table's screens and endpoints answer: one row as people read it, one tool with its
 * history and declaration, and the outcome of an edit. Types are inferred from these schemas.
 */
import * as z from "zod";
import type { ToolPolicy, ToolPolicyVersion } from "@/generated/prisma";
import { ZRole } from "@/lib/server/auth/roles";
import { ToolClass, ToolStatus } from "@/lib/saga/vocabulary";
import { checkToolPolicy, fieldsOf, ZToolPolicyFields, type ConnectorFacts } from "./tool-policy";
import { describeAudienceRule } from "./audience";

const Fields = z.object({
  toolClass: z.enum(ToolClass),
  compensator: z.string().nullable(),
  undoMechanism: z.string().nullable(),
  owner: z.string().nullable(),
  system: z.string().nullable(),
  revocationWindowSec: z.number().int().nullable(),
  keyRetentionSec: z.number().int().nullable(),
  audienceRule: z.string().nullable(),
  revokeRoles: z.array(ZRole),
  alwaysRequireApproval: z.boolean(),
  reviewerEditableArgs: z.array(z.string()).nullable().optional(),
  correctionSubject: z.string().nullable(),
  correctionBody: z.string().nullable(),
  description: z.string().nullable(),
  status: z.enum(ToolStatus),
}) satisfies z.ZodType<z.output<typeof ZToolPolicyFields>>;

/** One row of the tool table. */
export const ZToolRow = Fields.extend({
  /** Tool name. */
  name: z.string(),
  /** The version approvals must name now. */
  policyVersion: z.number().int(),
  /** Whether the connector can look an effect up by key (a connector fact, not an admin's choice). */
  lookupAvailable: z.boolean(),
  /** The declaring token's namespace; null for connectors registered with the server. */
  namespace: z.string().nullable(),
  /** When an admin last checked the row against the connector, and who. */
  verifiedAt: z.iso.datetime().nullable(),
  verifiedBy: z.string().nullable(),
  /** Who disabled it, when disabled. */
  disabledBy: z.string().nullable(),
  /** Last change. */
  updatedAt: z.iso.datetime(),
  updatedBy: z.string().nullable(),
  /** What a person should know about the row as it stands (accepted, but worth a look). */
  warnings: z.array(z.string()),
  /** The audience rule in words, with the company's domains it compares addresses against. */
  audienceWords: z.string(),
});
/** One row of the tool table. */
export type TToolRow = z.infer<typeof ZToolRow>;

/** The tool table. */
export const ZToolTable = z.object({
  /** Every row, by name. */
  tools: z.array(ZToolRow),
  /** Counts by status. */
  counts: z.object({ UNREVIEWED: z.number().int(), REVIEWED: z.number().int(), DISABLED: z.number().int() }),
  /** Whether the signed-in person may edit rows. */
  canEdit: z.boolean(),
});
/** The tool table. */
export type TToolTable = z.infer<typeof ZToolTable>;

/** One version in a tool's history. */
export const ZToolVersion = z.object({
  version: z.number().int(),
  change: z.string(),
  changedBy: z.string(),
  changedAt: z.iso.datetime(),
  reason: z.string().nullable(),
  /** field -> { from, to } */
  diff: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })),
});
/** One version in a tool's history. */
export type TToolVersion = z.infer<typeof ZToolVersion>;

/** One tool: its row, what its team declared, its history and what an edit may choose from. */
export const ZToolDetail = z.object({
  tool: ZToolRow,
  /** The manifest entry as declared (a suggestion), beside what was accepted; null when none. */
  declared: z.record(z.string(), z.unknown()).nullable(),
  declaredBy: z.string().nullable(),
  declaredAt: z.iso.datetime().nullable(),
  /** A declared tool whose declaration has no (readable) argument schema: its calls take any JSON. */
  argsSchemaMissing: z.boolean(),
  /** Newest first. */
  history: z.array(ZToolVersion),
  /** Compensators of the tool's own team (its namespace, or the server's) and its current one: the choices for "compensating tool". */
  compensators: z.array(z.string()),
  /** Whether the signed-in person may edit the row. */
  canEdit: z.boolean(),
});
/** One tool with its history. */
export type TToolDetail = z.infer<typeof ZToolDetail>;

/** What an edit answered: saved (with the new row), or refused as a value when someone edited first. */
export const ZToolEditResult = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), tool: ZToolRow, changed: z.array(z.string()) }),
  z.object({ ok: z.literal(false), reason: z.literal("version_changed"), current: ZToolRow, message: z.string() }),
]);
/** What an edit answered. */
export type TToolEditResult = z.infer<typeof ZToolEditResult>;

/** The row as people read it, with the warnings of its current state. */
export function toToolRow(row: ToolPolicy, connectors: ConnectorFacts): TToolRow {
  const fields = fieldsOf(row);
  return {
    ...fields,
    system: row.system,
    name: row.name,
    policyVersion: row.policyVersion,
    lookupAvailable: row.lookupAvailable,
    namespace: row.namespace,
    verifiedAt: row.verifiedAt?.toISOString() ?? null,
    verifiedBy: row.verifiedBy,
    disabledBy: row.disabledBy,
    updatedAt: row.updatedAt.toISOString(),
    updatedBy: row.updatedBy,
    warnings: checkToolPolicy(row.name, fields, fields, connectors).warnings,
    audienceWords: describeAudienceRule(row.audienceRule),
  };
}

/** A stored version as the history shows it. */
export function toToolVersion(v: ToolPolicyVersion): TToolVersion {
  return {
    version: v.version,
    change: v.change,
    changedBy: v.changedBy,
    changedAt: v.changedAt.toISOString(),
    reason: v.reason,
    diff: (v.diff ?? {}) as TToolVersion["diff"],
  };
}
