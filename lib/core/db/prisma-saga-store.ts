/**
 * The Prisma implementation of the saga store port (packages/client/src/saga/store.ts): the only place where the
 * saga log meets the database.
 *
 * Every mutation is one transaction that changes the state and appends its audit event. The two a
 * logged tool call makes, recording its intent and its outcome, are written in the driver's own SQL
 * (lib/core/db/step-log-sql.ts and one file per dialect); every other one is an interactive Prisma
 * transaction opened by lib/core/db/transactions.ts `writeTransaction` (database clock first, then the
 * write, then reads; queued so that no other query of this client runs inside it).
 *
 * PostgreSQL runs the same transactions concurrently, each on a connection of its own (READ
 * COMMITTED): a fenced `updateMany` re-checks its WHERE on the row as committed by whoever wrote it
 * last, unique indexes make one of two racing inserts fail (P2002, handled below), and appending to
 * an audit chain is serialised per chain (lib/core/db/dialect.ts `serializeOn`). There is no queue there.
 */
import { Prisma, type PrismaClient } from "@/generated/prisma";
import type { Run as RunRow } from "@/generated/prisma";
import { SagaError } from "@/packages/client/src/saga/errors";
import {
  actorLabel,
  IntentGuardFailed,
  nextRunVersion,
  runScope,
  type AuditEventRecord,
  type AuditInput,
  type IntentGuard,
  type CorrectionRecord,
  type CreateEscalationResult,
  type EscalationRecord,
  type InsertIntentResult,
  type NewCorrection,
  type NewEscalation,
  type NewIntent,
  type NewPivot,
  type NewRun,
  type PivotRecord,
  type PlanItem,
  type RunRecord,
  type SagaStore,
  type StepFence,
  type StepPatch,
  type StepRecord,
} from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import type { ManualRepair, PivotEdit } from "@/packages/client/src/saga/store";
import { tableTool, type TableTool } from "@/packages/client/src/saga/tool-table";
import { type PivotRejectionCode } from "@/packages/client/src/saga/vocabulary";
import { CorrectionStatus, EscalationStatus, PivotStatus, RunStatus, StepStatus } from "@/packages/client/src/saga/vocabulary";
import { rawDriverOf } from "./raw-driver";
import { durabilityFromEnv, type Durability, type StepLogSql } from "./step-log-sql";
import { PostgresStepLog } from "./step-log-postgres";
import { SqliteStepLog } from "./step-log-sqlite";
import { appendRunAudit, readOnConnection, writeTransaction, type Tx } from "./transactions";
import { isMissingReference, isUniqueViolation } from "./prisma-errors";
import { StepSealer } from "@/lib/core/privacy/seal-step";

import {
  jsonIn,
  nullableJsonIn,
  planJson,
  jsonOut,
  toRunRecord,
  toStepRecord,
  toPivotRecord,
  toEscalationRecord,
  toCorrectionRecord,
  toAuditEventRecord,
  stepPatchColumns,
  intentRow,
  isOutcome,
  isId,
} from "./saga-rows";

// ---------------------------------------------------------------------------------------------

/** Thrown inside a transaction to undo it when a fence fails after its first write. */
class RollBack extends Error {}

/** How a PrismaSagaStore writes. */
export interface PrismaSagaStoreOptions {
  /** Whether outcome writes wait for the flush (default: SAGABOARD_DURABILITY, else durable); see lib/core/db/step-log-sql.ts. */
  durability?: Durability;
}

/**
 * Moves the run row that `where` selects to `status` with a new version (`nextRunVersion`); false
 * when no row matches. The first statement writes (SQLite takes its write lock there, as `write`
 * needs). Only when the row already carries this millisecond or a later one does it read the version
 * and write the next one, fenced on the version it read.
 */
async function moveRun(tx: Tx, where: Prisma.RunWhereInput, status: RunStatus, now: Date): Promise<boolean> {
  if ((await tx.run.updateMany({ where: { ...where, updatedAt: { lt: now } }, data: { status, updatedAt: now } })).count > 0) return true;
  for (let attempt = 0; attempt < 5; attempt++) {
    const run = await tx.run.findFirst({ where, select: { updatedAt: true } });
    if (!run) return false;
    const data = { status, updatedAt: nextRunVersion(run.updatedAt, now) };
    if ((await tx.run.updateMany({ where: { ...where, updatedAt: run.updatedAt }, data })).count > 0) return true;
  }
  throw new SagaError("CONFLICT", "The run kept changing while its status was being moved; try again.");
}

