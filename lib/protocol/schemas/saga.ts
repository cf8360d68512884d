/**
 * Wire formats of the saga log over HTTP: the store port's records with dates as ISO strings. The
 * compile-time checks at the bottom keep them in step with lib/saga/store.ts.
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
} from "@/lib/saga/store";
import type { Json } from "@/lib/saga/tools";
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
} from "@/lib/saga/vocabulary";

const values = <T extends Record<string, string>>(o: T) => Object.values(o) as [T[keyof T], ...T[keyof T][]];

/** Any JSON value. */
/** Any JSON value (named, so the OpenAPI document refers to one definition instead of repeating it). */
export const JsonSchema: z.ZodType<Json> = z.json().meta({ id: "Json", description: "Any JSON value." }) as z.ZodType<Json>;
/** An ISO 8601 timestamp. */
export const IsoDate = z.iso.datetime({ offset: true });
/** A 32-hex step or compensation key. */
export const KeySchema = z.string().regex(/^[0-9a-f]{32}$/, "must be 32 lower-case hex characters");
/** An id with a prefix (`run_...`). */
export const idOf = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9]{1,64}$`), `must be a ${prefix}_ id`);

export const ToolClassSchema = z.enum(values(ToolClass));
export const StepStatusSchema = z.enum(values(StepStatus));
export const RunStatusSchema = z.enum(values(RunStatus));
export const PhaseSchema = z.enum(values(Phase));
export const CompensationStateSchema = z.enum(values(CompensationState));
export const PivotStatusSchema = z.enum(values(PivotStatus));
export const EscalationKindSchema = z.enum(values(EscalationKind));
export const EscalationStatusSchema = z.enum(values(EscalationStatus));
export const CorrectionStatusSchema = z.enum(values(CorrectionStatus));
/** Why a pivot was rejected, as a code the agent can act on (lib/saga/vocabulary.ts). */
export const PivotRejectionCodeSchema = z.enum(PIVOT_REJECTION_CODES);

/** A manual repair recorded on a step (lib/saga/store.ts ManualRepair). */
export const ManualRepairWire = z.object({
  repairedBy: z.string(),
  repairedAt: IsoDate,
  repairRef: z.string().nullable(),
  note: z.string(),
  escalationId: z.string(),
});

/** A reviewer's edit of a plan item before deciding (lib/saga/store.ts PivotEdit). */
export const PivotEditWire = z.object({
  itemIdx: z.number().int().nonnegative(),
  tool: z.string(),
  argsBefore: JsonSchema,
  argsAfter: JsonSchema,
  argsHashBefore: z.string(),
  argsHashAfter: z.string(),
  planHashBefore: z.string(),
  planHashAfter: z.string(),
  editedBy: z.string(),
  editedAt: IsoDate,
  note: z.string().nullable(),
});

export const CompensationPlanSchema = z.object({ tool: z.string().min(1), args: JsonSchema });
export const CorrectionDraftSchema = z.object({ audience: z.array(z.string()), subject: z.string(), body: z.string() });

export const RunWire = z.object({
  id: z.string(),
  title: z.string(),
  agent: z.string(),
  onBehalfOf: z.string().nullable(),
  metadata: JsonSchema,
  status: RunStatusSchema,
  createdAt: IsoDate,
  updatedAt: IsoDate,
});

export const StepWire = z.object({
  id: z.string(),
  runId: z.string(),
  stepIdx: z.number().int().nonnegative(),
  tool: z.string(),
  toolClass: ToolClassSchema,
  stepKey: z.string(),
  args: JsonSchema,
  argsHash: z.string(),
  status: StepStatusSchema,
  phase: PhaseSchema,
  policyVersion: z.number().int(),
  approvalId: z.string().nullable(),
  planItemIdx: z.number().int().nullable(),
  externalRef: z.string().nullable(),
  result: JsonSchema.nullable(),
  error: JsonSchema.nullable(),
  compensation: CompensationPlanSchema.nullable(),
  compensationKey: z.string().nullable(),
  compensationState: CompensationStateSchema,
  compensationRef: z.string().nullable(),
  compensationRequestedAt: IsoDate.nullable(),
  compensationConfirmedAt: IsoDate.nullable(),
  compensationError: JsonSchema.nullable(),
  correction: CorrectionDraftSchema.nullable(),
  audience: z.array(z.string()),
  attempts: z.number().int(),
  /** Absent from servers that predate manual repairs. */
  manualRepair: ManualRepairWire.nullable().optional(),
  createdAt: IsoDate,
  updatedAt: IsoDate,
});

export const PlanItemWire = z.object({
  tool: z.string(),
  args: JsonSchema,
  argsHash: z.string(),
  policyVersion: z.number().int(),
  toolClass: ToolClassSchema,
});

export const PivotWire = z.object({
  id: z.string(),
  runId: z.string(),
  status: PivotStatusSchema,
  summary: z.string(),
  plan: z.array(PlanItemWire),
  planHash: z.string(),
  stagedStepIds: z.array(z.string()),
  deadline: IsoDate.nullable(),
  decidedBy: z.string().nullable(),
  decidedAt: IsoDate.nullable(),
  reason: z.string().nullable(),
  /** A rejection's code for the agent (absent from servers that predate it). */
  reasonCode: PivotRejectionCodeSchema.nullable().optional(),
  /** Reviewers' edits before the decision: `plan` is already the edited plan. */
  edits: z.array(PivotEditWire).optional(),
  createdAt: IsoDate,
});

export const EscalationWire = z.object({
  id: z.string(),
  runId: z.string(),
  stepId: z.string().nullable(),
  kind: EscalationKindSchema,
  status: EscalationStatusSchema,
  title: z.string(),
  detail: JsonSchema,
  owner: z.string().nullable(),
  dedupeKey: z.string(),
  claimedBy: z.string().nullable(),
  resolution: JsonSchema.nullable(),
  resolvedBy: z.string().nullable(),
  resolvedAt: IsoDate.nullable(),
  createdAt: IsoDate,
});

export const CorrectionWire = z.object({
  id: z.string(),
  runId: z.string(),
  stepId: z.string(),
  audience: z.array(z.string()),
  rank: z.number().int(),
  status: CorrectionStatusSchema,
  subject: z.string(),
  body: z.string(),
  createdAt: IsoDate,
});

export const AuditEventWire = z.object({
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
  data: JsonSchema,
  /** When, by the database clock (UTC). */
  at: IsoDate,
  /** The hash of the previous link of its chain (64 zeros for the first link). */
  prevHash: z.string(),
  /** sha256 over prevHash and this event's content. */
  hash: z.string(),
});

export const AuditBody = z.object({ type: z.string().regex(/^[a-z_]+(\.[a-z_]+)*$/).max(64), data: JsonSchema.optional() });

type Wire<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;
// Compile-time: each wire schema has exactly the record's fields.
const _checks: [
  SameKeys<z.infer<typeof RunWire>, Wire<RunRecord>>,
  SameKeys<z.infer<typeof StepWire>, Wire<StepRecord>>,
  SameKeys<z.infer<typeof PivotWire>, Wire<PivotRecord>>,
  SameKeys<z.infer<typeof PlanItemWire>, PlanItem>,
  SameKeys<z.infer<typeof EscalationWire>, Wire<EscalationRecord>>,
  SameKeys<z.infer<typeof CorrectionWire>, Wire<CorrectionRecord>>,
  SameKeys<z.infer<typeof AuditEventWire>, Wire<AuditEventRecord>>,
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
