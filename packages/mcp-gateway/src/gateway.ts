/**
 * The MCP gateway: an MCP server towards the client, an MCP client towards the real server, and the
 * saga log in between. A side-effecting `tools/call` is begun on Sagaboard first (an intent row and a
 * key from the run, the step and the tool), forwarded with the key in `_meta`, and its outcome
 * recorded; a re-sent call is answered from the log. The server decides every call (the gate, the
 * keys, replay); the gateway only addresses it and carries it out. See README.md for the rules.
 */
import { SagaboardApiError, type Json, type StepRecord } from "@sagaboard/client";
import { argsHash, withTraceparent, type BeginCallAnswer, type CompensationPlan } from "@sagaboard/client/wire";
import { ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { KEY_META, type RawAnswer, type Upstream } from "./upstream";
import type { Lookup } from "./lookups";
import { inToolCallSpan } from "./spans";
import { proposeCompensation } from "./undo";
import type { Sagaboard, TableTool } from "./sagaboard";

/** `_meta` a client may send: its own key for a logical call, a run to join, a deliberate repeat. */
export const CLIENT_KEY_META = KEY_META;
export const RUN_META = "dev.sagaboard/runId";
export const REPEAT_META = "dev.sagaboard/repeat";
/**
 * The W3C trace context an MCP client sends for OpenTelemetry in a request's `_meta` (`traceparent`,
 * as instrumented MCP clients do): the parent of the gateway's span for the call, whose context is the
 * `traceparent` of the gateway's requests to Sagaboard for it (the client's own when the gateway does
 * not trace), so the server's spans for it join the client's trace.
 */
export const TRACEPARENT_META = "traceparent";

/**
 * Points in a call where a test kills the gateway (`SAGABOARD_MCP_CRASH_AT`): before the intent is
 * begun, after it is committed, after the server answered (nothing recorded), after the outcome is
 * recorded (the client not yet answered), and after the gateway's deadline recorded UNKNOWN (the late
 * answer not yet heard).
 */
export const CRASH_POINTS = ["before_intent", "after_intent", "after_upstream", "after_outcome", "after_unknown"] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/** An MCP tool result. */
export type ToolResult = { content: { type: string; text?: string }[]; isError?: boolean; structuredContent?: Record<string, unknown>; _meta?: Record<string, unknown> };

/** The real server's tools as last listed, with each definition's hash (tool-watch.ts's ToolCatalog). */
export interface ToolSource {
  /** A tool by its MCP name. */
  tool(name: string): Tool | undefined;
  /** Every tool. */
  tools(): Tool[];
  /** The hash of a tool's definition as last listed. */
  hashOf(name: string): string | undefined;
  /** Lists (and declares) the tools again. */
  refresh(): Promise<void>;
}

export interface GatewayOptions {
  sagaboard: Sagaboard;
  upstream: Upstream;
  /** The tools the real server lists, watched live. */
  tools: ToolSource;
  /** The name the real server gives in `initialize` (built-in lookups and compensations go by it). */
  serverName?: string;
  /** The namespace the token declares into (`<token name>`). */
  namespace: string;
  /** The session's run. */
  runId: string;
  /** The dashboard's base URL, for links in held answers. */
  dashboardUrl: string;
  /** How long a held call waits for a reviewer before answering "held" (default 20 s). */
  holdWaitMs?: number;
  /** How long a forwarded call may take before its outcome is recorded UNKNOWN (default 60 s). */
  callTimeoutMs?: number;
  /** How long a call recorded UNKNOWN keeps listening for the upstream's late answer (default 5 min). */
  lateWaitMs?: number;
  /**
   * After the client cancels or gives up on a call, how long the server's call is kept open for its
   * answer before the cancel is sent there (default 5 min; 0: at once). The late answer settles the step.
   */
  cancelGraceMs?: number;
  /** Lookups by the upstream's tool name. */
  lookups: Record<string, Lookup>;
  /** Pause between the two lookups that prove an absence (search lag; default 250 ms). */
  recheckAfterMs?: number;
  /** How long the tool table's classes are trusted before they are read again (default 5 s). */
  tableCacheMs?: number;
  crashAt?: CrashPoint | null;
}

/** The tool table's local name of an MCP tool name (`longRunningOperation` -> `long_running_operation`). */
export function localName(mcpName: string): string {
  const local = mcpName
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, "_")
    .replace(/^[^a-z]+/, "")
    .slice(0, 40);
  return local || "tool";
}

