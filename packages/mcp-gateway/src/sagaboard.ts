/**
 * What the gateway asks of Sagaboard, over the same agent API and call commands every client uses:
 * start or join the session's run, read its log, begin a call, report its outcome or what a lookup
 * found, declare the upstream's tools, read the tool table, and wait for a held call's decision.
 * The gateway decides nothing a person or the server decides: the gate, keys and replay are the
 * server's answers.
 */
import { createHash } from "node:crypto";
import {
  callsApi as calls,
  declarationsApi as declarations,
  DATE_FIELDS,
  fillPath,
  fromWire,
  httpCallPort,
  OutcomePipeline,
  runsApi as runs,
  Transport,
  type BeginCallAnswer,
  type CallOutcomeReport,
  type CallPort,
  type CompensationPlan,
  type PlanItemAddress,
  type ReconcileReport,
  type TransportOptions,
} from "@sagaboard/client/wire";
import type { Actor, EscalationRecord, Json, PivotRecord, RunRecord, StepRecord, TDeclarationResult, TToolManifest } from "@sagaboard/client";

const step = (w: object) => fromWire<StepRecord>(w, DATE_FIELDS.step);
const run = (w: object) => fromWire<RunRecord>(w, DATE_FIELDS.run);
const escalation = (w: object) => fromWire<EscalationRecord>(w, DATE_FIELDS.escalation);
const pivot = (w: object) => fromWire<PivotRecord>(w, DATE_FIELDS.pivot);

/** A row of the tool table as the gateway's token may use it. */
export interface TableTool {
  name: string;
  /** The class calls are decided with (IRREVERSIBLE while unreviewed). */
  toolClass: string;
  policyVersion: number;
  /** The compensating tool an admin paired it with. */
  compensator?: string | null;
  /** REVIEWED, UNREVIEWED or DISABLED. */
  status?: string;
  /** The hash of the definition the row was declared (and, reviewed, reviewed) with. */
  definitionHash?: string | null;
}

/** The agent's actor: the server replaces it with the token's own, it is sent for the type only. */
const ACTOR: Actor = { type: "agent", id: "mcp-gateway" };

export class Sagaboard {
  private readonly http: Transport;
  private readonly calls: CallPort;
  /** Confirmed outcomes waiting to go with the session's next call (packages/client/src/agent/client/outcome-pipeline.ts). */
  private readonly pipeline: OutcomePipeline;

  /** `outcomeLingerMs`: how long a confirmed call's outcome may wait for the session's next call (default 0: each in its own request, before the client is answered). */
  constructor(options: TransportOptions & { outcomeLingerMs?: number }) {
    this.http = new Transport(options);
    this.pipeline = new OutcomePipeline(options.outcomeLingerMs ?? 0, async ({ stepId, ...outcome }) => {
      await this.http.request("POST", fillPath(calls.reportOutcome.path, { stepId }), calls.reportOutcome.response, outcome);
    });
    this.calls = httpCallPort(this.http, (fn) => fn(), this.pipeline);
  }

  /** Sends the outcomes still waiting for their session's next call (before reads, a pivot request, and stopping). */
  flush(): Promise<void> {
    return this.pipeline.flush();
  }

  /**
   * The session's run. With `sessionName`, the run is created under an Idempotency-Key derived from
   * it, so a restarted gateway (or a reconnecting client) naming the same session joins the same run.
   */
  async startRun(title: string, sessionName: string | null, metadata: Json): Promise<RunRecord> {
    const idempotencyKey = sessionName ? `mcp-session-${createHash("sha256").update(sessionName).digest("hex").slice(0, 40)}` : true;
    return run((await this.http.request("POST", runs.createRun.path, runs.createRun.response, { title, metadata }, { idempotencyKey })).run);
  }

  /** A run named by the client (`_meta["dev.sagaboard/runId"]`), if the token's agent owns it. */
  async getRun(runId: string): Promise<RunRecord> {
    return run((await this.http.request("GET", fillPath(runs.getRun.path, { runId }), runs.getRun.response)).run);
  }

  /** The run's saga log, by step index. */
  async steps(runId: string): Promise<StepRecord[]> {
    await this.flush();
    return (await this.http.request("GET", fillPath(runs.listSteps.path, { runId }), runs.listSteps.response)).steps.map(step);
  }

  /** Declares the upstream's tools into the token's namespace; new or changed ones land unreviewed. */
  declare(manifest: TToolManifest): Promise<TDeclarationResult> {
    return this.http.request("POST", declarations.declareTools.path, declarations.declareTools.response, manifest);
  }

  /** The tool table as this token may use it. */
  async tools(): Promise<TableTool[]> {
    return (await this.http.request("GET", runs.listTools.path, runs.listTools.response)).tools;
  }

  /** The escalation a held call raised. */
  async escalation(escalationId: string): Promise<EscalationRecord> {
    return escalation((await this.http.request("GET", fillPath(runs.getEscalation.path, { escalationId }), runs.getEscalation.response)).escalation);
  }

  /**
   * Begins a call at `cursor`, or as an item of an approved plan (the server decides: call, replay,
   * failed, reconcile or held).
   */
  begin(runId: string, cursor: number, tool: string, args: Json, options: { planItem?: PlanItemAddress; compensation?: CompensationPlan | null } = {}): Promise<BeginCallAnswer> {
    const { planItem, compensation = null } = options;
    return this.calls.begin({ runId, cursor, tool, args, proposal: { compensation, correction: null, audience: [] }, tryAppend: !planItem, actor: ACTOR, ...(planItem ? { planItem } : {}) });
  }

  /** Asks for the pivot: the run's staged calls and this plan, approved together by one person. */
  async requestPivot(runId: string, summary: string, plan: { tool: string; args: Json }[]): Promise<PivotRecord> {
    await this.flush(); // the staged calls' outcomes first: the reviewer sees them done
    return pivot((await this.http.request("POST", fillPath(runs.requestPivot.path, { runId }), runs.requestPivot.response, { summary, plan })).pivot);
  }

  /** A pivot, waiting up to `waitMs` (at most 30 s) while it is pending. */
  async pivot(pivotId: string, waitMs = 0): Promise<PivotRecord> {
    const wait = Math.min(30_000, Math.max(0, waitMs));
    return pivot((await this.http.request("GET", `${fillPath(runs.getPivot.path, { pivotId })}?waitMs=${wait}`, runs.getPivot.response, undefined, { extraTimeoutMs: wait })).pivot);
  }

  /** The run's pivots, oldest first. */
  async pivots(runId: string): Promise<PivotRecord[]> {
    await this.flush();
    return (await this.http.request("GET", fillPath(runs.listPivots.path, { runId }), runs.listPivots.response)).pivots.map(pivot);
  }

  /** Completes the run (refused while a step is unsettled or a pivot pending); a confirmed outcome still waiting goes with it. */
  complete(runId: string): Promise<RunRecord> {
    return this.calls.complete({ runId, actor: ACTOR });
  }

  /** What the upstream answered for a step in flight. */
  outcome(step: StepRecord, outcome: CallOutcomeReport): Promise<StepRecord> {
    return this.calls.outcome({ step, outcome, attempts: 1, actor: ACTOR });
  }

  /** What looking the step up found (or the late answer the upstream sent after a cancel). */
  reconciled(step: StepRecord, report: ReconcileReport): Promise<StepRecord> {
    return this.calls.reconciled({ step, report, actor: ACTOR });
  }
}
