/**
 * The saga store port. The engine talks to persistence only through this interface; the in-memory
 * store (tests) and the Prisma store (the app) implement it, and nothing else does: an agent in
 * another process talks to the server through the commands of agent-port.ts (`SagaServer`).
 *
 * Contract for every implementation:
 * - each mutating method is one atomic transaction that also appends its audit event;
 * - fenced updates (`expect`) change nothing and return null when the row moved on;
 * - unique constraints, not application checks, carry the invariants: one row per step key,
 *   one row per (run, stepIdx), one escalation per dedupe key, one correction per step.
 */
import type { TableTool } from "./tool-table";
import type { CompensationPlan, CorrectionDraft, Json } from "./tools";
import type {
  CompensationState,
  CorrectionStatus,
  EscalationKind,
  EscalationStatus,
  Phase,
  PivotRejectionCode,
  PivotStatus,
  RunStatus,
  StepStatus,
  ToolClass,
} from "./vocabulary";

/** Who did something: an agent token, a person, or the system itself. */
export interface Actor {
  /** Kind of actor. */
  type: "agent" | "user" | "system";
  /** Agent name, user id/email, or the system component. */
  id: string;
}

/** Renders an actor for the audit log (`user:ana@example.com`). */
export function actorLabel(actor: Actor): string {
  return `${actor.type}:${actor.id}`;
}

/** The audit event a mutation appends in the same transaction. */
export interface AuditInput {
  /** Event type (`step.intended`, `pivot.approved`). */
  type: string;
  /** Who caused it. */
  actor: Actor;
  /** What changed, for people reading the log. */
  data?: Json;
}

/** One run of an agent. */
export interface RunRecord {
  /** `run_...` */
  id: string;
  /** What the run is for, in words. */
  title: string;
  /** The agent (or its token's name) running it. */
  agent: string;
  /** The customer or user the agent acts for. */
  onBehalfOf: string | null;
  /** Free-form data from the harness. */
  metadata: Json;
  /** Where the run stands. */
  status: RunStatus;
  /** Created (database clock). */
  createdAt: Date;
  /**
   * Last changed (database clock), and the run row's version: every change makes it strictly later
   * (see `nextRunVersion`), which is what `IntentGuard.runUpdatedAt` compares.
   */
  updatedAt: Date;
}

/**
 * The version a run row takes when it changes: `now`, or one millisecond after its current version
 * when that is not earlier (two changes in one millisecond, or a clock behind the row). Versions only
 * grow, so a guard holding an older version can never match again.
 */
export function nextRunVersion(current: Date, now: Date): Date {
  return now.getTime() > current.getTime() ? now : new Date(current.getTime() + 1);
}

/** Input for a new run. */
export type NewRun = Pick<RunRecord, "id" | "title" | "agent" | "onBehalfOf" | "metadata">;

/** One row of the saga log. */
export interface StepRecord {
  /** `stp_...` */
  id: string;
  /** The run. */
  runId: string;
  /** Harness-assigned position in the run, from 0. */
  stepIdx: number;
  /** Tool name. */
  tool: string;
  /** Tool class at dispatch. */
  toolClass: ToolClass;
  /** sha256(runId:stepIdx:tool), 32 hex; unique. */
  stepKey: string;
  /** Arguments of the latest attempt (a reworded retry replaces them; the key stays). */
  args: Json;
  /** Hash of `args`, to match approved plan items. */
  argsHash: string;
  /** Where the row stands. */
  status: StepStatus;
  /** Staging, commit, or individually approved. */
  phase: Phase;
  /** The tool's policy version at dispatch. */
  policyVersion: number;
  /** The pivot or escalation that approved this call, if any. */
  approvalId: string | null;
  /** Index of the approved plan item this call consumed. */
  planItemIdx: number | null;
  /** The external system's id for the effect. */
  externalRef: string | null;
  /** What the call returned (or reconcile found). */
  result: Json | null;
  /** Why it failed or is unknown. */
  error: Json | null;
  /** The pre-written compensation, stored before the call. */
  compensation: CompensationPlan | null;
  /** sha256(runId:stepIdx:compensate:tool). */
  compensationKey: string | null;
  /** Requested is not confirmed. */
  compensationState: CompensationState;
  /** The compensation's external id (refund id). */
  compensationRef: string | null;
  /** When the compensation was sent. */
  compensationRequestedAt: Date | null;
  /** When reading back confirmed it. */
  compensationConfirmedAt: Date | null;
  /** Why the compensation failed, and what is still out there. */
  compensationError: Json | null;
  /** The correction drafted at dispatch (irreversible tools). */
  correction: CorrectionDraft | null;
  /** Who could see the effect. */
  audience: string[];
  /** Calls made under this key (retries included). */
  attempts: number;
  /**
   * A person answered the effect by hand (a failed compensation repaired in the provider's console).
   * Null or absent: never repaired by hand.
   */
  manualRepair?: ManualRepair | null;
  /** Created (database clock). */
  createdAt: Date;
  /** Last changed (database clock). */
  updatedAt: Date;
}

