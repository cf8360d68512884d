/**
 * The saga store over HTTP: the same engine code runs in an agent process unchanged, while the
 * server stays the place where policy is enforced (it re-checks scope, keys, classes and the gate).
 * Agents can never approve or resolve: those methods refuse locally and have no endpoint.
 */
import * as api from "@/lib/api/contracts/runs";
import * as workerApi from "@/lib/api/contracts/worker";
import { DATE_FIELDS, fromWire } from "@/lib/api/schemas/saga";
import { ApprovalRequiredError, SagaError, type SagaErrorCode, SAGA_ERROR_HTTP_STATUS } from "@/lib/saga/errors";
import type {
  AuditEventRecord,
  CallPort,
  UnwindPort,
  AuditInput,
  CorrectionRecord,
  CreateEscalationResult,
  EscalationRecord,
  InsertIntentResult,
  NewCorrection,
  NewEscalation,
  NewPivot,
  NewRun,
  PivotRecord,
  RunRecord,
  SagaStore,
  StepRecord,
} from "@/lib/saga/store";
import type { EscalationStatus, RunStatus } from "@/lib/saga/vocabulary";
import { httpCallPort, httpUnwindPort } from "./http-calls";
import { SagaboardApiError, Transport, type TransportOptions } from "./transport";

const run = (w: object) => fromWire<RunRecord>(w, DATE_FIELDS.run);
const step = (w: object) => fromWire<StepRecord>(w, DATE_FIELDS.step);
const pivot = (w: object) => fromWire<PivotRecord>(w, DATE_FIELDS.pivot);
const escalation = (w: object) => fromWire<EscalationRecord>(w, DATE_FIELDS.escalation);
const correction = (w: object) => fromWire<CorrectionRecord>(w, DATE_FIELDS.correction);
const audit = (w: object) => fromWire<AuditEventRecord>(w, DATE_FIELDS.audit);

function path(template: string, params: Record<string, string>): string {
  return template.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(params[name] ?? ""));
}

const event = (a: AuditInput) => ({ type: a.type, ...(a.data === undefined ? {} : { data: a.data }) });
const iso = (d: Date | null | undefined) => (d === undefined ? undefined : d === null ? null : d.toISOString());

/** Options of the HTTP store. */
export type HttpSagaStoreOptions = TransportOptions & {
  /** How long cached tool policy versions are trusted (default 5 s; the server re-checks anyway). */
  policyCacheMs?: number;
};

export class HttpSagaStore implements SagaStore {
  private readonly http: Transport;
  /** The engine asks the server's call commands instead of deciding on this store. */
  readonly calls: CallPort;
  /** The unwind commands: the server walks the log; this process does what needs its connectors. */
  readonly unwinds: UnwindPort;
  private policyCache: { at: number; versions: Map<string, number> } | null = null;
  private readonly policyCacheMs: number;

  constructor(options: HttpSagaStoreOptions) {
    this.http = new Transport(options);
    this.policyCacheMs = options.policyCacheMs ?? 5000;
    this.calls = httpCallPort(this.http, (fn) => this.call(fn));
    this.unwinds = httpUnwindPort(this.http, (fn) => this.call(fn));
  }

