/**
 * An in-memory SagaStore for unit tests and examples. It keeps the port's contract (atomic mutation
 * plus audit event, fenced updates, unique keys) so engine tests exercise the same rules the
 * database enforces; values are deep-copied in and out, as a database would.
 */
import { systemClock, type Clock } from "./clock";
import { SagaError } from "./errors";
import { intentGuardHolds, isUnsettled, stepFenceHolds } from "./intent-guard";
import { auditHash } from "./keys";
import {
  actorLabel,
  auditHashedContent,
  GENESIS_HASH,
  IntentGuardFailed,
  nextRunVersion,
  runScope,
  type AuditEventRecord,
  type AuditInput,
  type CorrectionRecord,
  type CreateEscalationResult,
  type EscalationRecord,
  type InsertIntentResult,
  type IntentGuard,
  type NewCorrection,
  type NewEscalation,
  type NewIntent,
  type NewPivot,
  type NewRun,
  type PivotRecord,
  type RunRecord,
  type SagaStore,
  type StepFence,
  type StepPatch,
  type StepRecord,
} from "./store";
import type { ManualRepair, PivotEdit, PlanItem } from "./store";
import type { Json } from "./tools";
import { CompensationState, EscalationStatus, CorrectionStatus, PivotStatus, RunStatus, StepStatus } from "./vocabulary";

function copy<T>(value: T): T {
  return structuredClone(value);
}

export class MemorySagaStore implements SagaStore {
  private readonly runs = new Map<string, RunRecord>();
  private readonly steps = new Map<string, StepRecord>();
  private readonly pivots = new Map<string, PivotRecord>();
  private readonly escalations = new Map<string, EscalationRecord>();
  private readonly corrections = new Map<string, CorrectionRecord>();
  private readonly audit: AuditEventRecord[] = [];

  constructor(private readonly clock: Clock = systemClock) {}

  private append(runId: string, stepId: string | null, input: AuditInput, at: Date): void {
    const scope = runScope(runId);
    let last: AuditEventRecord | undefined;
    for (let i = this.audit.length - 1; i >= 0; i--) {
      if (this.audit[i]?.scope === scope) {
        last = this.audit[i];
        break;
      }
    }
    const content = {
      seq: (last?.seq ?? 0) + 1,
      scope,
      runId,
      stepId,
      type: input.type,
      actor: actorLabel(input.actor),
      data: copy(input.data ?? {}),
      at,
    };
    const prevHash = last?.hash ?? GENESIS_HASH;
    this.audit.push({ ...content, prevHash, hash: auditHash(prevHash, auditHashedContent(content)) });
  }

  async createRun(run: NewRun, audit: AuditInput): Promise<RunRecord> {
    if (this.runs.has(run.id)) throw new SagaError("CONFLICT", `Run ${run.id} already exists.`);
    const now = this.clock.now();
    const record: RunRecord = { ...copy(run), status: RunStatus.RUNNING, createdAt: now, updatedAt: now };
    this.runs.set(run.id, record);
    this.append(run.id, null, audit, now);
    return copy(record);
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    const run = this.runs.get(runId);
    return run ? copy(run) : null;
  }

  async setRunStatus(runId: string, from: readonly RunStatus[] | null, to: RunStatus, audit: AuditInput): Promise<RunRecord | null> {
    const run = this.runs.get(runId);
    if (!run || (from && !from.includes(run.status))) return null;
    const now = this.clock.now();
    run.status = to;
    run.updatedAt = nextRunVersion(run.updatedAt, now);
    this.append(runId, null, audit, now);
    return copy(run);
  }

  async listSteps(runId: string): Promise<StepRecord[]> {
    return [...this.steps.values()].filter((s) => s.runId === runId).sort((a, b) => a.stepIdx - b.stepIdx).map(copy);
  }

  async getStep(stepId: string): Promise<StepRecord | null> {
    const step = this.steps.get(stepId);
    return step ? copy(step) : null;
  }