/** What a person recorded after answering a step's effect by hand. */
export interface ManualRepair {
  /** Who did it (the user's email). */
  repairedBy: string;
  /** When it was recorded (ISO, database clock). */
  repairedAt: string;
  /** The repair's id in the external system (a refund made in the console), if any. */
  repairRef: string | null;
  /** What was done, in the person's words. */
  note: string;
  /** The escalation the repair resolved. */
  escalationId: string;
}

/** A new INTENDED row. */
export type NewIntent = Pick<
  StepRecord,
  | "id"
  | "runId"
  | "stepIdx"
  | "tool"
  | "toolClass"
  | "stepKey"
  | "args"
  | "argsHash"
  | "phase"
  | "policyVersion"
  | "approvalId"
  | "planItemIdx"
  | "compensation"
  | "compensationKey"
  | "correction"
  | "audience"
>;

/** Fields a transition may change; a field left out (or `undefined`) stays as it is. */
export type StepPatch = Partial<
  Pick<
    StepRecord,
    | "status"
    | "args"
    | "argsHash"
    | "phase"
    | "policyVersion"
    | "approvalId"
    | "planItemIdx"
    | "externalRef"
    | "result"
    | "error"
    | "compensation"
    | "correction"
    | "audience"
    | "compensationState"
    | "compensationRef"
    | "compensationRequestedAt"
    | "compensationConfirmedAt"
    | "compensationError"
    | "attempts"
  >
>;

/** The fence of a step transition: the update applies only while the row is in one of these states. */
export interface StepFence {
  /** Allowed current statuses. */
  status?: readonly StepStatus[];
  /** Allowed current compensation states. */
  compensationState?: readonly CompensationState[];
  /** Only a step of one of these tools (an API caller's token scope). */
  tools?: readonly string[];
  /** Only a step whose run was started by this agent. */
  runAgent?: string;
  /** Only while this agent token (its id) exists and is not revoked (see IntentGuard.activeToken). */
  activeToken?: string;
}

/** One call of a pivot's commit plan. */
export interface PlanItem {
  /** Tool name. */
  tool: string;
  /** Exact arguments the reviewer approves. */
  args: Json;
  /** Their hash. */
  argsHash: string;
  /** The tool's policy version when the plan was made. */
  policyVersion: number;
  /** The tool's class (irreversible items are highlighted). */
  toolClass: ToolClass;
}

/** One human approval point of a run. */
export interface PivotRecord {
  /** `piv_...` */
  id: string;
  /** The run. */
  runId: string;
  /** Decision state. */
  status: PivotStatus;
  /** The agent's summary of the proposal. */
  summary: string;
  /** The commit plan. */
  plan: PlanItem[];
  /** Hash of the plan and policy versions; a decision must name it. */
  planHash: string;
  /** Staged steps the reviewer sees (ids, in order). */
  stagedStepIds: string[];
  /** When the staged effects stop being releasable (an authorisation hold expires). */
  deadline: Date | null;
  /** Who decided. */
  decidedBy: string | null;
  /** When. */
  decidedAt: Date | null;
  /** Why (rejections carry it back to the agent). */
  reason: string | null;
  /** A rejection's reason as a code the agent can act on; null or absent for approvals and older rows. */
  reasonCode?: PivotRejectionCode | null;
  /** Reviewers' edits of plan items before the decision, oldest first; empty or absent: the agent's own plan. */
  edits?: PivotEdit[];
  /** Requested (database clock). */
  createdAt: Date;
}

