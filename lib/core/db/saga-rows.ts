/**
 * The saga log's rows and records: JSON in and out of Prisma's columns (JsonNull for a JSON null,
 * corrupt rows refused with what was wrong), each row mapped to the record the saga store port
 * returns, and a step patch or a new intent mapped to columns. Pure: no query runs here; the store
 * (prisma-saga-store.ts) reads and writes with them.
 */
import { Prisma } from "@/generated/prisma";
import type {
  AuditEvent as AuditEventRow,
  Correction as CorrectionRow,
  Escalation as EscalationRow,
  Pivot as PivotRow,
  Run as RunRow,
  Step as StepRow,
} from "@/generated/prisma";
import {
  type AuditEventRecord,
  type CorrectionRecord,
  type EscalationRecord,
  type NewIntent,
  type PivotRecord,
  type PlanItem,
  type RunRecord,
  type StepFence,
  type StepPatch,
  type StepRecord,
} from "@/packages/client/src/saga/store";
import type { CompensationPlan, CorrectionDraft, Json } from "@/packages/client/src/saga/tools";
import type { ManualRepair, PivotEdit } from "@/packages/client/src/saga/store";
import { PIVOT_REJECTION_CODES } from "@/packages/client/src/saga/vocabulary";
import {
  CompensationState,
  CorrectionStatus,
  EscalationKind,
  EscalationStatus,
  Phase,
  PivotStatus,
  RUN_STATUSES,
  STEP_STATUSES,
  StepStatus,
  TOOL_CLASSES,
  type ToolClass,
} from "@/packages/client/src/saga/vocabulary";
import { type StepColumns } from "./step-log-sql";


// ---------------------------------------------------------------------------------------------
// JSON in and out. Records carry plain JSON; Prisma needs JsonNull for a JSON null in a required
// column and DbNull for "no value" in a nullable one.

type JsonInput = Prisma.InputJsonValue | typeof Prisma.JsonNull;
type NullableJsonInput = Prisma.InputJsonValue | typeof Prisma.DbNull;

export function jsonIn(value: Json): JsonInput {
  return value === null ? Prisma.JsonNull : value;
}

export function nullableJsonIn(value: Json | null): NullableJsonInput {
  return value === null ? Prisma.DbNull : value;
}

function compensationJson(plan: CompensationPlan | null): Json | null {
  return plan === null ? null : { tool: plan.tool, args: plan.args };
}

function correctionJson(draft: CorrectionDraft | null): Json | null {
  return draft === null ? null : { audience: [...draft.audience], subject: draft.subject, body: draft.body };
}

export function planJson(plan: readonly PlanItem[]): Json {
  return plan.map((i) => ({
    tool: i.tool,
    args: i.args,
    argsHash: i.argsHash,
    policyVersion: i.policyVersion,
    toolClass: i.toolClass,
  }));
}

/** Parsed JSON never holds `undefined`, which is all that separates Prisma's JsonValue from Json. */
export function jsonOut(value: Prisma.JsonValue): Json {
  return value as Json;
}

function corrupt(what: string): Error {
  return new Error(
    `The stored ${what} is malformed. Rows are written only by PrismaSagaStore: check for manual edits or a missing migration.`,
  );
}

function isObject(value: Prisma.JsonValue): value is Prisma.JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringsOut(value: Prisma.JsonValue, what: string): string[] {
  if (!Array.isArray(value)) throw corrupt(what);
  return value.map((v) => {
    if (typeof v !== "string") throw corrupt(what);
    return v;
  });
}

function compensationOut(value: Prisma.JsonValue): CompensationPlan | null {
  if (value === null) return null;
  if (!isObject(value) || typeof value.tool !== "string") throw corrupt("step compensation");
  return { tool: value.tool, args: jsonOut(value.args ?? null) };
}

function correctionOut(value: Prisma.JsonValue): CorrectionDraft | null {
  if (value === null) return null;
  if (!isObject(value) || typeof value.subject !== "string" || typeof value.body !== "string") {
    throw corrupt("step correction");
  }
  return { audience: stringsOut(value.audience ?? null, "correction audience"), subject: value.subject, body: value.body };
}