/** The tool table's name of an MCP tool: its local name in the namespace. */
export function tableName(namespace: string, mcpName: string): string {
  return `${namespace}.${localName(mcpName)}`;
}

const text = (t: string, isError = false, meta?: Record<string, unknown>): ToolResult => ({ content: [{ type: "text", text: t }], ...(isError ? { isError } : {}), ...(meta ? { _meta: meta } : {}) });

/** A JSON-RPC error code that says the server refused the request before running the tool. */
function refusedBeforeRunning(code: number): boolean {
  return code === -32600 || code === -32601 || code === -32602;
}

class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

export class Gateway {
  private readonly o: Required<Omit<GatewayOptions, "crashAt" | "serverName">> & { crashAt: CrashPoint | null; serverName?: string };
  private steps: StepRecord[] = [];
  /** The cursor after the last step this session addressed. */
  private nextCursor = 0;
  private readonly clientKeys = new Map<string, { tool: string; hash: string; stepIdx: number | null }>();
  /** Steps recorded UNKNOWN that this process is still settling (waiting for a late answer, then the lookup). */
  private readonly settling = new Map<string, Promise<void>>();
  private table: { at: number; tools: Map<string, TableTool> } | null = null;
  /** Calls this gateway put in a pivot's plan, by `tool:argsHash`: committed as that plan item. */
  private readonly planned = new Map<string, { pivotId: string; index: number }>();
  private readonly mutex = new Mutex();
  /** Calls answered "held" (by `tool:argsHash`) that the client has not yet re-sent to run. */
  private readonly held = new Set<string>();
  /** Read-only (PURE) calls in flight, by `tool:argsHash`: a re-send after a client gave up joins the one running. */
  private readonly reads = new Map<string, SharedCall>();

  constructor(options: GatewayOptions) {
    this.o = {
      holdWaitMs: 20_000,
      callTimeoutMs: 60_000,
      lateWaitMs: 5 * 60_000,
      cancelGraceMs: 5 * 60_000,
      recheckAfterMs: 250,
      tableCacheMs: 5_000,
      ...options,
      crashAt: options.crashAt ?? null,
    };
  }

  /**
   * Settles every step of the run still in flight (INTENDED, UNKNOWN), as a gateway that joins a run
   * after a restart must before it forwards anything: the late answer kept by key, else the tool's
   * lookup, else an OUTCOME_UNKNOWN escalation a person decides. Returns how many it settled.
   */
  async settleInFlight(): Promise<number> {
    let settled = 0;
    for (const step of this.steps.filter((st) => st.status === "INTENDED" || st.status === "UNKNOWN")) {
      const now = await this.settle(step);
      if (now !== "still_running") {
        this.remember(now, null);
        settled++;
      }
    }
    return settled;
  }

  /** Reads the run's log, so a restarted gateway answers re-sent calls from it. */
  async load(): Promise<void> {
    this.steps = await this.o.sagaboard.steps(this.o.runId);
    this.nextCursor = this.steps.length === 0 ? 0 : Math.max(...this.steps.map((s) => s.stepIdx)) + 1;
    // Plans this session asked for before a restart: their calls are committed as plan items.
    for (const pivot of await this.o.sagaboard.pivots(this.o.runId)) {
      pivot.plan.forEach((item, index) => this.planned.set(`${item.tool}:${item.argsHash}`, { pivotId: pivot.id, index }));
    }
  }

  get runId(): string {
    return this.o.runId;
  }