/** A reviewer's change of one plan item's arguments before deciding: the plan (and its hash) become the edited ones. */
export interface PivotEdit {
  /** The plan item's position. */
  itemIdx: number;
  /** Its tool (edits never change the tool). */
  tool: string;
  /** The arguments before and after. */
  argsBefore: Json;
  argsAfter: Json;
  /** Their hashes (the gate matches the after hash). */
  argsHashBefore: string;
  argsHashAfter: string;
  /** The plan hash the reviewer loaded, and the plan hash after the edit. */
  planHashBefore: string;
  planHashAfter: string;
  /** Who edited (the user's email). */
  editedBy: string;
  /** When (ISO, database clock). */
  editedAt: string;
  /** Why, for the agent and the audit log. */
  note: string | null;
}

/** A new pivot request. */
export type NewPivot = Pick<PivotRecord, "id" | "runId" | "summary" | "plan" | "planHash" | "stagedStepIds" | "deadline">;

/** An item in the escalation queue. */
export interface EscalationRecord {
  /** `esc_...` */
  id: string;
  /** The run. */
  runId: string;
  /** The step concerned, if any. */
  stepId: string | null;
  /** What kind of decision is needed. */
  kind: EscalationKind;
  /** Open, claimed or resolved. */
  status: EscalationStatus;
  /** One line for the queue. */
  title: string;
  /** Everything the person needs: held call, remaining state, evidence. */
  detail: Json;
  /** Routed to (the tool's owner). */
  owner: string | null;
  /** One escalation per situation (`hold:run:tool:argsHash`, `compfail:stp_...`). */
  dedupeKey: string;
  /** Who holds it. */
  claimedBy: string | null;
  /** What was decided. */
  resolution: Json | null;
  /** Who resolved it. */
  resolvedBy: string | null;
  /** When. */
  resolvedAt: Date | null;
  /** Raised (database clock). */
  createdAt: Date;
}

/** A new escalation. */
export type NewEscalation = Pick<EscalationRecord, "id" | "runId" | "stepId" | "kind" | "title" | "detail" | "owner" | "dedupeKey">;

/** A correction message draft for people. */
export interface CorrectionRecord {
  /** `cor_...` */
  id: string;
  /** The run. */
  runId: string;
  /** The effect it answers. */
  stepId: string;
  /** Who would receive it. */
  audience: string[];
  /** Blast radius: 0 internal, 1 partner, 2 customer. */
  rank: number;
  /** Draft, sent or dismissed. */
  status: CorrectionStatus;
  /** Subject. */
  subject: string;
  /** Body. */
  body: string;
  /** Drafted (database clock). */
  createdAt: Date;
}

/** A new correction draft. */
export type NewCorrection = Pick<CorrectionRecord, "id" | "runId" | "stepId" | "audience" | "rank" | "subject" | "body"> & {
  /** What drafted it (`unwind`, `revoke:<rvk_...>`); unset: an unwind. */
  draftedBy?: string | null;
};

/** One link of the tamper-evident audit chain. */
export interface AuditEventRecord {
  /** Position in the chain of its scope, from 1. */
  seq: number;
  /** Chain scope (`run:<id>`). */
  scope: string;
  /** The run. */
  runId: string | null;
  /** The step, if the event is about one. */
  stepId: string | null;
  /** Event type. */
  type: string;
  /** `agent:x`, `user:y`, `system:z`. */
  actor: string;
  /** What changed. */
  data: Json;
  /** Database clock. */
  at: Date;
  /** The previous link's hash (64 zeros for the first). */
  prevHash: string;
  /** sha256(prevHash + canonical event). */
  hash: string;
}

/** The first link's previous hash. */
export const GENESIS_HASH = "0".repeat(64);

/** The audit chain scope of a run. */
export function runScope(runId: string): string {
  return `run:${runId}`;
}