function planOut(value: Prisma.JsonValue): PlanItem[] {
  if (!Array.isArray(value)) throw corrupt("pivot plan");
  return value.map((item) => {
    if (
      !isObject(item) ||
      typeof item.tool !== "string" ||
      typeof item.argsHash !== "string" ||
      typeof item.policyVersion !== "number"
    ) {
      throw corrupt("pivot plan item");
    }
    return {
      tool: item.tool,
      args: jsonOut(item.args ?? null),
      argsHash: item.argsHash,
      policyVersion: item.policyVersion,
      toolClass: oneOf(TOOL_CLASSES, item.toolClass, "plan item tool class"),
    };
  });
}

/** Narrows a stored vocabulary string to its union, refusing values packages/client/src/saga does not define. */
function oneOf<T extends string>(values: readonly T[], value: unknown, what: string): T {
  if (typeof value === "string" && (values as readonly string[]).includes(value)) return value as T;
  throw corrupt(what);
}

const COMPENSATION_STATES = Object.values(CompensationState);
const PHASES = Object.values(Phase);
const PIVOT_STATUSES = Object.values(PivotStatus);
const ESCALATION_KINDS = Object.values(EscalationKind);
const ESCALATION_STATUSES = Object.values(EscalationStatus);
const CORRECTION_STATUSES = Object.values(CorrectionStatus);

// ---------------------------------------------------------------------------------------------
// Row -> record mappers.

