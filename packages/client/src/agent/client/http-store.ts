/**
 * A Sagaboard server as an agent process's engine sees it (`SagaServer`, packages/client/src/saga/agent-port.ts):
 * `new SagaEngine({ store: new HttpSagaStore({ baseUrl, token }), registry })`. It is not a store:
 * the server decides every call, pivot request, unwind and finish with the same functions as the
 * engine in process, and this client sends the commands and reads runs, steps and pivots. Agents
 * never approve or resolve anything: there is no such command.
 */
import * as api from "../../protocol/contracts/runs";
import * as workerApi from "../../protocol/contracts/worker";
import { DATE_FIELDS, fromWire } from "../../protocol/schemas/saga";
import { ApprovalRequiredError, SagaError, type SagaErrorCode, SAGA_ERROR_HTTP_STATUS } from "../../saga/errors";
import type { CallPort, PivotPort, SagaServer, UnwindPort } from "../../saga/agent-port";
import type { AuditEventRecord, AuditInput, CorrectionRecord, EscalationRecord, NewRun, PivotRecord, RunRecord, StepRecord } from "../../saga/store";
import type { EscalationStatus } from "../../saga/vocabulary";
import * as callsApi from "../../protocol/contracts/calls";
import { httpCallPort, httpUnwindPort } from "./http-calls";
import { DEFAULT_LINGER_MS, flushProcess, OutcomePipeline } from "./outcome-pipeline";
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

const iso = (d: Date | null | undefined) => (d === undefined ? undefined : d === null ? null : d.toISOString());

/** Options of the HTTP client. */
export type HttpSagaStoreOptions = TransportOptions & {
  /** No longer used: the server reads tool policy versions itself (kept so existing options still type-check). */
  policyCacheMs?: number;
  /**
   * Pipelining, opt-in: how long a confirmed call's outcome may wait to go to the server with the
   * run's next call or completion, so a step costs one request (then it is sent alone; 250 is a good
   * value). Default 0: every outcome in its own request, durable before `call()` returns. A process
   * that ends sends what waits first (beforeExit, SIGTERM/SIGINT, process.exit, an uncaught throw).
   * See packages/client/src/agent/client/outcome-pipeline.ts.
   */
  outcomeLingerMs?: number;
};

/** The engine's client for a Sagaboard server (the name is historical: it implements `SagaServer`, not the store). */
export class HttpSagaStore implements SagaServer {
  private readonly http: Transport;
  /** The engine asks the server's call commands instead of deciding on this store. */
  readonly calls: CallPort;
  /** The unwind commands: the server walks the log; this process does what needs its connectors. */
  readonly unwinds: UnwindPort;
  /** The pivot request: the server reads the plan's versions and classes from its tool table (packages/client/src/saga/request-pivot.ts). */
  readonly pivots: PivotPort;

  /** Confirmed outcomes waiting for their run's next command. */
  private readonly pipeline: OutcomePipeline;

  constructor(options: HttpSagaStoreOptions) {
    this.http = new Transport(options);
    this.pipeline = new OutcomePipeline(
      options.outcomeLingerMs ?? DEFAULT_LINGER_MS,
      async (previous) => {
        const { stepId, ...outcome } = previous;
        await this.call(() => this.http.request("POST", path(callsApi.reportOutcome.path, { stepId }), callsApi.reportOutcome.response, outcome));
      },
      ({ stepId, ...outcome }) => this.http.describe(path(callsApi.reportOutcome.path, { stepId }), outcome),
    );
    this.calls = httpCallPort(this.http, (fn) => this.call(fn), this.pipeline);
    this.unwinds = httpUnwindPort(this.http, (fn) => this.flushed(fn));
    this.pivots = {
      request: async (input) => {
        const body = { summary: input.summary, plan: input.plan.map((i) => ({ tool: i.tool, args: i.args })), deadline: iso(input.deadline) ?? null };
        const res = await this.flushed(() => this.http.request("POST", path(api.requestPivot.path, { runId: input.runId }), api.requestPivot.response, body));
        return pivot(res.pivot);
      },
    };
  }

