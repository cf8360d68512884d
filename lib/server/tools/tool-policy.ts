/**
 * The per-tool reversibility table as admins keep it: what a tool's row says (class, undo, lookup,
 * windows, owner, audience, who may revoke, approval, correction template, review status), the rules
 * an edit must pass against what the connectors can do, and the diff one version makes.
 *
 * The harness reads the same rows (lib/server/agent-api/tool-policy-view.ts) to decide every intent; this module is the
 * admin's side. Pure: no database access, so the rules are unit-tested on their own.
 */
import { storedEditableArgs } from "@/lib/server/tools/reviewer-edits";
import * as z from "zod";
import type { ToolPolicy } from "@/generated/prisma";
import { can, isRole, rolesThatCan, ZRole, type Role } from "@/lib/server/auth/roles";
import type { FieldIssue } from "@/packages/client/src/saga/errors";
import { storedStatus } from "@/packages/client/src/saga/tool-table";
import { DEFAULT_WINDOW_SEC } from "./duration";
import { ToolClass, TOOL_CLASSES, ToolStatus, TOOL_STATUSES } from "@/packages/client/src/saga/vocabulary";


/** Who may pull a tool's revoke trigger when its row names nobody: everyone whose role can pull triggers. */
export const DEFAULT_REVOKE_ROLES: readonly Role[] = rolesThatCan("revoke.pull");

/** The longest window or retention the table takes: a year, in seconds. */
const MAX_SECONDS = 366 * 24 * 3600;

/** A free-text field: trimmed, and empty means "not set". */
function optionalText(max: number) {
  return z
    .string()
    .trim()
    .max(max, `At most ${max} characters.`)
    .nullable()
    .transform((v) => (v ? v : null));
}

/** A compensation template: each argument of the compensator, a text with `{{arg}}` placeholders. */
export const ZCompensationArgs = z.record(
  z.string().trim().min(1).max(80),
  z.string().max(500, "At most 500 characters a template."),
).refine((args) => Object.keys(args).length <= 40, "At most 40 arguments.");

const Seconds = z
  .number({ error: "A whole number of seconds, or empty for none." })
  .int("A whole number of seconds.")
  .min(0, "Cannot be negative; leave it empty for none.")
  .max(MAX_SECONDS, "At most a year (31,622,400 s).")
  .nullable();

/** The longest retention the table takes: ten years, in seconds. */
const MAX_RETENTION_SEC = 3660 * 86_400;

/** How long settled runs of a tool stay in the hot tables (lib/server/retention/ARCHITECTURE.md). */
export const ZRetentionSec = z
  .number({ error: "A whole number of seconds, or empty for the server's default." })
  .int("A whole number of seconds.")
  .min(86_400, "At least a day (86,400 s): people need time to read a settled run before it is archived.")
  .max(MAX_RETENTION_SEC, "At most ten years (316,224,000 s).");

/** A dotted path into a call's arguments or result (`to`, `customer.email`). */
const ZFieldPath = z
  .string()
  .trim()
  .regex(/^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/, "A field name, or a dotted path into an object (customer.email).")
  .max(120);

/**
 * Which fields of a tool's calls carry personal data (lib/core/privacy/ARCHITECTURE.md): stored
 * sealed under the key of the subject the `subject` argument names, destroyed when that person is erased.
 */
export const ZPersonalData = z.object({
  /** The argument whose value names the person (an email, a customer id); always personal itself. */
  subject: ZFieldPath,
  /** Other argument fields that are personal. */
  args: z.array(ZFieldPath).max(40).default([]).transform((f) => [...new Set(f)]),
  /** Result fields that are personal. */
  result: z.array(ZFieldPath).max(40).default([]).transform((f) => [...new Set(f)]),
});
/** Which fields of a tool's calls carry personal data. */
export type TPersonalData = z.output<typeof ZPersonalData>;