/** The fields of an audit event that its hash covers. */
export function auditHashedContent(e: Omit<AuditEventRecord, "hash" | "prevHash">): Json {
  return {
    seq: e.seq,
    scope: e.scope,
    runId: e.runId,
    stepId: e.stepId,
    type: e.type,
    actor: e.actor,
    data: e.data,
    at: e.at.toISOString(),
  };
}

/**
 * Conditions an intent is recorded under, checked in the same transaction as the insert (so no other
 * writer can slip in between the check and the row). When one does not hold, nothing is written and
 * `insertIntent` throws `IntentGuardFailed`, unless the key's row already exists (then that row is the
 * answer, as always). The engine uses it instead of reading the run before every call; the server
 * uses it to record a plain staging call in one statement.
 */
export interface IntentGuard {
  /** The run's status is one of these. */
  runStatus: readonly RunStatus[];
  /**
   * And the run row is the version the caller read (its updatedAt): pivot requests, decisions and
   * status changes move it, so the caller's gate decision still stands.
   */
  runUpdatedAt?: Date;
  /** The step comes right after the run's last step (0 for the first), and no step is INTENDED or UNKNOWN. */
  appendOnly?: boolean;
  /** The run has no pivot at all (the gate's plain staging decision needs no plan). */
  noPivot?: boolean;
  /** The run is this agent's (`run.agent`): the server's check that a token acts on its own run. */
  runAgent?: string;
  /**
   * The tool table's row for the tool still has this class and policy version (every edit bumps the
   * version), so a server may decide on a row it read earlier. Stores without a tool table fail it.
   */
  toolPolicy?: { name: string; toolClass: string; policyVersion: number };
  /**
   * This agent token (its id) exists and is not revoked: a server that did not read the token for
   * this request proves it in the write. Stores without a token table fail it.
   */
  activeToken?: string;
}

/** An intent's guard did not hold: nothing was written; read the run again and decide afresh. */
export class IntentGuardFailed extends Error {
  constructor(readonly runId: string) {
    super(`The run ${runId} changed since it was read (status, pivot or steps); the intent was not recorded.`);
    this.name = "IntentGuardFailed";
  }
}

/** Result of inserting an intent: the existing row when the key or (run, stepIdx) already exists. */
export interface InsertIntentResult {
  /** True when this call created the row. */
  created: boolean;
  /** The row (new or existing). */
  step: StepRecord;
}

/** Result of raising an escalation: the existing one when the dedupe key already exists. */
export interface CreateEscalationResult {
  /** True when this call created it. */
  created: boolean;
  /** The escalation. */
  escalation: EscalationRecord;
}

/** Persistence for the engine. */
export interface SagaStore {
  /** Creates a run. */
  createRun(run: NewRun, audit: AuditInput): Promise<RunRecord>;
  /** The run, or null. */
  getRun(runId: string): Promise<RunRecord | null>;
  /** Moves a run to `to` if its status is in `from` (null: any); null when fenced out. */
  setRunStatus(runId: string, from: readonly RunStatus[] | null, to: RunStatus, audit: AuditInput): Promise<RunRecord | null>;

  /** The run's saga log, by stepIdx. */
  listSteps(runId: string): Promise<StepRecord[]>;
  /** One step, or null. */
  getStep(stepId: string): Promise<StepRecord | null>;
  /**
   * Commits an INTENDED row (durably) or returns the row that already holds its key/index. With a
   * guard, throws IntentGuardFailed when the guard does not hold (and no row holds the key).
   */
  insertIntent(intent: NewIntent, audit: AuditInput, guard?: IntentGuard): Promise<InsertIntentResult>;
  /** Applies `patch` if the row matches `fence`; null when it moved on. */
  updateStep(stepId: string, fence: StepFence, patch: StepPatch, audit: AuditInput): Promise<StepRecord | null>;

