/**
 * Wire formats of the saga log over HTTP: the store port's records with dates as ISO strings. The
 * compile-time checks at the bottom keep them in step with packages/client/src/saga/store.ts.
 */
import { z } from "zod";
import type {
  AuditEventRecord,
  CorrectionRecord,
  EscalationRecord,
  PivotRecord,
  PlanItem,
  RunRecord,
  StepRecord,
} from "../../saga/store";
import type { Json } from "../../saga/tools";
import { StepStanding } from "../../saga/step-standing";
import {
  CompensationState,
  CorrectionStatus,
  EscalationKind,
  EscalationStatus,
  Phase,
  PIVOT_REJECTION_CODES,
  PivotStatus,
  RunStatus,
  StepStatus,
  ToolClass,
  ToolStatus,
} from "../../saga/vocabulary";

const values = <T extends Record<string, string>>(o: T) => Object.values(o) as [T[keyof T], ...T[keyof T][]];

/** Any JSON value. */
/** Any JSON value (named, so the OpenAPI document refers to one definition instead of repeating it). */
export const ZJson: z.ZodType<Json> = z.json().meta({ id: "Json", description: "Any JSON value." }) as z.ZodType<Json>;
/** An ISO 8601 timestamp. */
export const ZIsoDate = z.iso.datetime({ offset: true });
/** A 32-hex step or compensation key. */
export const ZKey = z.string().regex(/^[0-9a-f]{32}$/, "must be 32 lower-case hex characters");
/** An id with a prefix (`run_...`). */
export const idOf = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9]{1,64}$`), `must be a ${prefix}_ id`);

export const ZToolClass = z.enum(values(ToolClass));
export const ZToolStatus = z.enum(values(ToolStatus));
export const ZStepStatus = z.enum(values(StepStatus));
/** Where a step stands for a person (packages/client/src/saga/step-standing.ts): its status, or REPAIRED_BY_HAND. */
export const ZStepStanding = z.enum(values(StepStanding));
export const ZRunStatus = z.enum(values(RunStatus));
export const ZPhase = z.enum(values(Phase));
export const ZCompensationState = z.enum(values(CompensationState));
export const ZPivotStatus = z.enum(values(PivotStatus));
export const ZEscalationKind = z.enum(values(EscalationKind));
export const ZEscalationStatus = z.enum(values(EscalationStatus));
export const ZCorrectionStatus = z.enum(values(CorrectionStatus));
/** Why a pivot was rejected, as a code the agent can act on (packages/client/src/saga/vocabulary.ts). */
export const ZPivotRejectionCode = z.enum(PIVOT_REJECTION_CODES);

/** A manual repair recorded on a step (packages/client/src/saga/store.ts ManualRepair). */
export const ZManualRepairWire = z.object({
  repairedBy: z.string(),
  repairedAt: ZIsoDate,
  repairRef: z.string().nullable(),
  note: z.string(),
  escalationId: z.string(),
});

/** A reviewer's edit of a plan item before deciding (packages/client/src/saga/store.ts PivotEdit). */
export const ZPivotEditWire = z.object({
  itemIdx: z.number().int().nonnegative(),
  tool: z.string(),
  argsBefore: ZJson,
  argsAfter: ZJson,
  argsHashBefore: z.string(),
  argsHashAfter: z.string(),
  planHashBefore: z.string(),
  planHashAfter: z.string(),
  editedBy: z.string(),
  editedAt: ZIsoDate,
  note: z.string().nullable(),
});

export const ZCompensationPlan = z.object({ tool: z.string().min(1), args: ZJson });
export const ZCorrectionDraft = z.object({ audience: z.array(z.string()), subject: z.string(), body: z.string() });

export const ZRunWire = z.object({
  id: z.string(),
  title: z.string(),
  agent: z.string(),
  onBehalfOf: z.string().nullable(),
  metadata: ZJson,
  status: ZRunStatus,
  createdAt: ZIsoDate,
  updatedAt: ZIsoDate,
});

export const ZStepWire = z.object({
  id: z.string(),
  runId: z.string(),
  stepIdx: z.number().int().nonnegative(),
  tool: z.string(),
  toolClass: ZToolClass,
  stepKey: z.string(),
  args: ZJson,
  argsHash: z.string(),
  status: ZStepStatus,
  phase: ZPhase,
  policyVersion: z.number().int(),
  approvalId: z.string().nullable(),
  planItemIdx: z.number().int().nullable(),
  externalRef: z.string().nullable(),
  result: ZJson.nullable(),
  error: ZJson.nullable(),
  compensation: ZCompensationPlan.nullable(),
  compensationKey: z.string().nullable(),
  compensationState: ZCompensationState,
  compensationRef: z.string().nullable(),
  compensationRequestedAt: ZIsoDate.nullable(),
  compensationConfirmedAt: ZIsoDate.nullable(),
  compensationError: ZJson.nullable(),
  correction: ZCorrectionDraft.nullable(),
  audience: z.array(z.string()),
  attempts: z.number().int(),
  /** Absent from servers that predate manual repairs. */
  manualRepair: ZManualRepairWire.nullable().optional(),
  createdAt: ZIsoDate,
  updatedAt: ZIsoDate,
});

export const ZPlanItemWire = z.object({
  tool: z.string(),
  args: ZJson,
  argsHash: z.string(),
  policyVersion: z.number().int(),
  toolClass: ZToolClass,
});

export const ZPivotWire = z.object({
  id: z.string(),
  runId: z.string(),
  status: ZPivotStatus,
  summary: z.string(),
  plan: z.array(ZPlanItemWire),
  planHash: z.string(),
  stagedStepIds: z.array(z.string()),
  deadline: ZIsoDate.nullable(),
  decidedBy: z.string().nullable(),
  decidedAt: ZIsoDate.nullable(),
  reason: z.string().nullable(),
  /** A rejection's code for the agent (absent from servers that predate it). */
  reasonCode: ZPivotRejectionCode.nullable().optional(),
  /** Reviewers' edits before the decision: `plan` is already the edited plan. */
  edits: z.array(ZPivotEditWire).optional(),
  createdAt: ZIsoDate,
});

export const ZEscalationWire = z.object({
  id: z.string(),
  runId: z.string(),
  stepId: z.string().nullable(),
  kind: ZEscalationKind,
  status: ZEscalationStatus,
  title: z.string(),
  detail: ZJson,
  owner: z.string().nullable(),
  dedupeKey: z.string(),
  claimedBy: z.string().nullable(),
  resolution: ZJson.nullable(),
  resolvedBy: z.string().nullable(),
  resolvedAt: ZIsoDate.nullable(),
  createdAt: ZIsoDate,
});

export const ZCorrectionWire = z.object({
  id: z.string(),
  runId: z.string(),
  stepId: z.string(),
  audience: z.array(z.string()),
  rank: z.number().int(),
  status: ZCorrectionStatus,
  subject: z.string(),
  body: z.string(),
  createdAt: ZIsoDate,
});

export const ZAuditEventWire = z.object({
  /** Its position in its chain, from 1. */
  seq: z.number().int(),
  /** The hash chain it belongs to (`run:<id>`, `user:<id>`, `agent-token:<id>`, `tool:<name>`). */
  scope: z.string(),
  /** The run, for events of a run. */
  runId: z.string().nullable(),
  /** The step, when the event is about one. */
  stepId: z.string().nullable(),
  /** What happened (`step.confirmed`). */
  type: z.string(),
  /** Who caused it (`user:ada@example.com`, `agent:support-agent`, `system:worker`). */
  actor: z.string(),
  /** What changed, as recorded (the JSON it was hashed as). */
  data: ZJson,
  /** When, by the database clock (UTC). */
  at: ZIsoDate,
  /** The hash of the previous link of its chain (64 zeros for the first link). */
  prevHash: z.string(),
  /** sha256 over prevHash and this event's content. */
  hash: z.string(),
});

export const ZAuditBody = z.object({ type: z.string().regex(/^[a-z_]+(\.[a-z_]+)*$/).max(64), data: ZJson.optional() });

type Wire<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;
// Compile-time: each wire schema has exactly the record's fields.
const _checks: [
  SameKeys<z.infer<typeof ZRunWire>, Wire<RunRecord>>,
  SameKeys<z.infer<typeof ZStepWire>, Wire<StepRecord>>,
  SameKeys<z.infer<typeof ZPivotWire>, Wire<PivotRecord>>,
  SameKeys<z.infer<typeof ZPlanItemWire>, PlanItem>,
  SameKeys<z.infer<typeof ZEscalationWire>, Wire<EscalationRecord>>,
  SameKeys<z.infer<typeof ZCorrectionWire>, Wire<CorrectionRecord>>,
  SameKeys<z.infer<typeof ZAuditEventWire>, Wire<AuditEventRecord>>,
] = [true, true, true, true, true, true, true];
void _checks;

/** Dates of a record to ISO strings, for the wire. */
export function toWire<T extends object>(record: T): Wire<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) out[k] = v instanceof Date ? v.toISOString() : v;
  return out as Wire<T>;
}

/** ISO strings of the named fields back to Dates, from the wire. */
export function fromWire<T>(wire: object, dateFields: readonly string[]): T {
  const out: Record<string, unknown> = { ...wire };
  for (const f of dateFields) {
    const v = out[f];
    if (typeof v === "string") out[f] = new Date(v);
  }
  return out as T;
}

/** Date fields per record, for fromWire. */
export const DATE_FIELDS = {
  run: ["createdAt", "updatedAt"],
  step: ["createdAt", "updatedAt", "compensationRequestedAt", "compensationConfirmedAt"],
  pivot: ["deadline", "decidedAt", "createdAt"],
  escalation: ["resolvedAt", "createdAt"],
  correction: ["createdAt"],
  audit: ["at"],
} as const;