  /** Sends a request; engine-level error codes come back as the engine's own SagaError. */
  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof SagaboardApiError) {
        if (e.code === "APPROVAL_REQUIRED") {
          const x = e.extra as { reason?: string; escalationId?: string | null; pivotId?: string | null };
          throw new ApprovalRequiredError(e.message, x.reason ?? "APPROVAL_REQUIRED", x.escalationId ?? null, x.pivotId ?? null);
        }
        if (e.code in SAGA_ERROR_HTTP_STATUS) throw new SagaError(e.code as SagaErrorCode, e.message, e.details);
      }
      throw e;
    }
  }

  private async getOrNull<T>(fn: () => Promise<T>): Promise<T | null> {
    try {
      return await this.call(fn);
    } catch (e) {
      if (e instanceof SagaError && e.httpStatus === 404) return null;
      throw e;
    }
  }

  async createRun(input: NewRun, _audit: AuditInput): Promise<RunRecord> {
    const res = await this.call(() =>
      this.http.request("POST", api.createRun.path, api.createRun.response, { title: input.title, onBehalfOf: input.onBehalfOf, metadata: input.metadata }, { idempotencyKey: true }),
    );
    return run(res.run);
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    const res = await this.getOrNull(() => this.http.request("GET", path(api.getRun.path, { runId }), api.getRun.response));
    return res ? run(res.run) : null;
  }

  async setRunStatus(runId: string, from: readonly RunStatus[] | null, to: RunStatus, a: AuditInput): Promise<RunRecord | null> {
    const res = await this.call(() =>
      this.http.request("POST", path(api.setRunStatus.path, { runId }), api.setRunStatus.response, { from: from ? [...from] : null, to, event: event(a) }),
    );
    return res.run ? run(res.run) : null;
  }

  async listSteps(runId: string): Promise<StepRecord[]> {
    const res = await this.call(() => this.http.request("GET", path(api.listSteps.path, { runId }), api.listSteps.response));
    return res.steps.map(step);
  }

  async getStep(stepId: string): Promise<StepRecord | null> {
    const res = await this.getOrNull(() => this.http.request("GET", path(api.getStep.path, { stepId }), api.getStep.response));
    return res ? step(res.step) : null;
  }

  async insertIntent(): Promise<InsertIntentResult> {
    // The server decides every intent (step, key, gate): the engine begins calls through `calls`.
    throw new SagaError("CONFLICT", "Over HTTP an intent is begun with the call commands (POST /api/v1/runs/{runId}/calls), never written as a row.");
  }

  async updateStep(): Promise<StepRecord | null> {
    // The server changes steps: outcomes and lookups are call commands, compensations unwind commands.
    throw new SagaError(
      "CONFLICT",
      "Over HTTP a step is changed with the commands (POST /steps/{stepId}/outcome, /reconcile, /compensation; /runs/{runId}/unwind/next), never patched as a row.",
    );
  }

  async createPivot(input: NewPivot, _audit: AuditInput): Promise<PivotRecord> {
    const body = { summary: input.summary, plan: input.plan.map((i) => ({ tool: i.tool, args: i.args })), deadline: iso(input.deadline) ?? null };
    const res = await this.call(() => this.http.request("POST", path(api.requestPivot.path, { runId: input.runId }), api.requestPivot.response, body));
    return pivot(res.pivot);
  }

  async revisePivot(
    pivotId: string,
    revision: Pick<PivotRecord, "summary" | "plan" | "planHash" | "stagedStepIds" | "deadline">,
  ): Promise<PivotRecord | null> {
    // Over HTTP a revision is a new request for the run; the server revises the pending pivot.
    const current = await this.getPivot(pivotId);
    if (!current) return null;
    const body = { summary: revision.summary, plan: revision.plan.map((i) => ({ tool: i.tool, args: i.args })), deadline: iso(revision.deadline) ?? null };
    const res = await this.call(() => this.http.request("POST", path(api.requestPivot.path, { runId: current.runId }), api.requestPivot.response, body));
    return res.pivot.id === pivotId ? pivot(res.pivot) : null;
  }

  async getPivot(pivotId: string): Promise<PivotRecord | null> {
    return this.waitForPivot(pivotId, 0);
  }

  /** The pivot, long-polling up to `waitMs` while it is PENDING (the wait survives restarts: ask again). */
  async waitForPivot(pivotId: string, waitMs: number): Promise<PivotRecord | null> {
    const res = await this.getOrNull(() =>
      this.http.request("GET", `${path(api.getPivot.path, { pivotId })}?waitMs=${waitMs}`, api.getPivot.response, undefined, { extraTimeoutMs: waitMs }),
    );
    return res ? pivot(res.pivot) : null;
  }

  async listPivots(runId: string): Promise<PivotRecord[]> {
    const res = await this.call(() => this.http.request("GET", path(api.listPivots.path, { runId }), api.listPivots.response));
    return res.pivots.map(pivot);
  }

  async decidePivot(): Promise<PivotRecord | null> {
    throw new SagaError("CONFLICT", "Agents cannot decide pivots: a reviewer decides in the dashboard.");
  }

  async createEscalation(input: NewEscalation, a: AuditInput): Promise<CreateEscalationResult> {
    const { runId, id: _id, ...body } = input;
    const res = await this.call(() =>
      this.http.request("POST", path(api.raiseEscalation.path, { runId }), api.raiseEscalation.response, { escalation: body, event: event(a) }),
    );
    return { created: res.created, escalation: escalation(res.escalation) };
  }

  async getEscalation(escalationId: string): Promise<EscalationRecord | null> {
    const res = await this.getOrNull(() => this.http.request("GET", path(api.getEscalation.path, { escalationId }), api.getEscalation.response));
    return res ? escalation(res.escalation) : null;
  }

  async findEscalationByDedupeKey(dedupeKey: string): Promise<EscalationRecord | null> {
    const res = await this.call(() =>
      this.http.request("GET", `${api.findEscalation.path}?dedupeKey=${encodeURIComponent(dedupeKey)}`, api.findEscalation.response),
    );
    return res.escalation ? escalation(res.escalation) : null;
  }

  async listEscalations(filter: { runId?: string; status?: readonly EscalationStatus[] }): Promise<EscalationRecord[]> {
    if (!filter.runId) throw new SagaError("INVALID_ARGS", "Over HTTP, escalations are listed per run.", [{ path: "runId", message: "required" }]);
    const query = (filter.status ?? []).map((s) => `status=${s}`).join("&");
    const res = await this.call(() =>
      this.http.request("GET", `${path(api.listEscalations.path, { runId: filter.runId! })}${query ? `?${query}` : ""}`, api.listEscalations.response),
    );
    return res.escalations.map(escalation);
  }

  async resolveEscalation(): Promise<EscalationRecord | null> {
    throw new SagaError("CONFLICT", "Agents cannot resolve escalations: people do, in the dashboard.");
  }

  async createCorrection(input: NewCorrection, a: AuditInput): Promise<CorrectionRecord> {
    // Not draftedBy: what drafted a correction is the server's to record, never the caller's word
    // (the API does not take it, and refuses fields it does not declare).
    const { runId, id: _id, draftedBy: _draftedBy, ...body } = input;
    const res = await this.call(() =>
      this.http.request("POST", path(api.draftCorrection.path, { runId }), api.draftCorrection.response, { correction: body, event: event(a) }),
    );
    return correction(res.correction);
  }

  async listCorrections(runId: string): Promise<CorrectionRecord[]> {
    const res = await this.call(() => this.http.request("GET", path(api.listCorrections.path, { runId }), api.listCorrections.response));
    return res.corrections.map(correction);
  }

  async listAuditEvents(runId: string): Promise<AuditEventRecord[]> {
    const res = await this.call(() => this.http.request("GET", path(api.getRunAudit.path, { runId }), api.getRunAudit.response));
    return res.events.map(audit);
  }

  /** Asks a worker to unwind the run (one task per run); returns the task's id and status. */
  async requestUnwind(runId: string, reason: string): Promise<{ taskId: string; status: string; created: boolean }> {
    const res = await this.call(() => this.http.request("POST", path(workerApi.requestUnwind.path, { runId }), workerApi.requestUnwind.response, { reason }));
    return { taskId: res.task.id, status: res.task.status, created: res.created };
  }

  async toolPolicyVersion(tool: string): Promise<number | null> {
    if (!this.policyCache || Date.now() - this.policyCache.at > this.policyCacheMs) {
      const res = await this.call(() => this.http.request("GET", api.listTools.path, api.listTools.response));
      this.policyCache = { at: Date.now(), versions: new Map(res.tools.map((t) => [t.name, t.policyVersion])) };
    }
    return this.policyCache.versions.get(tool) ?? null;
  }
}