/** SagaStore over Prisma (SQLite through the better-sqlite3 adapter, or PostgreSQL; see lib/core/db/prisma.ts). */
export class PrismaSagaStore implements SagaStore {
  /** Intents and outcomes, in the driver's own SQL. */
  private readonly hot: StepLogSql;
  /** How outcome writes commit. */
  readonly durability: Durability;
  /** Seals the personal fields of what the store writes, and opens them on the way back (lib/core/privacy). */
  private readonly sealer: StepSealer;
  /** The chain links each open transaction appended, told to the hot path once it commits. */
  private readonly appendedLinks = new WeakMap<Tx, [string, { seq: number; hash: string }][]>();

  constructor(
    private readonly prisma: PrismaClient,
    options: PrismaSagaStoreOptions = {},
  ) {
    const driver = rawDriverOf(prisma);
    if (!driver) {
      throw new Error("This Prisma client has no driver the saga log can write through: open it with lib/core/db/prisma.ts (openPrisma or getPrisma).");
    }
    this.hot = driver.kind === "sqlite" ? new SqliteStepLog(driver.exclusive, driver.observer) : new PostgresStepLog(driver.pool, driver.observer);
    this.durability = options.durability ?? durabilityFromEnv();
    this.sealer = new StepSealer(prisma);
  }

  /** One write transaction: reads the database clock, then runs `fn` (whose first statement must write). */
  private async write<T>(fn: (tx: Tx, now: Date) => Promise<T>): Promise<T> {
    const links: [string, { seq: number; hash: string }][] = [];
    const result = await writeTransaction(this.prisma, (tx, now) => {
      this.appendedLinks.set(tx, links);
      return fn(tx, now);
    });
    for (const [runId, link] of links) this.hot.noteLink(runId, link);
    return result;
  }

  /** One read outside any transaction, never interleaved with this client's open transaction. */
  private read<T>(fn: (db: PrismaClient) => Promise<T>): Promise<T> {
    return readOnConnection(this.prisma, fn);
  }

  /** Appends the next link of the run's audit chain, remembered for the hot path's cached head. */
  private async appendAudit(tx: Tx, now: Date, runId: string, stepId: string | null, audit: AuditInput): Promise<void> {
    const link = await appendRunAudit(tx, now, runId, stepId, audit);
    this.appendedLinks.get(tx)?.push([runId, link]);
  }

  /** After a foreign key refusal: says which parent is missing. */
  private async missingParent(runId: string, stepId: string | null): Promise<SagaError> {
    const run = await this.read((db) => db.run.findUnique({ where: { id: runId }, select: { id: true } }));
    if (!run) return new SagaError("RUN_NOT_FOUND", `Run ${runId} does not exist; create the run before writing to it.`);
    return new SagaError("STEP_NOT_FOUND", `Step ${stepId ?? "(none)"} does not exist in run ${runId}.`);
  }