  /** Records a pivot request and moves the run to AWAITING_PIVOT. */
  createPivot(pivot: NewPivot, audit: AuditInput): Promise<PivotRecord>;
  /**
   * Replaces the plan of a PENDING pivot (the agent revised its proposal before anyone decided).
   * Null when it was decided meanwhile. A reviewer who loaded the old plan is then refused by the
   * plan hash and shown what changed.
   */
  revisePivot(
    pivotId: string,
    revision: Pick<PivotRecord, "summary" | "plan" | "planHash" | "stagedStepIds" | "deadline">,
    audit: AuditInput,
  ): Promise<PivotRecord | null>;
  /** The pivot, or null. */
  getPivot(pivotId: string): Promise<PivotRecord | null>;
  /** The pivot, waiting up to `waitMs` while it is PENDING (a long poll); stores without one are polled. */
  waitForPivot?(pivotId: string, waitMs: number): Promise<PivotRecord | null>;
  /** The run's pivots, oldest first. */
  listPivots(runId: string): Promise<PivotRecord[]>;
  /**
   * Decides a PENDING pivot whose plan hash is `expectedPlanHash`, and moves the run to COMMITTING
   * (approve) or RUNNING (reject, so the agent can unwind). Null when it was already decided, the
   * plan hash differs, or the run no longer waits for it (AWAITING_PIVOT).
   */
  decidePivot(
    pivotId: string,
    decision: { status: "APPROVED" | "REJECTED"; decidedBy: string; reason: string | null; expectedPlanHash: string; reasonCode?: PivotRejectionCode | null },
    audit: AuditInput,
  ): Promise<PivotRecord | null>;
  /**
   * A reviewer's edit of a PENDING pivot whose plan hash is `expectedPlanHash` and whose run waits
   * for it: the plan becomes `plan` (hash `planHash`) and `edit` is appended to the pivot's edits,
   * with its audit event, in one transaction. Null when it was decided, revised or edited meanwhile.
   * Stores without reviewers (the agent's HTTP client) omit it.
   */
  editPivotPlan?(
    pivotId: string,
    change: { expectedPlanHash: string; plan: PlanItem[]; planHash: string; edit: PivotEdit },
    audit: AuditInput,
  ): Promise<PivotRecord | null>;
  /**
   * Records a manual repair: resolves the unresolved escalation and writes `repair` onto its step,
   * while the step is COMPENSATION_FAILED and not yet repaired, both with their audit events, in
   * one transaction. Null when the escalation was resolved or the step changed meanwhile.
   */
  recordManualRepair?(
    input: { escalationId: string; stepId: string; repair: ManualRepair; resolution: Json },
    audit: { step: AuditInput; escalation: AuditInput },
  ): Promise<{ step: StepRecord; escalation: EscalationRecord } | null>;

  /** Raises an escalation, or returns the one with the same dedupe key. */
  createEscalation(escalation: NewEscalation, audit: AuditInput): Promise<CreateEscalationResult>;
  /** The escalation, or null. */
  getEscalation(escalationId: string): Promise<EscalationRecord | null>;
  /** The escalation with this dedupe key, or null. */
  findEscalationByDedupeKey(dedupeKey: string): Promise<EscalationRecord | null>;
  /** Escalations of a run (or all), oldest first. */
  listEscalations(filter: { runId?: string; status?: readonly EscalationStatus[] }): Promise<EscalationRecord[]>;
  /** Resolves an unresolved escalation; null when already resolved. */
  resolveEscalation(
    escalationId: string,
    resolution: { resolvedBy: string; resolution: Json },
    audit: AuditInput,
  ): Promise<EscalationRecord | null>;

  /** Drafts a correction, or returns the one already drafted for the step. */
  createCorrection(correction: NewCorrection, audit: AuditInput): Promise<CorrectionRecord>;
  /** The run's corrections, by rank then age. */
  listCorrections(runId: string): Promise<CorrectionRecord[]>;

  /** The run's audit chain, oldest first. */
  listAuditEvents(runId: string): Promise<AuditEventRecord[]>;

  /**
   * The tool as the store's tool table has it now (null: not in the table). The engine decides
   * in-process calls with it, as the server decides agent calls; stores without a table omit it
   * and the registered definition is used.
   */
  toolTable?(tool: string): Promise<TableTool | null>;
}

/** The agent side's ports (the commands it asks of whoever decides) live in agent-port.ts. */