  /**
   * The client's session ended cleanly: once what is in flight is settled (waiting at most `waitMs`
   * for late answers and lookups), the run is completed, so the dashboard shows the session finished.
   * It stays RUNNING, and the sentence returned says why, while a held call still waits for a person
   * (a client naming the run in `_meta` may re-send it) or the server refuses (a step still unsettled,
   * a pivot pending).
   */
  async finish(waitMs: number): Promise<string> {
    // The call under way (the session's lock) and the steps still being settled after an UNKNOWN.
    const inFlight = [this.mutex.run(async () => undefined), ...this.settling.values()];
    let timer: NodeJS.Timeout | undefined;
    const settled = await Promise.race([Promise.all(inFlight).then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), waitMs)))]);
    clearTimeout(timer);
    if (!settled) return `run ${this.o.runId} stays RUNNING: a call was still under way or being settled when the session ended; Sagaboard raises it for a person if nothing settles it.`;
    if (this.held.size > 0) {
      return `run ${this.o.runId} stays RUNNING: ${this.held.size} held call(s) wait for a person; a client naming the run in _meta["${RUN_META}"] may re-send them after the approval.`;
    }
    try {
      await this.o.sagaboard.complete(this.o.runId);
      return `run ${this.o.runId} completed (the client's session ended).`;
    } catch (e) {
      if (e instanceof SagaboardApiError) return `run ${this.o.runId} stays RUNNING: ${e.message}`;
      throw e;
    }
  }

  private async tableTool(name: string): Promise<TableTool | undefined> {
    if (!this.table || Date.now() - this.table.at > this.o.tableCacheMs) {
      const tools = await this.o.sagaboard.tools();
      this.table = { at: Date.now(), tools: new Map(tools.map((t) => [t.name, t])) };
    }
    return this.table.tools.get(name);
  }

  /** A read-only call, passed through; re-sends of the same call while it runs share it (SharedCall). */
  private read(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    const key = `${name}:${argsHash(args as Json)}`;
    let call = this.reads.get(key);
    if (!call) {
      const started = new SharedCall(
        (upstreamSignal) => this.o.upstream.client.callTool({ name, arguments: args }, undefined, { signal: upstreamSignal, timeout: this.o.callTimeoutMs + this.o.cancelGraceMs }) as Promise<ToolResult>,
        this.o.cancelGraceMs,
      );
      this.reads.set(key, started);
      void started.answer.catch(() => undefined).finally(() => this.reads.get(key) === started && this.reads.delete(key));
      call = started;
    }
    return call.join(signal);
  }

  /**
   * One `tools/call` from the client: its span when the gateway traces (spans.ts), under the
   * client's trace context when its `_meta` carries one (a malformed one is ignored); the requests to
   * Sagaboard for it carry the span's context, else the client's.
   */
  call(name: string, rawArgs: Record<string, unknown> | undefined, meta: Record<string, unknown> | undefined, signal: AbortSignal, holdWaitMs = this.o.holdWaitMs): Promise<ToolResult> {
    return inToolCallSpan(name, this.o.runId, meta?.[TRACEPARENT_META], (traceparent) => withTraceparent(traceparent, () => this.callTool(name, rawArgs, meta, signal, holdWaitMs)));
  }

  /**
   * A `tools/call` the client asked to run as an MCP task: the client holds a task handle at once and
   * polls it (tasks/get, tasks/result) while the call waits for a person, however long that takes.
   * The call goes through the same log as any other: each attempt answers held (the task's status
   * says why and where a person decides), and once the escalation or the pivot is decided it is sent
   * again, as a client re-sending it would, and runs once. The wait for the decision is outside the
   * session's lock, so the session's other calls go on meanwhile. Ends with the call's result, a
   * refusal, or, when `until` passes with nobody deciding (or the client cancelled the task), the
   * answer saying it is still held.
   */
  async callAsTask(
    name: string,
    rawArgs: Record<string, unknown> | undefined,
    meta: Record<string, unknown> | undefined,
    task: { signal: AbortSignal; until: number; status: (message: string) => Promise<void>; stillWanted: () => Promise<boolean> },
  ): Promise<ToolResult> {
    for (;;) {
      const answer = await this.call(name, rawArgs, meta, task.signal, 0);
      const held = answer._meta?.["dev.sagaboard/held"] === true;
      if (!held || task.signal.aborted) return answer;
      await task.status(answer.content.map((c) => c.text ?? "").join(" "));
      const decided = await this.untilDecided(answer._meta ?? {}, task.signal, task.until);
      // A task the client cancelled while it waited is never sent, even once approved.
      if (!decided || !(await task.stillWanted())) return answer;
    }
  }

  /** Waits (polling, outside the session's lock) until a held call's escalation or pivot is decided; false when `until` passes first. */
  private async untilDecided(meta: Record<string, unknown>, signal: AbortSignal, until: number): Promise<boolean> {
    const escalationId = typeof meta["dev.sagaboard/escalationId"] === "string" ? meta["dev.sagaboard/escalationId"] : null;
    const pivotId = typeof meta["dev.sagaboard/pivotId"] === "string" ? meta["dev.sagaboard/pivotId"] : null;
    if (!pivotId) return escalationId !== null && (await this.waitForDecision(escalationId, signal, until - Date.now())) !== "waiting";
    while (!signal.aborted && Date.now() < until) {
      // The pivot read waits on the server while it is pending (at most 30 s a request).
      if ((await this.o.sagaboard.pivot(pivotId, Math.min(30_000, Math.max(0, until - Date.now())))).status !== "PENDING") return true;
    }
    return false;
  }

  /**
   * A call of a tool the server does not list is a JSON-RPC error (nothing is logged); anything that
   * goes wrong on the way (Sagaboard unreachable, a broken link) is an answer that says so, never a
   * bare internal error, and the call is safe to send again.
   */
  private async callTool(name: string, rawArgs: Record<string, unknown> | undefined, meta: Record<string, unknown> | undefined, signal: AbortSignal, holdWaitMs: number): Promise<ToolResult> {
    if (!this.o.tools.tool(name)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${name}: the server behind this gateway lists ${this.o.tools.tools().map((t) => t.name).join(", ") || "no tools"}.`);
    }
    try {
      return await this.checkedCall(name, rawArgs, meta, signal, holdWaitMs);
    } catch (e) {
      if (e instanceof McpError) throw e;
      return text(`The gateway could not finish ${name}: ${(e as Error).message}. Call it again with the same arguments; it will not run twice.`, true, { "dev.sagaboard/error": "gateway" });
    }
  }

  private async checkedCall(name: string, rawArgs: Record<string, unknown> | undefined, meta: Record<string, unknown> | undefined, signal: AbortSignal, holdWaitMs: number): Promise<ToolResult> {
    const args = (rawArgs ?? {}) as Json;
    const full = tableName(this.o.namespace, name);
    const row = await this.tableTool(full);
    // The table reviewed another definition than the one the server lists now: declared again (the
    // table holds it unreviewed from then on), and nothing is sent under the unreviewed one.
    const current = this.o.tools.hashOf(name);
    if (row?.status === "REVIEWED" && row.definitionHash && current && row.definitionHash !== current) {
      this.table = null;
      await this.o.tools.refresh();
      return text(`${name}'s definition changed since an admin reviewed it: it was declared again and waits for a review at ${this.o.dashboardUrl}/admin/tools. Nothing was sent.`, true, {
        "dev.sagaboard/held": true,
        "dev.sagaboard/reason": "DEFINITION_CHANGED",
      });
    }
    // Reviewed as PURE (read-only) in the tool table: nothing to log, forwarded as it is.
    if (row?.toolClass === "PURE") return this.read(name, rawArgs ?? {}, signal);

    const hash = argsHash(args);
    const clientKey = typeof meta?.[CLIENT_KEY_META] === "string" ? (meta[CLIENT_KEY_META] as string) : null;
    if (clientKey) {
      const earlier = this.clientKeys.get(clientKey);
      if (earlier && (earlier.tool !== full || earlier.hash !== hash)) {
        return text(
          `Refused: the key ${clientKey} was used for ${earlier.tool === full ? "this tool with other arguments" : earlier.tool}; nothing was sent to the server. Use a new key for a new call, or re-send the original arguments.`,
          true,
        );
      }
    }
    return this.mutex.run(() => this.decide(name, full, args, hash, clientKey, meta?.[REPEAT_META] === true, signal, holdWaitMs));
  }

  /** The cursor of the call: the step this call already has (a re-send), or the next one. */
  private cursorFor(full: string, hash: string, clientKey: string | null, repeat: boolean): number {
    if (clientKey) {
      const earlier = this.clientKeys.get(clientKey);
      if (earlier?.stepIdx !== null && earlier?.stepIdx !== undefined) return earlier.stepIdx;
      return this.nextCursor;
    }
    if (repeat) return this.nextCursor;
    const same = this.steps.filter((s) => s.tool === full && s.argsHash === hash).at(-1);
    return same ? same.stepIdx : this.nextCursor;
  }

  private remember(step: StepRecord, clientKey: string | null): void {
    this.steps = [...this.steps.filter((s) => s.id !== step.id), step];
    this.nextCursor = Math.max(this.nextCursor, step.stepIdx + 1);
    if (clientKey) this.clientKeys.set(clientKey, { tool: step.tool, hash: step.argsHash, stepIdx: step.stepIdx });
  }

  private async decide(name: string, full: string, args: Json, hash: string, clientKey: string | null, repeat: boolean, signal: AbortSignal, holdWaitMs: number): Promise<ToolResult> {
    if (clientKey && !this.clientKeys.has(clientKey)) this.clientKeys.set(clientKey, { tool: full, hash, stepIdx: null });
    const cursor = this.cursorFor(full, hash, clientKey, repeat);
    // A call the gateway put in a pivot's plan is committed as that plan's item, with the approved arguments.
    let planned = this.planned.get(`${full}:${hash}`) ?? null;
    for (let attempt = 1; attempt <= 6; attempt++) {
      let sent = args;
      let answer: BeginCallAnswer;
      try {
        if (planned) {
          const pivot = await this.o.sagaboard.pivot(planned.pivotId, Math.min(holdWaitMs, 30_000));
          if (pivot.status === "PENDING") {
            this.held.add(`${full}:${hash}`);
            return heldForPivot(name, pivot.id, this.o.dashboardUrl);
          }
          if (pivot.status !== "APPROVED") {
            this.planned.delete(`${full}:${hash}`);
            this.held.delete(`${full}:${hash}`);
            return text(`A reviewer ${pivot.status === "REJECTED" ? "rejected" : "set aside"} the plan with ${name}${pivot.reason ? `: ${pivot.reason}` : ""}; it was not sent.`, true, { "dev.sagaboard/held": false, "dev.sagaboard/pivotId": pivot.id });
          }
          sent = (pivot.plan[planned.index]?.args ?? args) as Json;
          answer = await this.o.sagaboard.begin(this.o.runId, cursor, full, sent, { planItem: planned, compensation: await this.propose(name, full, sent) });
        } else {
          const compensation = await this.propose(name, full, args);
          this.crash("before_intent");
          answer = await this.o.sagaboard.begin(this.o.runId, cursor, full, args, { compensation });
        }
      } catch (e) {
        if (e instanceof SagaboardApiError) return text(`Sagaboard refused ${name}: ${e.message}`, true, { "dev.sagaboard/error": e.code });
        throw e;
      }
      if (answer.kind === "held") {
        this.held.add(`${full}:${hash}`);
        // An irreversible call after staged ones: one person approves them together on the pivot screen.
        if (!planned && answer.reason === "IRREVERSIBLE" && this.staged().length > 0) {
          const pivot = await this.o.sagaboard
            .requestPivot(this.o.runId, `The MCP client staged ${this.staged().length} call(s) (${[...new Set(this.staged().map((st) => st.tool))].join(", ")}) and now asks for ${full}, which cannot be undone. Approve them together, or reject and the staged calls can be unwound.`, [{ tool: full, args }])
            .catch(() => null);
          if (pivot) {
            planned = { pivotId: pivot.id, index: 0 };
            this.planned.set(`${full}:${hash}`, planned);
            continue;
          }
        }
        const decided = await this.waitForDecision(answer.escalationId, signal, holdWaitMs);
        if (decided === "approved") continue;
        if (decided === "rejected") {
          this.held.delete(`${full}:${hash}`);
          return text(`A reviewer rejected ${name} with these arguments; it was not sent. ${answer.message}`, true, { "dev.sagaboard/held": false });
        }
        const where = answer.escalationId ? ` Review it at ${this.o.dashboardUrl}/escalations/${answer.escalationId}.` : "";
        return text(
          `${name} is held for a person's approval and was not sent: ${answer.message}${where} Call it again with the same arguments after the approval; it runs once.`,
          true,
          { "dev.sagaboard/held": true, "dev.sagaboard/escalationId": answer.escalationId, "dev.sagaboard/reason": answer.reason },
        );
      }
      this.remember(answer.step, clientKey);
      this.held.delete(`${full}:${hash}`);
      if (answer.kind === "replay") return resultOf(answer.step);
      if (answer.kind === "failed") return failureOf(answer.step, name);
      if (answer.kind === "reconcile") {
        const settled = await this.settle(answer.step);
        if (settled === "still_running") {
          return text(`${name} (step ${answer.step.stepIdx}) is still running on the server and its answer has not come; call it again with the same arguments later. It will not run twice.`, true, {
            "dev.sagaboard/outcome": "unknown",
          });
        }
        this.remember(settled, clientKey);
        if (settled.status === "UNKNOWN" || settled.status === "INTENDED") {
          return text(`Whether ${answer.step.tool} (step ${settled.stepIdx}) happened is unknown and could not be looked up; a person decides it on the dashboard. Nothing was sent again.`, true, {
            "dev.sagaboard/outcome": "unknown",
          });
        }
        continue; // CONFIRMED: replay; NOT_EXECUTED: retried under the same key
      }
      const result = await this.forward(name, sent, answer.step, signal);
      // The approved plan's arguments are a copy of the client's unless a reviewer edited them.
      return argsHash(sent) === hash ? result : { ...result, _meta: { ...result._meta, "dev.sagaboard/editedByReviewer": true, "dev.sagaboard/sentArguments": sent } };
    }
    return text(`The log of run ${this.o.runId} kept changing while ${name} was being recorded; call it again.`, true);
  }

  /** The compensation a call proposes when an admin paired its tool with a compensator (undo.ts). */
  private async propose(name: string, full: string, args: Json): Promise<CompensationPlan | null> {
    const row = await this.tableTool(full);
    if (!row?.compensator) return null;
    return proposeCompensation({ client: this.o.upstream.client, serverName: this.o.serverName, mcpName: name, row, args: args as Record<string, unknown> });
  }

  /** The run's staged calls that happened (before any pivot). */
  private staged(): StepRecord[] {
    return this.steps.filter((st) => st.phase === "STAGING" && st.status === "CONFIRMED");
  }

  /** Polls the held call's escalation until it is decided or the wait is over. */
  private async waitForDecision(escalationId: string | null, signal: AbortSignal, holdWaitMs: number): Promise<"approved" | "rejected" | "waiting"> {
    if (!escalationId) return "waiting";
    const until = Date.now() + holdWaitMs;
    while (!signal.aborted) {
      const escalation = await this.o.sagaboard.escalation(escalationId);
      if (escalation.status === "RESOLVED") return (escalation.resolution as { approved?: unknown } | null)?.approved === true ? "approved" : "rejected";
      if (Date.now() + 1000 > until) return "waiting";
      await new Promise((r) => setTimeout(r, 1000));
    }
    return "waiting";
  }

  /**
   * Forwards a call whose intent is committed and records what the server answered. The gateway's own
   * deadline (`callTimeoutMs`) records UNKNOWN but leaves the request open, so its late answer still
   * settles the step; a client's cancel is forwarded upstream (the SDK sends `notifications/cancelled`)
   * and the step is settled by a short wait for an answer, then by its lookup.
   */
  private async forward(name: string, args: Json, step: StepRecord, clientSignal: AbortSignal): Promise<ToolResult> {
    this.crash("after_intent");
    const meta = { [KEY_META]: step.stepKey };
    // The client's cancel is not passed on at once: the server's call stays open for the grace, so its
    // answer (the effect may be happening) settles the step instead of being lost.
    const upstreamAbort = new AbortController();
    const sent: Promise<RawAnswer | null> = this.o.upstream.client
      .callTool({ name, arguments: args as Record<string, unknown>, _meta: meta }, undefined, { signal: upstreamAbort.signal, timeout: this.o.callTimeoutMs + Math.max(this.o.lateWaitMs, this.o.cancelGraceMs) })
      .then(
        (result) => ({ result }),
        (e: { code?: number; message?: string }) =>
          typeof e?.code === "number" && refusedBeforeRunning(e.code) ? { error: { code: e.code, message: e.message ?? "" } } : null,
      );
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const deadline = new Promise<"deadline">((resolve) => (timer = setTimeout(() => resolve("deadline"), this.o.callTimeoutMs)));
    const gaveUp = new Promise<"cancelled">((resolve) => {
      if (clientSignal.aborted) return resolve("cancelled");
      onAbort = () => resolve("cancelled");
      clientSignal.addEventListener("abort", onAbort, { once: true });
    });
    const first = await Promise.race([sent, deadline, gaveUp]);
    clearTimeout(timer);
    if (onAbort) clientSignal.removeEventListener("abort", onAbort);
    this.crash("after_upstream");
    if (first === null || first === "deadline" || first === "cancelled") {
      // Timed out, cancelled or the link broke: the effect may have happened. UNKNOWN, never FAILED.
      const grace = Math.round(this.o.cancelGraceMs / 1000);
      const why =
        first === "cancelled"
          ? `the client cancelled the call; the gateway keeps the server's call open ${grace} s for its answer before cancelling it there`
          : first === "deadline"
            ? `no answer within ${Math.round(this.o.callTimeoutMs / 1000)} s`
            : "the link to the server broke";
      if (first === "cancelled") {
        const cancel = setTimeout(() => upstreamAbort.abort(), this.o.cancelGraceMs);
        void sent.finally(() => clearTimeout(cancel));
      }
      const unknown = await this.o.sagaboard.outcome(step, { kind: "unknown", message: `${why}; the gateway listens for a late answer, then looks the key up` });
      this.crash("after_unknown");
      this.remember(unknown, null);
      const late = first === null ? this.o.upstream.transport.answerFor(step.stepKey, Math.min(2_000, this.o.lateWaitMs)) : sent;
      const settling = this.settleLate(unknown, late, name);
      this.settling.set(step.id, settling);
      void settling.finally(() => this.settling.delete(step.id));
      return text(`The outcome of ${name} is unknown (${why.split(";")[0]}). Sagaboard is settling it by its key; call it again with the same arguments for its result. It will not run twice.`, true, {
        "dev.sagaboard/outcome": "unknown",
      });
    }
    const recorded = await this.record(step, first);
    this.crash("after_outcome");
    this.remember(recorded, null);
    return recorded.status === "CONFIRMED" ? resultOf(recorded) : failureOf(recorded, name);
  }

  /** A test's kill -9 at this point of a call (`SAGABOARD_MCP_CRASH_AT`); nothing otherwise. */
  private crash(at: CrashPoint): void {
    if (this.o.crashAt === at) process.kill(process.pid, "SIGKILL");
  }

  /** Records an answer of the real server for a step in flight. */
  private async record(step: StepRecord, raw: RawAnswer): Promise<StepRecord> {
    this.o.upstream.transport.forget(step.stepKey);
    if (raw.error) return this.o.sagaboard.outcome(step, { kind: "failed", reason: `mcp_error_${raw.error.code}`, message: raw.error.message, retryable: false });
    const result = raw.result as ToolResult;
    if (result?.isError) {
      const message = result.content?.map((c) => c.text ?? "").join(" ").slice(0, 1000) || "the tool answered an error";
      return this.o.sagaboard.outcome(step, { kind: "failed", reason: "tool_error", message, retryable: false });
    }
    return this.o.sagaboard.outcome(step, { kind: "confirmed", externalRef: null, result: result as unknown as Json });
  }

  /**
   * After an UNKNOWN: the late answer settles the step if it comes; otherwise its lookup does. A tool
   * with no lookup is raised for a person at once (OUTCOME_UNKNOWN), and a late answer that comes
   * after that still settles the step (and closes the item).
   */
  private async settleLate(step: StepRecord, late: Promise<RawAnswer | null>, name: string): Promise<void> {
    try {
      if (!this.o.lookups[name]) {
        this.remember(await this.o.sagaboard.reconciled(step, { kind: "lookup_failed", message: noLookup(step.tool, "and no answer has come yet: the gateway keeps listening and settles it if the answer comes"), attempts: 1 }), null);
      }
      // Not under the session's lock: a re-sent call waits on this, and the server fences the update.
      const answer = await late;
      if (answer?.result && !(answer.result as ToolResult).isError) {
        this.remember(await this.o.sagaboard.reconciled(step, { kind: "found", externalRef: null, result: answer.result as Json, lookups: 1 }), null);
      } else {
        this.remember(await this.lookUp(step), null);
      }
    } catch (e) {
      process.stderr.write(`sagaboard-mcp-gateway: settling step ${step.stepIdx} failed: ${(e as Error).message}\n`);
    }
  }

  /**
   * Settles an unsettled step: the answer this process is still waiting for, a late answer already
   * kept, or the tool's lookup (absence proved twice, with the lag pause between). With no lookup,
   * the step stays UNKNOWN and Sagaboard raises it for a person.
   */
  private async settle(step: StepRecord): Promise<StepRecord | "still_running"> {
    const settling = this.settling.get(step.id);
    if (settling) {
      // This process is still listening for the server's answer: never look up (and retry) under it.
      const over = await Promise.race([settling.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), Math.min(this.o.holdWaitMs, 10_000)))]);
      if (!over) return "still_running";
      const fresh = (await this.o.sagaboard.steps(this.o.runId)).find((s) => s.id === step.id);
      return fresh ?? step;
    }
    const late = await this.o.upstream.transport.answerFor(step.stepKey, 0);
    if (late?.result && !(late.result as ToolResult).isError) return this.o.sagaboard.reconciled(step, { kind: "found", externalRef: null, result: late.result as Json, lookups: 1 });
    return this.lookUp(step);
  }

  /** The tool's lookup: found, absent (proved twice, the lag pause between), or a person decides. */
  private async lookUp(step: StepRecord): Promise<StepRecord> {
    const mcpName = this.o.tools.tools().find((t) => tableName(this.o.namespace, t.name) === step.tool)?.name;
    const lookup = mcpName ? this.o.lookups[mcpName] : undefined;
    if (!lookup) {
      if (step.status === "UNKNOWN" && (step.error as { reason?: string } | null)?.reason === "lookup_failed") return step; // already with a person
      return this.o.sagaboard.reconciled(step, { kind: "lookup_failed", message: noLookup(step.tool, "a person must check the server"), attempts: 1 });
    }
    try {
      const input = { client: this.o.upstream.client, stepKey: step.stepKey, args: step.args as Record<string, unknown> };
      let seen = await lookup(input);
      if (seen.found) return this.o.sagaboard.reconciled(step, { kind: "found", externalRef: null, result: seen.result as Json, lookups: 1 });
      await new Promise((r) => setTimeout(r, this.o.recheckAfterMs));
      seen = await lookup(input);
      if (seen.found) return this.o.sagaboard.reconciled(step, { kind: "found", externalRef: null, result: seen.result as Json, lookups: 2 });
      return this.o.sagaboard.reconciled(step, { kind: "absent", lookups: 2, recheckAfterMs: this.o.recheckAfterMs });
    } catch (e) {
      return this.o.sagaboard.reconciled(step, { kind: "lookup_failed", message: (e as Error).message, attempts: 1 });
    }
  }
}