export function toRunRecord(row: RunRow): RunRecord {
  return {
    id: row.id,
    title: row.title,
    agent: row.agent,
    onBehalfOf: row.onBehalfOf,
    metadata: jsonOut(row.metadata),
    status: oneOf(RUN_STATUSES, row.status, "run status"),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function toStepRecord(row: StepRow): StepRecord {
  return {
    id: row.id,
    runId: row.runId,
    stepIdx: row.stepIdx,
    tool: row.tool,
    toolClass: oneOf<ToolClass>(TOOL_CLASSES, row.toolClass, "step tool class"),
    stepKey: row.stepKey,
    args: jsonOut(row.args),
    argsHash: row.argsHash,
    status: oneOf(STEP_STATUSES, row.status, "step status"),
    phase: oneOf(PHASES, row.phase, "step phase"),
    policyVersion: row.policyVersion,
    approvalId: row.approvalId,
    planItemIdx: row.planItemIdx,
    externalRef: row.externalRef,
    result: row.result === null ? null : jsonOut(row.result),
    error: row.error === null ? null : jsonOut(row.error),
    compensation: compensationOut(row.compensation),
    compensationKey: row.compensationKey,
    compensationState: oneOf(COMPENSATION_STATES, row.compensationState, "step compensation state"),
    compensationRef: row.compensationRef,
    compensationRequestedAt: row.compensationRequestedAt,
    compensationConfirmedAt: row.compensationConfirmedAt,
    compensationError: row.compensationError === null ? null : jsonOut(row.compensationError),
    correction: correctionOut(row.correction),
    audience: stringsOut(row.audience, "step audience"),
    attempts: row.attempts,
    manualRepair: manualRepairOut(row.manualRepair),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** A step's manual repair; the driver's own SQL may hand the JSON column over as text. */
function manualRepairOut(value: Prisma.JsonValue | string | null | undefined): ManualRepair | null {
  if (value === null || value === undefined) return null;
  return (typeof value === "string" ? JSON.parse(value) : value) as unknown as ManualRepair;
}

export function toPivotRecord(row: PivotRow): PivotRecord {
  return {
    id: row.id,
    runId: row.runId,
    status: oneOf(PIVOT_STATUSES, row.status, "pivot status"),
    summary: row.summary,
    plan: planOut(row.plan),
    planHash: row.planHash,
    stagedStepIds: stringsOut(row.stagedStepIds, "pivot staged step ids"),
    deadline: row.deadline,
    decidedBy: row.decidedBy,
    decidedAt: row.decidedAt,
    reason: row.reason,
    reasonCode: row.reasonCode === null ? null : oneOf(PIVOT_REJECTION_CODES, row.reasonCode, "pivot rejection code"),
    edits: row.edits === null ? [] : (jsonOut(row.edits) as unknown as PivotEdit[]),
    createdAt: row.createdAt,
  };
}

export function toEscalationRecord(row: EscalationRow): EscalationRecord {
  return {
    id: row.id,
    runId: row.runId,
    stepId: row.stepId,
    kind: oneOf(ESCALATION_KINDS, row.kind, "escalation kind"),
    status: oneOf(ESCALATION_STATUSES, row.status, "escalation status"),
    title: row.title,
    detail: jsonOut(row.detail),
    owner: row.owner,
    dedupeKey: row.dedupeKey,
    claimedBy: row.claimedBy,
    resolution: row.resolution === null ? null : jsonOut(row.resolution),
    resolvedBy: row.resolvedBy,
    resolvedAt: row.resolvedAt,
    createdAt: row.createdAt,
  };
}

export function toCorrectionRecord(row: CorrectionRow): CorrectionRecord {
  return {
    id: row.id,
    runId: row.runId,
    stepId: row.stepId,
    audience: stringsOut(row.audience, "correction audience"),
    rank: row.rank,
    status: oneOf(CORRECTION_STATUSES, row.status, "correction status"),
    subject: row.subject,
    body: row.body,
    createdAt: row.createdAt,
  };
}

export function toAuditEventRecord(row: AuditEventRow): AuditEventRecord {
  return {
    seq: row.seq,
    scope: row.scope,
    runId: row.runId,
    stepId: row.stepId,
    type: row.type,
    actor: row.actor,
    data: jsonOut(row.data),
    at: row.at,
    prevHash: row.prevHash,
    hash: row.hash,
  };
}

/** The columns a step transition writes, as plain values; keys left undefined in the patch stay unchanged. */
export function stepPatchColumns(patch: StepPatch): StepColumns {
  const columns: StepColumns = {
    status: patch.status,
    args: patch.args,
    argsHash: patch.argsHash,
    phase: patch.phase,
    policyVersion: patch.policyVersion,
    approvalId: patch.approvalId,
    planItemIdx: patch.planItemIdx,
    externalRef: patch.externalRef,
    result: patch.result,
    error: patch.error,
    compensation: patch.compensation === undefined ? undefined : compensationJson(patch.compensation),
    correction: patch.correction === undefined ? undefined : correctionJson(patch.correction),
    audience: patch.audience === undefined ? undefined : [...patch.audience],
    compensationState: patch.compensationState,
    compensationRef: patch.compensationRef,
    compensationRequestedAt: patch.compensationRequestedAt,
    compensationConfirmedAt: patch.compensationConfirmedAt,
    compensationError: patch.compensationError,
    attempts: patch.attempts,
  };
  for (const key of Object.keys(columns) as (keyof StepColumns)[]) if (columns[key] === undefined) delete columns[key];
  return columns;
}

/** A new intent's full row. */
export function intentRow(intent: NewIntent, now: Date): StepRow {
  return {
    id: intent.id,
    runId: intent.runId,
    stepIdx: intent.stepIdx,
    tool: intent.tool,
    toolClass: intent.toolClass,
    stepKey: intent.stepKey,
    args: intent.args,
    argsHash: intent.argsHash,
    status: StepStatus.INTENDED,
    phase: intent.phase,
    policyVersion: intent.policyVersion,
    approvalId: intent.approvalId,
    planItemIdx: intent.planItemIdx,
    externalRef: null,
    result: null,
    error: null,
    compensation: compensationJson(intent.compensation),
    compensationKey: intent.compensationKey,
    compensationState: CompensationState.NONE,
    compensationRef: null,
    compensationRequestedAt: null,
    compensationConfirmedAt: null,
    compensationError: null,
    correction: correctionJson(intent.correction),
    audience: [...intent.audience],
    attempts: 0,
    manualRepair: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** Whether a step transition is an outcome (out of INTENDED), the write relaxed durability does not flush. */
export function isOutcome(fence: StepFence, patch: StepPatch): boolean {
  return fence.status?.length === 1 && fence.status[0] === StepStatus.INTENDED && patch.status !== undefined && patch.status !== StepStatus.INTENDED;
}

/**
 * Ids that key a query. Prisma drops `undefined` filters, so a missing id from an untyped caller
 * would otherwise turn "update this row" into "update every row" (or "list this run" into "list all").
 */
export function isId(value: unknown): value is string {
  return typeof value === "string" && value.length > 0;
}
