/**
 * What the tool table's screens and endpoints answer: one row as people read it, one tool with its
 * history and declaration, and the outcome of an edit. Types are inferred from these schemas.
 */
import * as z from "zod";
import type { ToolPolicy, ToolPolicyVersion } from "@/generated/prisma";
import { ZRole } from "@/lib/server/auth/roles";
import { ToolClass, ToolStatus } from "@/packages/client/src/saga/vocabulary";
import { checkToolPolicy, FIELD_LABELS, fieldsOf, loosens, ZToolPolicyFields, type ConnectorFacts, type ToolPolicyField } from "./tool-policy";
import { storedProposal, withProposal } from "./tool-proposal";
import { describeAudienceRule } from "./audience";

const Fields = z.object({
  toolClass: z.enum(ToolClass),
  compensator: z.string().nullable(),
  compensationArgs: z.record(z.string(), z.string()).nullable().optional(),
  undoMechanism: z.string().nullable(),
  owner: z.string().nullable(),
  system: z.string().nullable(),
  revocationWindowSec: z.number().int().nullable(),
  keyRetentionSec: z.number().int().nullable(),
  audienceRule: z.string().nullable(),
  revokeRoles: z.array(ZRole),
  alwaysRequireApproval: z.boolean(),
  twoApprovers: z.boolean().optional(),
  reviewerEditableArgs: z.array(z.string()).nullable().optional(),
  personalData: z.object({ subject: z.string(), args: z.array(z.string()), result: z.array(z.string()) }).nullable().optional(),
  retentionSec: z.number().int().nullable().optional(),
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
  /** Its team proposes a change an admin has not decided yet. */
  proposalWaiting: z.boolean(),
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

/** A team's proposed change to a tool's row, field by field, beside the row in force. */
export const ZToolProposalView = z.object({
  /** Who declared it (the token's name, or the admin who declared for the team). */
  proposedBy: z.string().nullable(),
  proposedAt: z.iso.datetime().nullable(),
  /** One entry per field the proposal would change. */
  changes: z.array(
    z.object({
      /** The field's key (`toolClass`, `owner`, ... or `lookupAvailable`). */
      field: z.string(),
      /** What people call it. */
      label: z.string(),
      /** The value in force now. */
      inForce: z.unknown(),
      /** The value the team proposes. */
      proposed: z.unknown(),
      /** Accepting it would lower a control (a weaker class, more roles, a longer window, another compensator or owner). */
      lowersControl: z.boolean(),
    }),
  ),
});
/** A team's proposed change to a tool's row. */
export type TToolProposalView = z.infer<typeof ZToolProposalView>;

/** One tool: its row, what its team declared, its history and what an edit may choose from. */
export const ZToolDetail = z.object({
  tool: ZToolRow,
  /** The team's proposed change waiting for an admin (accept or refuse); null when none. */
  proposal: ZToolProposalView.nullable(),
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
    proposalWaiting: storedProposal(row.proposal) !== null,
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

/** A row's pending proposal, field by field beside the row in force; null when none waits. */
export function toToolProposal(row: ToolPolicy): TToolProposalView | null {
  const proposal = storedProposal(row.proposal);
  if (!proposal) return null;
  const inForce = fieldsOf(row);
  const after = withProposal(inForce, proposal);
  const changes = Object.entries(proposal).map(([field, proposed]) => {
    if (field === "lookupAvailable") return { field, label: "can look calls up by key", inForce: row.lookupAvailable, proposed, lowersControl: false };
    const key = field as ToolPolicyField;
    const lowersControl = key === "owner" || loosens(key, inForce, after);
    return { field, label: FIELD_LABELS[key], inForce: inForce[key] ?? null, proposed: proposed ?? null, lowersControl };
  });
  return { proposedBy: row.proposedBy, proposedAt: row.proposedAt?.toISOString() ?? null, changes };
}