  /**
   * Sends every confirmed outcome still waiting for its run's next call (each in its own request) and
   * waits for the answers. Everything this client asks besides a call or a completion does it first,
   * so it reads its own writes; call it before a process that made calls stops without completing.
   */
  flush(): Promise<void> {
    return this.pipeline.flush();
  }

  /** `call`, after the outcomes waiting in this process (this client's and any other's) are sent. */
  private async flushed<T>(fn: () => Promise<T>): Promise<T> {
    await flushProcess({ except: this.pipeline, refusals: "keep" });
    if (!this.pipeline.idle) await this.pipeline.flush();
    return this.call(fn);
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
      return await this.flushed(fn);
    } catch (e) {
      if (e instanceof SagaError && e.httpStatus === 404) return null;
      throw e;
    }
  }

  /** Starts a run; the server records its agent (the token's name), whatever `input.agent` says. */
  async createRun(input: NewRun, _audit?: AuditInput): Promise<RunRecord> {
    const res = await this.call(() =>
      this.http.request("POST", api.createRun.path, api.createRun.response, { title: input.title, onBehalfOf: input.onBehalfOf, metadata: input.metadata }, { idempotencyKey: true }),
    );
    return run(res.run);
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    const res = await this.getOrNull(() => this.http.request("GET", path(api.getRun.path, { runId }), api.getRun.response));
    return res ? run(res.run) : null;
  }

  async listSteps(runId: string): Promise<StepRecord[]> {
    const res = await this.flushed(() => this.http.request("GET", path(api.listSteps.path, { runId }), api.listSteps.response));
    return res.steps.map(step);
  }

  async getStep(stepId: string): Promise<StepRecord | null> {
    const res = await this.getOrNull(() => this.http.request("GET", path(api.getStep.path, { stepId }), api.getStep.response));
    return res ? step(res.step) : null;
  }

  /** The pivot, or null. */
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
    const res = await this.flushed(() => this.http.request("GET", path(api.listPivots.path, { runId }), api.listPivots.response));
    return res.pivots.map(pivot);
  }

  async getEscalation(escalationId: string): Promise<EscalationRecord | null> {
    const res = await this.getOrNull(() => this.http.request("GET", path(api.getEscalation.path, { escalationId }), api.getEscalation.response));
    return res ? escalation(res.escalation) : null;
  }

  async findEscalationByDedupeKey(dedupeKey: string): Promise<EscalationRecord | null> {
    const res = await this.flushed(() =>
      this.http.request("GET", `${api.findEscalation.path}?dedupeKey=${encodeURIComponent(dedupeKey)}`, api.findEscalation.response),
    );
    return res.escalation ? escalation(res.escalation) : null;
  }

  async listEscalations(filter: { runId?: string; status?: readonly EscalationStatus[] }): Promise<EscalationRecord[]> {
    if (!filter.runId) throw new SagaError("INVALID_ARGS", "Over HTTP, escalations are listed per run.", [{ path: "runId", message: "required" }]);
    const query = (filter.status ?? []).map((s) => `status=${s}`).join("&");
    const res = await this.flushed(() =>
      this.http.request("GET", `${path(api.listEscalations.path, { runId: filter.runId! })}${query ? `?${query}` : ""}`, api.listEscalations.response),
    );
    return res.escalations.map(escalation);
  }

  async listCorrections(runId: string): Promise<CorrectionRecord[]> {
    const res = await this.flushed(() => this.http.request("GET", path(api.listCorrections.path, { runId }), api.listCorrections.response));
    return res.corrections.map(correction);
  }

  async listAuditEvents(runId: string): Promise<AuditEventRecord[]> {
    const res = await this.flushed(() => this.http.request("GET", path(api.getRunAudit.path, { runId }), api.getRunAudit.response));
    return res.events.map(audit);
  }

  /** Asks a worker to unwind the run (one task per run); returns the task's id and status. */
  async requestUnwind(runId: string, reason: string): Promise<{ taskId: string; status: string; created: boolean }> {
    const res = await this.flushed(() => this.http.request("POST", path(workerApi.requestUnwind.path, { runId }), workerApi.requestUnwind.response, { reason }));
    return { taskId: res.task.id, status: res.task.status, created: res.created };
  }


}