/** The personal-data declaration stored in a row (anything malformed reads as none, and the edit page shows it). */
export function storedPersonalData(value: unknown): TPersonalData | null {
  const parsed = ZPersonalData.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** The fields of a row that an admin edits. */
export const ZToolPolicyFields = z.object({
  /** PURE, REVERSIBLE, COMPENSATABLE or IRREVERSIBLE. */
  toolClass: z.enum(ToolClass, { error: `Use one of: ${TOOL_CLASSES.join(", ")}.` }),
  /** The compensator that answers the tool (REVERSIBLE, COMPENSATABLE). */
  compensator: optionalText(80),
  /**
   * The compensator's arguments as templates over the forward call's (`{ "room": "{{room}}" }`): the
   * compensation written when an agent sends none. Null: the agent must send it. Optional in an edit.
   */
  compensationArgs: ZCompensationArgs.nullable().optional(),
  /** How the effect is undone or answered, in words. */
  undoMechanism: optionalText(500),
  /** The team whose queue gets its escalations. */
  owner: optionalText(80),
  /**
   * The external system its effects live in (payments, ticketing, a vendor's name): a pivot's staged
   * effects are grouped by it, lookups and revokes name it. Optional in an edit; empty means not set.
   */
  system: optionalText(80).optional(),
  /** How long after the effect a permitted person may pull it back, seconds. */
  revocationWindowSec: Seconds,
  /** How long the provider keeps idempotency keys, seconds. */
  keyRetentionSec: Seconds,
  /** Who can see the effect: comma-separated audiences (customer, partner, internal, finance...). */
  audienceRule: optionalText(200),
  /** Roles that may pull its revoke trigger. */
  revokeRoles: z
    .array(ZRole)
    .max(8)
    .transform((roles) => [...new Set(roles)]),
  /** Hold every call for a person, whatever the class. */
  alwaysRequireApproval: z.boolean(),
  /**
   * A pivot whose plan holds this tool needs two different people's approvals: the first is recorded,
   * the second decides (lib/desks/approvals/ARCHITECTURE.md). Optional in an edit.
   */
  twoApprovers: z.boolean().optional(),
  /**
   * Arguments a reviewer may change in a pivot's plan before approving; null (the default): any but a
   * recipient or target (to, cc, *Id...). Optional in an edit.
   */
  reviewerEditableArgs: z
    .array(z.string().trim().min(1).max(80))
    .max(40)
    .transform((args) => [...new Set(args)])
    .nullable()
    .optional(),
  /**
   * Which argument and result fields are personal, and which argument names the person: those are
   * stored sealed under the person's key. Null: none. Optional in an edit.
   */
  personalData: ZPersonalData.nullable().optional(),
  /**
   * How long a settled run that called this tool stays in the hot tables before it is archived
   * (seconds); a run keeps the longest of its tools'. Null: the server's default. Optional in an edit.
   */
  retentionSec: ZRetentionSec.nullable().optional(),
  /** Correction subject, with {{arg}} placeholders (irreversible tools). */
  correctionSubject: optionalText(300),
  /** Correction body, with {{arg}} placeholders (irreversible tools). */
  correctionBody: optionalText(5000),
  /** One line for people reading the table. */
  description: optionalText(500),
  /** Review status. */
  status: z.enum(ToolStatus, { error: `Use one of: ${TOOL_STATUSES.join(", ")}.` }),
});
/** The fields of a row that an admin edits. */
export type TToolPolicyFields = z.output<typeof ZToolPolicyFields>;
/** A field an admin edits. */
export type ToolPolicyField = keyof TToolPolicyFields;
export const TOOL_POLICY_FIELDS = Object.keys(ZToolPolicyFields.shape) as ToolPolicyField[];

/**
 * What people call each field, for messages and the history view. The tool page (a client component,
 * components/admin/tool-labels.ts) imports this one map, so this module imports nothing server-only.
 */
export const FIELD_LABELS = {
  toolClass: "class",
  compensator: "compensating tool",
  compensationArgs: "compensation arguments",
  undoMechanism: "undo mechanism",
  owner: "owner",
  system: "external system",
  revocationWindowSec: "revocation window",
  keyRetentionSec: "provider key retention",
  audienceRule: "audience",
  revokeRoles: "who may pull it back",
  alwaysRequireApproval: "always require approval",
  twoApprovers: "two approvers",
  reviewerEditableArgs: "what a reviewer may change",
  personalData: "personal data",
  retentionSec: "retention",
  correctionSubject: "correction subject",
  correctionBody: "correction body",
  description: "description",
  status: "status",
} as const satisfies Record<ToolPolicyField, string>;

/** The roles stored in a row (a hand-edited value grants nothing it does not name correctly). */
export function storedRevokeRoles(value: unknown): Role[] {
  if (!Array.isArray(value)) return [...DEFAULT_REVOKE_ROLES];
  return value.filter((r): r is Role => typeof r === "string" && isRole(r));
}

/** The compensation template stored in a row (anything malformed reads as none: the agent must send the compensation). */
export function storedCompensationArgs(value: unknown): Record<string, string> | null {
  const parsed = ZCompensationArgs.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** The editable fields of a stored row. */
export function fieldsOf(row: ToolPolicy): TToolPolicyFields {
  return {
    toolClass: row.toolClass as ToolClass,
    compensator: row.compensator,
    compensationArgs: storedCompensationArgs(row.compensationArgs),
    undoMechanism: row.undoMechanism,
    owner: row.owner,
    system: row.system,
    revocationWindowSec: row.revocationWindowSec,
    keyRetentionSec: row.keyRetentionSec,
    audienceRule: row.audienceRule,
    revokeRoles: storedRevokeRoles(row.revokeRoles),
    alwaysRequireApproval: row.alwaysRequireApproval,
    twoApprovers: row.twoApprovers,
    reviewerEditableArgs: storedEditableArgs(row.reviewerEditableArgs),
    personalData: storedPersonalData(row.personalData),
    retentionSec: row.retentionSec,
    correctionSubject: row.correctionSubject,
    correctionBody: row.correctionBody,
    description: row.description,
    status: storedStatus(row.status),
  };
}

/** One changed field: its value before and after. */
export interface FieldChange {
  /** Before. */
  from: unknown;
  /** After. */
  to: unknown;
}

/** The fields whose value differs between `before` and `after` (null before: every field set on creation). */
export function diffFields(before: TToolPolicyFields | null, after: TToolPolicyFields): Partial<Record<ToolPolicyField, FieldChange>> {
  const diff: Partial<Record<ToolPolicyField, FieldChange>> = {};
  for (const field of TOOL_POLICY_FIELDS) {
    const from = before ? before[field] : null;
    const to = after[field];
    if (JSON.stringify(from) !== JSON.stringify(to)) diff[field] = { from, to };
  }
  return diff;
}

/** Classes from least to most guarded: a later one needs at least as much of a person. */
const CLASS_STRICTNESS: Record<ToolClass, number> = { PURE: 0, REVERSIBLE: 1, COMPENSATABLE: 2, IRREVERSIBLE: 3 };

/** Whether changing `field` from `from` to `to` loosens what the row guards (a stricter or neutral change does not). */
export function loosens(field: ToolPolicyField, from: TToolPolicyFields, to: TToolPolicyFields): boolean {
  switch (field) {
    case "toolClass":
      return CLASS_STRICTNESS[to.toolClass] < CLASS_STRICTNESS[from.toolClass];
    case "compensator":
      return to.compensator !== null; // another counter-action must be one the connectors run
    case "alwaysRequireApproval":
      return from.alwaysRequireApproval && !to.alwaysRequireApproval;
    case "twoApprovers":
      return from.twoApprovers === true && to.twoApprovers !== true;
    case "status":
      return to.status !== ToolStatus.DISABLED;
    case "revocationWindowSec":
      return to.revocationWindowSec !== null && (from.revocationWindowSec === null || to.revocationWindowSec > from.revocationWindowSec);
    case "revokeRoles":
      return to.revokeRoles.some((r) => !from.revokeRoles.includes(r));
    default:
      return false;
  }
}

/** What the connectors can do for a tool: the facts an edit is checked against. */
export interface ConnectorFacts {
  /** Whether an effect can be looked up by its step key. */
  lookupAvailable: boolean;
  /** Compensators some connector runs (registered with the server or declared in a manifest). */
  compensators: readonly string[];
}

/** An edit's verdict: the fields that are wrong (each with what to change) and warnings to show. */
export interface ToolPolicyCheck {
  /** Refusals, one per offending field. */
  issues: FieldIssue[];
  /** Accepted, but a person should know (shown beside the row). */
  warnings: string[];
}

function hours(seconds: number): string {
  return seconds % 3600 === 0 ? `${seconds / 3600} h` : `${Math.round(seconds / 60)} min`;
}

/**
 * Checks a row as it would stand after an edit. `current` is the row before (null: a new row). An
 * edit that loosens nothing (a stricter class, approval switched on, disabling, a shorter window,
 * words) is never refused for what the connectors cannot do; the words a person needs (an
 * irreversible tool's owner and correction template) are always required.
 */
export function checkToolPolicy(name: string, next: TToolPolicyFields, current: TToolPolicyFields | null, connectors: ConnectorFacts): ToolPolicyCheck {
  const issues: FieldIssue[] = [];
  const warnings: string[] = [];
  const connectorChecks = current === null || TOOL_POLICY_FIELDS.some((f) => JSON.stringify(current[f]) !== JSON.stringify(next[f]) && loosens(f, current, next));
  const releasable = next.toolClass === ToolClass.REVERSIBLE || next.toolClass === ToolClass.COMPENSATABLE;

  if (connectorChecks) {
    if (releasable && !next.compensator) {
      issues.push({ path: "compensator", message: `A ${next.toolClass} tool needs the compensating tool that answers it; pick one of: ${connectors.compensators.join(", ") || "(no compensator is registered yet)"}. Or make ${name} IRREVERSIBLE.` });
    } else if (releasable && next.compensator && !connectors.compensators.includes(next.compensator)) {
      issues.push({ path: "compensator", message: `No connector registers the compensator "${next.compensator}"; pick one of: ${connectors.compensators.join(", ") || "(none registered)"}, or declare it in the team's manifest first.` });
    }
    // An IRREVERSIBLE call runs only with a person's approval and an unknown outcome goes to a person: no lookup needed.
    if (releasable && !connectors.lookupAvailable) {
      issues.push({ path: "toolClass", message: `${name}'s connector cannot look an effect up by its step key, and a ${next.toolClass} tool needs that lookup to reconcile a timeout. Declare a lookup in the connector, or make the tool IRREVERSIBLE (every call held, an unknown outcome goes to a person).` });
    }
  }
  if (next.toolClass === ToolClass.IRREVERSIBLE) {
    if (!next.owner) issues.push({ path: "owner", message: `An IRREVERSIBLE tool needs an owner: the team whose queue gets its held calls and corrections.` });
    if (!next.correctionSubject || !next.correctionBody) {
      issues.push({ path: next.correctionSubject ? "correctionBody" : "correctionSubject", message: "An IRREVERSIBLE tool needs a correction template (subject and body): the only answer to its effect is a new message." });
    }
  }
  if (next.compensationArgs && !next.compensator) {
    issues.push({ path: "compensationArgs", message: "Compensation arguments need a compensating tool to go to; name the compensator, or clear the arguments." });
  }
  if (!releasable && next.compensator && next.toolClass !== ToolClass.IRREVERSIBLE) {
    issues.push({ path: "compensator", message: `A ${next.toolClass} tool has nothing to compensate; clear the compensating tool.` });
  }
  for (const role of next.revokeRoles) {
    if (!can(role, "revoke.pull")) issues.push({ path: "revokeRoles", message: `The ${role} role cannot pull revoke triggers at all; pick from: ${DEFAULT_REVOKE_ROLES.join(", ")}.` });
  }
  if (current !== null && current.status !== ToolStatus.UNREVIEWED && next.status === ToolStatus.UNREVIEWED) {
    issues.push({ path: "status", message: "Only a team's declaration makes a tool unreviewed; disable the tool instead." });
  }

  if (next.revocationWindowSec !== null && next.keyRetentionSec !== null && next.revocationWindowSec > next.keyRetentionSec) {
    warnings.push(
      `The revocation window (${hours(next.revocationWindowSec)}) is longer than the provider keeps idempotency keys (${hours(next.keyRetentionSec)}): past ${hours(next.keyRetentionSec)}, reconcile-by-lookup is the only protection against a second effect.`,
    );
  }
  if ((next.toolClass === ToolClass.REVERSIBLE || next.toolClass === ToolClass.COMPENSATABLE) && next.revocationWindowSec === null) {
    warnings.push(`No revocation window: a pull-back of any ${next.toolClass.toLowerCase()} call is outside it and becomes an escalation (the class's default is ${hours(DEFAULT_WINDOW_SEC[next.toolClass]!)}).`);
  }
  if (next.status === ToolStatus.UNREVIEWED) warnings.push("Unreviewed: every call is held for a person until an admin accepts the tool.");
  if (next.status === ToolStatus.DISABLED) warnings.push("Disabled: every new call is refused.");
  if (next.toolClass !== ToolClass.PURE && !connectors.lookupAvailable) warnings.push("No lookup by key: a timed-out call cannot be reconciled and goes to a person.");
  return { issues, warnings };
}

/** The audiences an audience rule names (comma-separated), lower-cased. */
export function audiencesOf(rule: string | null): string[] {
  return (rule ?? "")
    .split(",")
    .map((a) => a.trim().toLowerCase())
    .filter(Boolean);
}

/**
 * Fills `{{arg}}` placeholders from the call's arguments (dotted paths reach into objects); a
 * placeholder with no value stays as written, so support staff see the gap.
 */
export function fillTemplate(template: string, args: unknown): string {
  return template.replace(/\{\{\s*([A-Za-z_][\w.]*)\s*\}\}/g, (whole, path: string) => {
    const value = argAt(args, path);
    return value === undefined || value === null ? whole : typeof value === "string" ? value : JSON.stringify(value);
  });
}

/** The value at a dotted path of the call's arguments, or undefined. */
function argAt(args: unknown, path: string): unknown {
  let value: unknown = args;
  for (const part of path.split(".")) value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[part] : undefined;
  return value;
}

/**
 * The compensator's arguments a table template builds from a call's: a template that is one whole
 * placeholder (`"{{amount}}"`) takes the argument as it is (a number stays a number); any other is
 * text with its placeholders filled. Null when a placeholder names no argument of this call: no
 * compensation can be built, so the call needs a person before it runs.
 */
export function buildCompensationArgs(template: Record<string, string>, args: unknown): Record<string, unknown> | null {
  const built: Record<string, unknown> = {};
  for (const [name, text] of Object.entries(template)) {
    const whole = /^\{\{\s*([A-Za-z_][\w.]*)\s*\}\}$/.exec(text);
    if (whole) {
      const value = argAt(args, whole[1] as string);
      if (value === undefined || value === null) return null;
      built[name] = value;
      continue;
    }
    const paths = [...text.matchAll(/\{\{\s*([A-Za-z_][\w.]*)\s*\}\}/g)].map((m) => m[1] as string);
    if (paths.some((p) => argAt(args, p) === undefined || argAt(args, p) === null)) return null;
    built[name] = fillTemplate(text, args);
  }
  return built;
}