  async createRun(run: NewRun, audit: AuditInput): Promise<RunRecord> {
    const row = (now: Date): RunRow => ({
      id: run.id,
      title: run.title,
      agent: run.agent,
      onBehalfOf: run.onBehalfOf,
      metadata: run.metadata as Prisma.JsonValue,
      status: RunStatus.RUNNING,
      createdAt: now,
      updatedAt: now,
    });
    const conflict = () => new SagaError("CONFLICT", `Run ${run.id} already exists; start a new run with a fresh id.`);
    const result = await this.hot.createRun(row, { type: audit.type, actor: actorLabel(audit.actor), data: audit.data ?? {} });
    if (result.kind === "created") return toRunRecord(result.row);
    if (result.kind === "exists") throw conflict();
    // "chain-exists": links without the run; the careful path appends after them under the chain lock.
    try {
      return await this.write(async (tx, now) => {
        const created = await tx.run.create({ data: { ...row(now), metadata: jsonIn(run.metadata) } });
        await this.appendAudit(tx, now, created.id, null, audit);
        return toRunRecord(created);
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict();
      throw e;
    }
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    if (!isId(runId)) return null;
    const row = await this.read((db) => db.run.findUnique({ where: { id: runId } }));
    return row ? toRunRecord(row) : null;
  }

  async setRunStatus(
    runId: string,
    from: readonly RunStatus[] | null,
    to: RunStatus,
    audit: AuditInput,
  ): Promise<RunRecord | null> {
    if (!isId(runId)) return null;
    return this.write(async (tx, now) => {
      const where: Prisma.RunWhereInput = { id: runId };
      if (from !== null) where.status = { in: [...from] };
      if (!(await moveRun(tx, where, to, now))) return null;
      const row = await tx.run.findUniqueOrThrow({ where: { id: runId } });
      await this.appendAudit(tx, now, runId, null, audit);
      return toRunRecord(row);
    });
  }

  async listSteps(runId: string): Promise<StepRecord[]> {
    if (!isId(runId)) return [];
    const rows = await this.read((db) => db.step.findMany({ where: { runId }, orderBy: { stepIdx: "asc" } }));
    return this.sealer.personalData.reveal(rows.map(toStepRecord));
  }

  async getStep(stepId: string): Promise<StepRecord | null> {
    if (!isId(stepId)) return null;
    const row = await this.read((db) => db.step.findUnique({ where: { id: stepId } }));
    return row ? this.sealer.personalData.reveal(toStepRecord(row)) : null;
  }

  async insertIntent(intent: NewIntent, audit: AuditInput, guard?: IntentGuard): Promise<InsertIntentResult> {
    const data = audit.data ?? {};
    const sealed = await this.sealer.sealIntent(intent);
    const result = await this.hot.insertIntent(intent.runId, (now) => intentRow(sealed.value, now), { stepId: intent.id, type: audit.type, actor: actorLabel(audit.actor), data }, guard);
    switch (result.kind) {
      case "created":
        return { created: true, step: await this.sealer.openRecord(toStepRecord(result.row), sealed.opened) };
      case "exists":
        return { created: false, step: await this.sealer.openRecord(toStepRecord(result.row), sealed.opened) };
      case "guard-failed":
        throw new IntentGuardFailed(intent.runId);
      case "no-run":
        throw new SagaError("RUN_NOT_FOUND", `Run ${intent.runId} does not exist; create the run before writing to it.`);
      case "id-taken":
        throw new SagaError("CONFLICT", `Step id ${intent.id} is already used by another step.`);
    }
  }

  async updateStep(stepId: string, fence: StepFence, patch: StepPatch, audit: AuditInput): Promise<StepRecord | null> {
    if (!isId(stepId)) return null;
    const durability = isOutcome(fence, patch) ? this.durability : "durable";
    const sealed = await this.sealer.sealPatch(stepId, patch);
    const data = (await this.sealer.sealAuditData(stepId, audit.data)) ?? {};
    const row = await this.hot.updateStep(stepId, fence, stepPatchColumns(sealed.value), { type: audit.type, actor: actorLabel(audit.actor), data }, durability);
    return row ? this.sealer.openRecord(toStepRecord(row), sealed.opened) : null;
  }

  async createPivot(pivot: NewPivot, audit: AuditInput): Promise<PivotRecord> {
    const sealed = await this.sealer.sealPlan(pivot.runId, pivot.plan);
    try {
      return await this.sealer.openRecord(await this.write(async (tx, now) => {
        const row = await tx.pivot.create({
          data: {
            id: pivot.id,
            runId: pivot.runId,
            status: PivotStatus.PENDING,
            summary: pivot.summary,
            plan: jsonIn(planJson(sealed.value)),
            planHash: pivot.planHash,
            stagedStepIds: [...pivot.stagedStepIds],
            deadline: pivot.deadline,
            createdAt: now,
          },
        });
        await moveRun(tx, { id: pivot.runId }, RunStatus.AWAITING_PIVOT, now);
        await this.appendAudit(tx, now, pivot.runId, null, audit);
        return toPivotRecord(row);
      }), sealed.opened);
    } catch (e) {
      if (isMissingReference(e)) throw await this.missingParent(pivot.runId, null);
      throw e;
    }
  }

  async revisePivot(
    pivotId: string,
    revision: Pick<PivotRecord, "summary" | "plan" | "planHash" | "stagedStepIds" | "deadline">,
    audit: AuditInput,
  ): Promise<PivotRecord | null> {
    if (!isId(pivotId)) return null;
    const runId = (await this.read((db) => db.pivot.findUnique({ where: { id: pivotId }, select: { runId: true } })))?.runId;
    if (!runId) return null;
    const sealed = await this.sealer.sealPlan(runId, revision.plan);
    return this.write(async (tx, now) => {
      const { count } = await tx.pivot.updateMany({
        where: { id: pivotId, status: PivotStatus.PENDING },
        data: {
          summary: revision.summary,
          plan: jsonIn(planJson(sealed.value)),
          planHash: revision.planHash,
          stagedStepIds: [...revision.stagedStepIds],
          deadline: revision.deadline,
        },
      });
      if (count === 0) return null;
      const row = await tx.pivot.findUniqueOrThrow({ where: { id: pivotId } });
      await this.appendAudit(tx, now, row.runId, null, audit);
      return toPivotRecord(row);
    }).then((r) => (r ? this.sealer.openRecord(r, sealed.opened) : r));
  }

  async getPivot(pivotId: string): Promise<PivotRecord | null> {
    if (!isId(pivotId)) return null;
    const row = await this.read((db) => db.pivot.findUnique({ where: { id: pivotId } }));
    return row ? this.sealer.personalData.reveal(toPivotRecord(row)) : null;
  }

  async listPivots(runId: string): Promise<PivotRecord[]> {
    if (!isId(runId)) return [];
    const rows = await this.read((db) => db.pivot.findMany({ where: { runId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }));
    return this.sealer.personalData.reveal(rows.map(toPivotRecord));
  }

  async decidePivot(
    pivotId: string,
    decision: { status: "APPROVED" | "REJECTED"; decidedBy: string; reason: string | null; expectedPlanHash: string; reasonCode?: PivotRejectionCode | null },
    audit: AuditInput,
  ): Promise<PivotRecord | null> {
    // Without both, the fence below would lose a filter and decide whichever pivot it found.
    if (!isId(pivotId) || !isId(decision.expectedPlanHash)) return null;
    return this.write(async (tx, now) => {
      const { count } = await tx.pivot.updateMany({
        where: { id: pivotId, status: PivotStatus.PENDING, planHash: decision.expectedPlanHash },
        data: { status: decision.status, decidedBy: decision.decidedBy, decidedAt: now, reason: decision.reason, reasonCode: decision.reasonCode ?? null },
      });
      if (count === 0) return null;
      const row = await tx.pivot.findUniqueOrThrow({ where: { id: pivotId } });
      const runStatus = decision.status === PivotStatus.APPROVED ? RunStatus.COMMITTING : RunStatus.RUNNING;
      // A decision only moves a run that is still waiting for it (not one the agent unwound meanwhile).
      if (!(await moveRun(tx, { id: row.runId, status: RunStatus.AWAITING_PIVOT }, runStatus, now))) throw new RollBack();
      await this.appendAudit(tx, now, row.runId, null, audit);
      return toPivotRecord(row);
    })
      .then((r) => this.sealer.personalData.reveal(r))
      .catch((e: unknown) => {
        if (e instanceof RollBack) return null;
        throw e;
      });
  }

  async editPivotPlan(
    pivotId: string,
    change: { expectedPlanHash: string; plan: PlanItem[]; planHash: string; edit: PivotEdit },
    audit: AuditInput,
  ): Promise<PivotRecord | null> {
    if (!isId(pivotId) || !isId(change.expectedPlanHash)) return null;
    const runId = (await this.read((db) => db.pivot.findUnique({ where: { id: pivotId }, select: { runId: true } })))?.runId;
    if (!runId) return null;
    // The edit's history and its audit event carry the arguments' old and new values: sealed like the plan.
    const sealed = await this.sealer.sealPlan(runId, change.plan, { edit: change.edit as unknown as Json, data: audit.data ?? {} });
    const edit = (sealed.extra?.edit ?? change.edit) as unknown as PivotEdit;
    audit = { ...audit, data: sealed.extra?.data ?? audit.data };
    return this.write(async (tx, now) => {
      // The fenced write first (it takes the lock); the edit history is appended after reading it under that lock.
      const { count } = await tx.pivot.updateMany({
        where: { id: pivotId, status: PivotStatus.PENDING, planHash: change.expectedPlanHash },
        data: { plan: jsonIn(planJson(sealed.value)), planHash: change.planHash },
      });
      if (count === 0) return null;
      const row = await tx.pivot.findUniqueOrThrow({ where: { id: pivotId } });
      const run = await tx.run.findUnique({ where: { id: row.runId }, select: { status: true } });
      if (run?.status !== RunStatus.AWAITING_PIVOT) throw new RollBack();
      const edits = [...(row.edits === null ? [] : (jsonOut(row.edits) as unknown as PivotEdit[])), { ...edit, editedAt: now.toISOString() }];
      const updated = await tx.pivot.update({ where: { id: pivotId }, data: { edits: jsonIn(edits as unknown as Json) } });
      await this.appendAudit(tx, now, row.runId, null, audit);
      return toPivotRecord(updated);
    })
      .then((r) => (r ? this.sealer.openRecord(r, sealed.opened) : r))
      .catch((e: unknown) => {
      if (e instanceof RollBack) return null;
      throw e;
    });
  }

  async recordManualRepair(
    input: { escalationId: string; stepId: string; repair: ManualRepair; resolution: Json },
    audit: { step: AuditInput; escalation: AuditInput },
  ): Promise<{ step: StepRecord; escalation: EscalationRecord } | null> {
    if (!isId(input.escalationId) || !isId(input.stepId)) return null;
    return this.write(async (tx, now) => {
      // The escalation's fenced resolve first: of two people recording a repair, one gets it.
      const resolved = await tx.escalation.updateMany({
        where: { id: input.escalationId, stepId: input.stepId, status: { not: EscalationStatus.RESOLVED } },
        data: { status: EscalationStatus.RESOLVED, resolution: nullableJsonIn(input.resolution), resolvedBy: input.repair.repairedBy, resolvedAt: now },
      });
      if (resolved.count === 0) return null;
      const repair = { ...input.repair, repairedAt: now.toISOString() };
      const stepped = await tx.step.updateMany({
        where: { id: input.stepId, status: StepStatus.COMPENSATION_FAILED },
        data: { manualRepair: jsonIn(repair as unknown as Json), updatedAt: now },
      });
      if (stepped.count === 0) throw new RollBack();
      const [stepRow, escalationRow] = [await tx.step.findUniqueOrThrow({ where: { id: input.stepId } }), await tx.escalation.findUniqueOrThrow({ where: { id: input.escalationId } })];
      await this.appendAudit(tx, now, stepRow.runId, stepRow.id, audit.step);
      await this.appendAudit(tx, now, escalationRow.runId, escalationRow.stepId, audit.escalation);
      return { step: toStepRecord(stepRow), escalation: toEscalationRecord(escalationRow) };
    }).catch((e: unknown) => {
      if (e instanceof RollBack) return null;
      throw e;
    });
  }

  async createEscalation(escalation: NewEscalation, audit: AuditInput): Promise<CreateEscalationResult> {
    // Its detail may copy the step's personal values (the compensation still out there): sealed too.
    const stepId = escalation.stepId;
    if (stepId) {
      escalation = { ...escalation, detail: (await this.sealer.sealAuditData(stepId, escalation.detail)) ?? escalation.detail };
      audit = { ...audit, data: await this.sealer.sealAuditData(stepId, audit.data) };
    }
    try {
      const created = await this.write(async (tx, now) => {
        const row = await tx.escalation.create({
          data: {
            id: escalation.id,
            runId: escalation.runId,
            stepId: escalation.stepId,
            kind: escalation.kind,
            status: EscalationStatus.OPEN,
            title: escalation.title,
            detail: jsonIn(escalation.detail),
            owner: escalation.owner,
            dedupeKey: escalation.dedupeKey,
            createdAt: now,
          },
        });
        await this.appendAudit(tx, now, row.runId, row.stepId, audit);
        return toEscalationRecord(row);
      });
      return { created: true, escalation: await this.sealer.personalData.reveal(created) };
    } catch (e) {
      if (isUniqueViolation(e)) {
        const existing = await this.read((db) => db.escalation.findUnique({ where: { dedupeKey: escalation.dedupeKey } }));
        if (existing) return { created: false, escalation: await this.sealer.personalData.reveal(toEscalationRecord(existing)) };
      }
      if (isMissingReference(e)) throw await this.missingParent(escalation.runId, escalation.stepId);
      throw e;
    }
  }

  async getEscalation(escalationId: string): Promise<EscalationRecord | null> {
    if (!isId(escalationId)) return null;
    const row = await this.read((db) => db.escalation.findUnique({ where: { id: escalationId } }));
    return row ? this.sealer.personalData.reveal(toEscalationRecord(row)) : null;
  }

  async findEscalationByDedupeKey(dedupeKey: string): Promise<EscalationRecord | null> {
    if (!isId(dedupeKey)) return null;
    const row = await this.read((db) => db.escalation.findUnique({ where: { dedupeKey } }));
    return row ? this.sealer.personalData.reveal(toEscalationRecord(row)) : null;
  }

  async listEscalations(filter: { runId?: string; status?: readonly EscalationStatus[] }): Promise<EscalationRecord[]> {
    const where: Prisma.EscalationWhereInput = {};
    if (filter.runId != null) where.runId = filter.runId;
    if (filter.status != null) where.status = { in: [...filter.status] };
    const rows = await this.read((db) => db.escalation.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }));
    return rows.map(toEscalationRecord);
  }

  async resolveEscalation(
    escalationId: string,
    resolution: { resolvedBy: string; resolution: Json },
    audit: AuditInput,
  ): Promise<EscalationRecord | null> {
    if (!isId(escalationId)) return null;
    return this.write(async (tx, now) => {
      const { count } = await tx.escalation.updateMany({
        where: { id: escalationId, status: { not: EscalationStatus.RESOLVED } },
        data: {
          status: EscalationStatus.RESOLVED,
          resolution: nullableJsonIn(resolution.resolution),
          resolvedBy: resolution.resolvedBy,
          resolvedAt: now,
        },
      });
      if (count === 0) return null;
      const row = await tx.escalation.findUniqueOrThrow({ where: { id: escalationId } });
      await this.appendAudit(tx, now, row.runId, row.stepId, audit);
      return toEscalationRecord(row);
    });
  }

  async createCorrection(correction: NewCorrection, audit: AuditInput): Promise<CorrectionRecord> {
    // The desk's working copy stays in clear (support staff edit and send it); an erasure replaces its
    // words (lib/server/privacy/erase-subject.ts).
    try {
      return await this.sealer.personalData.reveal(await this.write(async (tx, now) => {
        const row = await tx.correction.create({
          data: {
            id: correction.id,
            runId: correction.runId,
            stepId: correction.stepId,
            audience: [...correction.audience],
            // An audience nobody recorded is read as customer-facing (rank 2), so the queue sorts it there.
            rank: correction.audience.length === 0 ? 2 : correction.rank,
            status: CorrectionStatus.DRAFT,
            subject: correction.subject,
            body: correction.body,
            draftedBy: correction.draftedBy ?? null,
            createdAt: now,
          },
        });
        await this.appendAudit(tx, now, row.runId, row.stepId, audit);
        return toCorrectionRecord(row);
      }));
    } catch (e) {
      if (isUniqueViolation(e)) {
        const existing = await this.read((db) => db.correction.findUnique({ where: { stepId: correction.stepId } }));
        if (existing) return this.sealer.personalData.reveal(toCorrectionRecord(existing));
      }
      if (isMissingReference(e)) throw await this.missingParent(correction.runId, correction.stepId);
      throw e;
    }
  }

  async listCorrections(runId: string): Promise<CorrectionRecord[]> {
    if (!isId(runId)) return [];
    const rows = await this.read((db) =>
      db.correction.findMany({ where: { runId }, orderBy: [{ rank: "asc" }, { createdAt: "asc" }, { id: "asc" }] }),
    );
    return this.sealer.personalData.reveal(rows.map(toCorrectionRecord));
  }

  async listAuditEvents(runId: string): Promise<AuditEventRecord[]> {
    const rows = await this.read((db) => db.auditEvent.findMany({ where: { scope: runScope(runId) }, orderBy: { seq: "asc" } }));
    return rows.map(toAuditEventRecord);
  }

  async toolTable(tool: string): Promise<TableTool | null> {
    const row = await this.hot.toolRow(tool);
    return row ? tableTool(row) : null;
  }
}

const sharedStores = new WeakMap<PrismaClient, PrismaSagaStore>();

/**
 * The process's store over `prisma` (default options), one per client: every request of the app
 * (agent API and dashboard alike) writes through it, so the hot path's caches (chain heads, the run
 * of each step) live across requests, and a Prisma-path write by one request keeps them current for
 * the next (a store of its own would leave the shared one's chain head stale: a retried write).
 */
export function sharedSagaStore(prisma: PrismaClient): PrismaSagaStore {
  let store = sharedStores.get(prisma);
  if (!store) sharedStores.set(prisma, (store = new PrismaSagaStore(prisma)));
  return store;
}
