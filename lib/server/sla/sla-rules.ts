/**
 * SLA rules: how long an item may wait for people. A rule names a target (`pivot`,
 * `kind:<EscalationKind>` or `tool:<name>`); an item takes its tool's rule when there is one, else its
 * kind's, else the default below. Each rule has three points, all measured from the item's creation on
 * the database clock: a reminder (a fraction of the SLA), the breach (the SLA: the backup team is told),
 * and for pivots and held calls an expiry, whose action is always to reject: nothing is ever approved
 * because nobody answered.
 */
import * as z from "zod";
import type { PrismaClient, SlaRule } from "@/generated/prisma";
import { EscalationKind } from "@/packages/client/src/saga/vocabulary";

/** One rule as lib/server/sla applies it. */
export interface SlaPolicy {
  /** Where it came from: the rule's target, or `default:<target>`. */
  source: string;
  /** Seconds an item may wait before it is breached. */
  slaSec: number;
  /** The reminder, as a fraction of slaSec. */
  reminderAt: number;
  /** The team a breach goes to (null: the breach is announced to the owners again). */
  backupTeam: string | null;
  /** Seconds after which it is rejected; null: it never expires. */
  expireSec: number | null;
}

const HOUR = 3600;

/** What applies without a rule: a working day's patience for approvals, less for repairs. */
export const DEFAULT_SLAS: Record<"pivot" | EscalationKind, Omit<SlaPolicy, "source">> = {
  pivot: { slaSec: 4 * HOUR, reminderAt: 0.5, backupTeam: null, expireSec: 24 * HOUR },
  [EscalationKind.APPROVAL_REQUIRED]: { slaSec: 4 * HOUR, reminderAt: 0.5, backupTeam: null, expireSec: 24 * HOUR },
  [EscalationKind.COMPENSATION_FAILED]: { slaSec: 2 * HOUR, reminderAt: 0.5, backupTeam: null, expireSec: null },
  [EscalationKind.OUTCOME_UNKNOWN]: { slaSec: 2 * HOUR, reminderAt: 0.5, backupTeam: null, expireSec: null },
  [EscalationKind.STUCK_AFTER_PIVOT]: { slaSec: 4 * HOUR, reminderAt: 0.5, backupTeam: null, expireSec: null },
  [EscalationKind.REVOKE_OUT_OF_WINDOW]: { slaSec: 24 * HOUR, reminderAt: 0.5, backupTeam: null, expireSec: null },
};

/** Kinds whose expiry has a safe default action (reject the held call); the others only breach. */
const EXPIRING_KINDS: ReadonlySet<string> = new Set([EscalationKind.APPROVAL_REQUIRED]);

/** The fields of an SLA rule as an admin sets it. */
export const ZSlaRuleFields = z.object({
  target: z
    .string()
    .trim()
    .regex(/^(pivot|kind:[A-Z_]+|tool:[\w.-]+)$/, "use pivot, kind:<ESCALATION_KIND> or tool:<tool name>")
    .refine((t) => !t.startsWith("kind:") || t.slice(5) in EscalationKind, { message: `the kind must be one of ${Object.values(EscalationKind).join(", ")}` }),
  slaSec: z.number().int().min(1).max(30 * 24 * HOUR),
  reminderAt: z.number().gt(0).lt(1),
  backupTeam: z.string().trim().min(1).max(120).nullable(),
  expireSec: z.number().int().min(1).max(90 * 24 * HOUR).nullable(),
});

/** The expiry may not come before the SLA (a rule would reject before anyone was told). */
export function expiryAfterSla(r: { slaSec: number; expireSec: number | null }): boolean {
  return r.expireSec === null || r.expireSec >= r.slaSec;
}
const EXPIRY_MESSAGE = { path: ["expireSec"], message: "the expiry must not come before the SLA" };

/** An SLA rule as an admin sets it. */
export const ZSlaRuleInput = ZSlaRuleFields.refine(expiryAfterSla, EXPIRY_MESSAGE);
/** An SLA rule as an admin sets it, or removes it. */
export const ZSaveSlaRuleRequest = ZSlaRuleFields.extend({ remove: z.boolean().default(false) }).refine(expiryAfterSla, EXPIRY_MESSAGE);
/** An SLA rule as an admin sets it. */
export type TSlaRuleInput = z.infer<typeof ZSlaRuleInput>;

/** The rules in force: every SlaRule row by target. */
export async function loadSlaRules(prisma: PrismaClient): Promise<Map<string, SlaRule>> {
  return new Map((await prisma.slaRule.findMany()).map((r) => [r.target, r]));
}

function fromRow(row: SlaRule): SlaPolicy {
  return { source: row.target, slaSec: row.slaSec, reminderAt: row.reminderAt, backupTeam: row.backupTeam, expireSec: row.expireSec };
}

/** The policy of an escalation of `kind` about `tool` (its tool's rule, else its kind's, else the default). */
export function escalationSla(rules: ReadonlyMap<string, SlaRule>, kind: EscalationKind, tool: string | null): SlaPolicy {
  const row = (tool ? rules.get(`tool:${tool}`) : undefined) ?? rules.get(`kind:${kind}`);
  const policy = row ? fromRow(row) : { source: `default:kind:${kind}`, ...DEFAULT_SLAS[kind] };
  return EXPIRING_KINDS.has(kind) ? policy : { ...policy, expireSec: null };
}

/**
 * The policy of a pivot: the `pivot` rule, made stricter by the rule of any tool in its plan (a plan
 * that sends a customer email waits no longer than send_email's rule allows).
 */
export function pivotSla(rules: ReadonlyMap<string, SlaRule>, planTools: readonly string[]): SlaPolicy {
  const base = rules.get("pivot");
  let policy: SlaPolicy = base ? fromRow(base) : { source: "default:pivot", ...DEFAULT_SLAS.pivot };
  for (const tool of new Set(planTools)) {
    const row = rules.get(`tool:${tool}`);
    if (row && row.slaSec < policy.slaSec) policy = { ...fromRow(row), expireSec: row.expireSec ?? policy.expireSec };
  }
  return policy;
}

/** The three points of an item created at `createdAt` (a pivot's own deadline can bring its expiry forward). */
export function slaPoints(policy: SlaPolicy, createdAt: Date, deadline: Date | null = null): { reminderAt: Date; breachAt: Date; expireAt: Date | null } {
  const t = createdAt.getTime();
  const expiry = policy.expireSec === null ? null : t + policy.expireSec * 1000;
  const byDeadline = deadline ? deadline.getTime() : null;
  const expireAt = expiry === null ? null : new Date(byDeadline !== null ? Math.min(expiry, byDeadline) : expiry);
  return { reminderAt: new Date(t + Math.round(policy.slaSec * policy.reminderAt * 1000)), breachAt: new Date(t + policy.slaSec * 1000), expireAt };
}