/** Why a step with no lookup goes to a person. */
function noLookup(tool: string, then: string): string {
  return `${tool} has no lookup in the gateway (no built-in one, no --lookup-by-key), ${then}.`;
}

/**
 * One read-only call in flight, shared by every client request for it: a client that gives up (a
 * timeout, a cancel) and sends it again joins the call still running instead of running it twice;
 * the server is told to cancel only when every request has given up and the grace has passed.
 */
class SharedCall {
  private waiting = 0;
  private cancel: NodeJS.Timeout | null = null;
  private readonly abort = new AbortController();
  readonly answer: Promise<ToolResult>;

  constructor(start: (signal: AbortSignal) => Promise<ToolResult>, private readonly graceMs: number) {
    this.answer = start(this.abort.signal);
    void this.answer.catch(() => undefined).finally(() => this.cancel && clearTimeout(this.cancel));
  }

  /** The answer for one client request; its giving up counts against the shared call. */
  join(signal: AbortSignal): Promise<ToolResult> {
    this.waiting++;
    if (this.cancel) {
      clearTimeout(this.cancel);
      this.cancel = null;
    }
    return new Promise<ToolResult>((resolve, reject) => {
      const gaveUp = () => {
        this.waiting--;
        if (this.waiting === 0) this.cancel = setTimeout(() => this.abort.abort(), this.graceMs);
        reject(new McpError(ErrorCode.RequestTimeout, "The client gave up on the call; its answer is kept for a re-send."));
      };
      if (signal.aborted) return gaveUp();
      signal.addEventListener("abort", gaveUp, { once: true });
      this.answer.then(
        (a) => {
          signal.removeEventListener("abort", gaveUp);
          resolve(a);
        },
        (e: unknown) => {
          signal.removeEventListener("abort", gaveUp);
          reject(e);
        },
      );
    });
  }
}

function heldForPivot(name: string, pivotId: string, dashboardUrl: string): ToolResult {
  return text(
    `${name} cannot be undone, so it waits with the calls staged before it for one person's approval: ${dashboardUrl}/pivots/${pivotId}. Call it again with the same arguments after the approval; it runs once, with the arguments the reviewer approved.`,
    true,
    { "dev.sagaboard/held": true, "dev.sagaboard/pivotId": pivotId, "dev.sagaboard/reason": "PIVOT_PENDING" },
  );
}

/** The recorded MCP result of a CONFIRMED step. */
function resultOf(step: StepRecord): ToolResult {
  const result = step.result as ToolResult | null;
  const meta = { "dev.sagaboard/stepKey": step.stepKey, "dev.sagaboard/stepIdx": step.stepIdx };
  if (result && Array.isArray(result.content)) return { ...result, _meta: { ...result._meta, ...meta } };
  return text(JSON.stringify(step.result), false, meta);
}

/** The recorded refusal of a FAILED step. */
function failureOf(step: StepRecord, name: string): ToolResult {
  const error = (step.error ?? {}) as { message?: string };
  return text(`${name} failed: ${error.message ?? "the server refused it"}`, true, { "dev.sagaboard/stepKey": step.stepKey });
}