  async insertIntent(intent: NewIntent, audit: AuditInput, guard?: IntentGuard): Promise<InsertIntentResult> {
    const existing = [...this.steps.values()].find(
      (s) => s.stepKey === intent.stepKey || (s.runId === intent.runId && s.stepIdx === intent.stepIdx),
    );
    if (existing) return { created: false, step: copy(existing) };
    if (this.steps.has(intent.id)) throw new SagaError("CONFLICT", `Step id ${intent.id} is already used by another step.`);
    const run = this.runs.get(intent.runId);
    if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${intent.runId} does not exist.`);
    if (guard && !this.guardHolds(run, intent.stepIdx, guard)) throw new IntentGuardFailed(intent.runId);
    const now = this.clock.now();
    const step: StepRecord = {
      ...copy(intent),
      status: StepStatus.INTENDED,
      externalRef: null,
      result: null,
      error: null,
      compensationState: CompensationState.NONE,
      compensationRef: null,
      compensationRequestedAt: null,
      compensationConfirmedAt: null,
      compensationError: null,
      attempts: 0,
      manualRepair: null,
      createdAt: now,
      updatedAt: now,
    };
    this.steps.set(step.id, step);
    this.append(step.runId, step.id, audit, now);
    return { created: true, step: copy(step) };
  }

  private guardHolds(run: RunRecord, stepIdx: number, guard: IntentGuard): boolean {
    const steps = () => [...this.steps.values()].filter((s) => s.runId === run.id);
    return intentGuardHolds(guard, stepIdx, {
      run,
      lastStepIdx: () => (steps().length === 0 ? null : Math.max(...steps().map((s) => s.stepIdx))),
      hasUnsettledStep: () => steps().some((s) => isUnsettled(s.status)),
      hasPivot: () => [...this.pivots.values()].some((p) => p.runId === run.id),
      toolPolicyMatches: () => false, // no tool table here
      tokenActive: () => false, // no tokens here
    });
  }

  async updateStep(stepId: string, fence: StepFence, patch: StepPatch, audit: AuditInput): Promise<StepRecord | null> {
    const step = this.steps.get(stepId);
    if (!step) return null;
    if (!stepFenceHolds(fence, step, { runAgent: () => this.runs.get(step.runId)?.agent, tokenActive: () => false /* no tokens here */ })) return null;
    const now = this.clock.now();
    for (const [k, v] of Object.entries(patch)) if (v !== undefined) Object.assign(step, { [k]: copy(v) });
    step.updatedAt = now;
    this.append(step.runId, step.id, audit, now);
    return copy(step);
  }

  async createPivot(pivot: NewPivot, audit: AuditInput): Promise<PivotRecord> {
    const run = this.runs.get(pivot.runId);
    if (!run) throw new SagaError("RUN_NOT_FOUND", `Run ${pivot.runId} does not exist.`);
    const now = this.clock.now();
    const record: PivotRecord = {
      ...copy(pivot),
      status: PivotStatus.PENDING,
      decidedBy: null,
      decidedAt: null,
      reason: null,
      reasonCode: null,
      edits: [],
      createdAt: now,
    };
    this.pivots.set(record.id, record);
    run.status = RunStatus.AWAITING_PIVOT;
    run.updatedAt = nextRunVersion(run.updatedAt, now);
    this.append(pivot.runId, null, audit, now);
    return copy(record);
  }

  async revisePivot(
    pivotId: string,
    revision: Pick<PivotRecord, "summary" | "plan" | "planHash" | "stagedStepIds" | "deadline">,
    audit: AuditInput,
  ): Promise<PivotRecord | null> {
    const pivot = this.pivots.get(pivotId);
    if (!pivot || pivot.status !== PivotStatus.PENDING) return null;
    Object.assign(pivot, copy(revision));
    this.append(pivot.runId, null, audit, this.clock.now());
    return copy(pivot);
  }

  async getPivot(pivotId: string): Promise<PivotRecord | null> {
    const pivot = this.pivots.get(pivotId);
    return pivot ? copy(pivot) : null;
  }

  async listPivots(runId: string): Promise<PivotRecord[]> {
    return [...this.pivots.values()].filter((p) => p.runId === runId).map(copy);
  }

  async decidePivot(
    pivotId: string,
    decision: { status: "APPROVED" | "REJECTED"; decidedBy: string; reason: string | null; expectedPlanHash: string; reasonCode?: PivotRecord["reasonCode"] },
    audit: AuditInput,
  ): Promise<PivotRecord | null> {
    const pivot = this.pivots.get(pivotId);
    if (!pivot || pivot.status !== PivotStatus.PENDING || pivot.planHash !== decision.expectedPlanHash) return null;
    // A decision only moves a run that is still waiting for it (not one the agent unwound meanwhile).
    if (this.runs.get(pivot.runId)?.status !== RunStatus.AWAITING_PIVOT) return null;
    const now = this.clock.now();
    Object.assign(pivot, { status: decision.status, decidedBy: decision.decidedBy, reason: decision.reason, reasonCode: decision.reasonCode ?? null, decidedAt: now });
    const run = this.runs.get(pivot.runId);
    if (run) {
      run.status = decision.status === PivotStatus.APPROVED ? RunStatus.COMMITTING : RunStatus.RUNNING;
      run.updatedAt = nextRunVersion(run.updatedAt, now);
    }
    this.append(pivot.runId, null, audit, now);
    return copy(pivot);
  }

  async editPivotPlan(
    pivotId: string,
    change: { expectedPlanHash: string; plan: PlanItem[]; planHash: string; edit: PivotEdit },
    audit: AuditInput,
  ): Promise<PivotRecord | null> {
    const pivot = this.pivots.get(pivotId);
    if (!pivot || pivot.status !== PivotStatus.PENDING || pivot.planHash !== change.expectedPlanHash) return null;
    if (this.runs.get(pivot.runId)?.status !== RunStatus.AWAITING_PIVOT) return null;
    const now = this.clock.now();
    Object.assign(pivot, { plan: copy(change.plan), planHash: change.planHash, edits: [...(pivot.edits ?? []), { ...copy(change.edit), editedAt: now.toISOString() }] });
    this.append(pivot.runId, null, audit, now);
    return copy(pivot);
  }

  async recordManualRepair(
    input: { escalationId: string; stepId: string; repair: ManualRepair; resolution: Json },
    audit: { step: AuditInput; escalation: AuditInput },
  ): Promise<{ step: StepRecord; escalation: EscalationRecord } | null> {
    const e = this.escalations.get(input.escalationId);
    const step = this.steps.get(input.stepId);
    if (!e || e.status === EscalationStatus.RESOLVED || e.stepId !== input.stepId) return null;
    if (!step || step.status !== StepStatus.COMPENSATION_FAILED || step.manualRepair) return null;
    const now = this.clock.now();
    step.manualRepair = { ...copy(input.repair), repairedAt: now.toISOString() };
    step.updatedAt = now;
    this.append(step.runId, step.id, audit.step, now);
    Object.assign(e, { status: EscalationStatus.RESOLVED, resolution: copy(input.resolution), resolvedBy: input.repair.repairedBy, resolvedAt: now });
    this.append(e.runId, e.stepId, audit.escalation, now);
    return { step: copy(step), escalation: copy(e) };
  }

  async createEscalation(escalation: NewEscalation, audit: AuditInput): Promise<CreateEscalationResult> {
    const existing = [...this.escalations.values()].find((e) => e.dedupeKey === escalation.dedupeKey);
    if (existing) return { created: false, escalation: copy(existing) };
    const now = this.clock.now();
    const record: EscalationRecord = {
      ...copy(escalation),
      status: EscalationStatus.OPEN,
      claimedBy: null,
      resolution: null,
      resolvedBy: null,
      resolvedAt: null,
      createdAt: now,
    };
    this.escalations.set(record.id, record);
    this.append(record.runId, record.stepId, audit, now);
    return { created: true, escalation: copy(record) };
  }

  async getEscalation(escalationId: string): Promise<EscalationRecord | null> {
    const e = this.escalations.get(escalationId);
    return e ? copy(e) : null;
  }

  async findEscalationByDedupeKey(dedupeKey: string): Promise<EscalationRecord | null> {
    const e = [...this.escalations.values()].find((x) => x.dedupeKey === dedupeKey);
    return e ? copy(e) : null;
  }

  async listEscalations(filter: { runId?: string; status?: readonly EscalationStatus[] }): Promise<EscalationRecord[]> {
    return [...this.escalations.values()]
      .filter((e) => (filter.runId === undefined || e.runId === filter.runId) && (!filter.status || filter.status.includes(e.status)))
      .map(copy);
  }

  async resolveEscalation(
    escalationId: string,
    resolution: { resolvedBy: string; resolution: Json },
    audit: AuditInput,
  ): Promise<EscalationRecord | null> {
    const e = this.escalations.get(escalationId);
    if (!e || e.status === EscalationStatus.RESOLVED) return null;
    const now = this.clock.now();
    Object.assign(e, {
      status: EscalationStatus.RESOLVED,
      resolution: copy(resolution.resolution),
      resolvedBy: resolution.resolvedBy,
      resolvedAt: now,
    });
    this.append(e.runId, e.stepId, audit, now);
    return copy(e);
  }

  async createCorrection(correction: NewCorrection, audit: AuditInput): Promise<CorrectionRecord> {
    const existing = [...this.corrections.values()].find((c) => c.stepId === correction.stepId);
    if (existing) return copy(existing);
    const now = this.clock.now();
    const { draftedBy: _draftedBy, ...fields } = copy(correction);
    const record: CorrectionRecord = { ...fields, status: CorrectionStatus.DRAFT, createdAt: now };
    this.corrections.set(record.id, record);
    this.append(record.runId, record.stepId, audit, now);
    return copy(record);
  }

  async listCorrections(runId: string): Promise<CorrectionRecord[]> {
    return [...this.corrections.values()]
      .filter((c) => c.runId === runId)
      .sort((a, b) => a.rank - b.rank || a.createdAt.getTime() - b.createdAt.getTime())
      .map(copy);
  }

  async listAuditEvents(runId: string): Promise<AuditEventRecord[]> {
    const scope = runScope(runId);
    return this.audit.filter((e) => e.scope === scope).map(copy);
  }
}
