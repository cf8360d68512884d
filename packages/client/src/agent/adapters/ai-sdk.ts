/**
 * The Vercel AI SDK adapter: an AI SDK agent's tools, each call through the saga log, and tool
 * approval answered by Sagaboard, never by the browser.
 *
 * The AI SDK rebuilds approvals from the message history the client sends: a `tool-approval-response`
 * with `approved: true` makes it run the tool, and the client can write one itself. Here that flag
 * decides nothing:
 * - every wrapped tool's `execute` goes through the saga log, whose gate (the tool table's class,
 *   the pivot, a reviewer's decision on a held call) runs it or holds it, whatever the history says;
 * - `toolApproval` asks the same gate first: a call Sagaboard holds becomes the SDK's approval
 *   request (its reason says who decides), one it allows runs at once;
 * - `messages(history)` answers each of our tools' approval requests from Sagaboard before the SDK
 *   sees them: the client's approval responses for them are dropped, a call a reviewer approved in
 *   the dashboard runs now (even if the chat tab was closed when they did), one still waiting gets a
 *   result that says so, one refused gets the reason.
 *
 * The chat's history is not trusted for the log's position either: each request brings a fresh
 * `RunContext` to the end of the run's own log by replaying its settled steps (the log answers them
 * from its records; nothing is called twice).
 */
import { tool, type ModelMessage, type Tool, type ToolApprovalStatus, type ToolCallPart, type ToolResultPart } from "ai";
import type { z } from "zod";
import { ApprovalRequiredError, SagaError } from "../../saga/errors";
import type { SagaEngine } from "../../saga/engine";
import type { ToolDefinition } from "../../saga/tools";
import { ApprovalReason, StepStatus } from "../../saga/vocabulary";
import {
  JournaledSagaRun,
  outcomeText,
  sagaDefinition,
  withFrameworkCall,
  type HeldCall,
  type JournaledOutcome,
  type RunJournal,
  type SagaToolPolicy,
} from "./run-journal";

export { currentSagaStep } from "./run-journal";
// The types the adapter's public functions take and return, so a team's own declarations can name them.
export type { HeldCall, JournaledOutcome, JournaledRun, JournaledSagaRun, RunJournal, SagaToolPolicy } from "./run-journal";

/** An AI SDK tool as you would give it to `tool({...})`, plus what Sagaboard must know of it. */
export interface SagaAiToolOptions<S extends z.ZodObject> extends SagaToolPolicy<z.output<S>> {
  /** The tool's name (the key the model calls it by). */
  name: string;
  /** What the model reads about the tool. */
  description: string;
  /** Its input (zod; the SDK sends the JSON schema to the model, the engine checks it again). */
  inputSchema: S;
  /** The tool's function; call `currentSagaStep()` inside it for the key to send to the provider. */
  execute(input: z.output<S>): unknown;
}

/** A tool wrapped for Sagaboard: register `definition` with the engine, give the model `SagaChat`'s tools. */
export interface SagaAiTool {
  /** The tool's name. */
  readonly name: string;
  /** The engine's definition (goes into the ToolRegistry). */
  readonly definition: ToolDefinition;
  /** The input schema, for the SDK tool. */
  readonly inputSchema: z.ZodObject;
  /** What the model reads about the tool. */
  readonly description: string;
}

/** Wraps an AI SDK tool's options so every call goes through the saga log. */
export function sagaTool<S extends z.ZodObject>(options: SagaAiToolOptions<S>): SagaAiTool {
  const definition = sagaDefinition({ name: options.name, description: options.description, args: options.inputSchema, execute: options.execute, policy: options }) as ToolDefinition;
  return { name: options.name, definition, inputSchema: options.inputSchema, description: options.description };
}

/** A call Sagaboard holds for a person: an approval in the chat does not run it. */
export class SagaboardHoldError extends ApprovalRequiredError {
  constructor(readonly held: HeldCall) {
    super(
      `${held.tool} is held in Sagaboard (${held.reason}): ${held.message} An approval given in the chat does not run it; it runs once a reviewer approves it in Sagaboard.`,
      held.reason,
      held.escalationId,
      held.pivotId,
    );
    this.name = "SagaboardHoldError";
  }
}

/** Holds that are a decision, not a wait: the model hears them as a refusal. */
function isFinal(held: HeldCall): boolean {
  return held.reason === ApprovalReason.REJECTED || held.reason === ApprovalReason.APPROVAL_USED;
}

/** The steps whose outcome a fresh context replays to stand at the end of the log. */
const CONSUMED: readonly string[] = [StepStatus.CONFIRMED, StepStatus.FAILED];

/**
 * One chat, one saga run, as one request of a chat route drives it (make one per request): the
 * tools and `toolApproval` to give `streamText`/`generateText`, and `messages()` to clean the
 * history the client sent before the SDK reads it.
 */
export class SagaChat extends JournaledSagaRun {
  /** The SDK tools, keyed by name: `streamText({ tools: chat.tools })`. */
  readonly tools: Record<string, Tool>;
  /** `streamText({ toolApproval: chat.toolApproval })`: Sagaboard's gate answers. */
  readonly toolApproval: (options: { toolCall: { toolName: string; toolCallId: string; input: unknown } }) => Promise<ToolApprovalStatus>;
  private readonly byName: Map<string, SagaAiTool>;
  private readonly engine: SagaEngine;
  private journal: Promise<RunJournal> | null = null;

  constructor(options: { engine: SagaEngine; runId: string; tools: readonly SagaAiTool[] }) {
    super(options.engine, options.runId);
    this.engine = options.engine;
    this.byName = new Map(options.tools.map((t) => [t.name, t]));
    this.tools = Object.fromEntries(
      options.tools.map((t) => [
        t.name,
        tool({
          description: t.description,
          inputSchema: t.inputSchema,
          execute: async (input: unknown, { toolCallId }: { toolCallId: string }) => {
            const outcome = this.run.take(toolCallId) ?? (await this.ask(t.name, input, toolCallId));
            if (outcome.kind === "ok") return outcome.outcome.result;
            // Reached only when the SDK runs a call the gate holds: an approval the history claims. Nothing ran.
            if (outcome.kind === "held") throw new SagaboardHoldError(outcome.held);
            return outcomeText(outcome);
          },
        }) as Tool,
      ]),
    );
    this.toolApproval = async ({ toolCall }) => {
      if (!this.byName.has(toolCall.toolName)) return "not-applicable";
      // The gate answers now: an allowed call runs here and `execute` hands its outcome on.
      const outcome = await this.ask(toolCall.toolName, toolCall.input, toolCall.toolCallId);
      if (outcome.kind !== "held") return "not-applicable";
      if (isFinal(outcome.held)) {
        this.run.take(toolCall.toolCallId);
        return { type: "denied", reason: outcomeText(outcome) };
      }
      return { type: "user-approval", reason: `Waiting for a reviewer in Sagaboard: ${outcome.held.message}` };
    };
  }

  /** The calls Sagaboard held during this request (each with the escalation or pivot a reviewer answers). */
  async pending(): Promise<HeldCall[]> {
    return Object.values((await this.logJournal()).held);
  }

  /**
   * The history with every approval of this chat's tools answered by Sagaboard: the client's
   * `tool-approval-response`s for them (and any naming an approval that was never requested) are
   * dropped; each call still waiting for one is asked again, in order, and answered with a result
   * (it ran: a reviewer approved it), or with a text saying it still waits or was refused.
   */
  async messages(history: readonly ModelMessage[]): Promise<ModelMessage[]> {
    const calls = new Map<string, ToolCallPart>();
    const resulted = new Set<string>();
    const othersApprovals = new Set<string>();
    for (const message of history) {
      if (typeof message.content === "string") continue;
      for (const part of message.content) {
        if (part.type === "tool-call") calls.set(part.toolCallId, part);
        if (part.type === "tool-result") resulted.add(part.toolCallId);
      }
    }
    for (const message of history) {
      if (message.role !== "assistant" || typeof message.content === "string") continue;
      for (const part of message.content) {
        if (part.type === "tool-approval-request" && !this.byName.has(calls.get(part.toolCallId)?.toolName ?? "")) othersApprovals.add(part.approvalId);
      }
    }
    const out: ModelMessage[] = [];
    for (const message of history) {
      if (message.role === "assistant" && typeof message.content !== "string") {
        const waiting: ToolCallPart[] = [];
        const content = message.content.filter((part) => {
          if (part.type !== "tool-approval-request" || othersApprovals.has(part.approvalId)) return true;
          const call = calls.get(part.toolCallId);
          if (call && !resulted.has(call.toolCallId)) waiting.push(call);
          return false; // Sagaboard answers it below
        });
        out.push({ ...message, content });
        const answers: ToolResultPart[] = [];
        for (const call of waiting) answers.push(await this.answer(call));
        if (answers.length > 0) out.push({ role: "tool", content: answers });
        continue;
      }
      if (message.role === "tool") {
        const content = message.content.filter((part) => part.type !== "tool-approval-response" || othersApprovals.has(part.approvalId));
        if (content.length > 0) out.push({ ...message, content });
        continue;
      }
      out.push(message);
    }
    return out;
  }

  /** A waiting call asked again: its result, or what Sagaboard says of it in words. */
  private async answer(call: ToolCallPart): Promise<ToolResultPart> {
    const outcome = await this.ask(call.toolName, call.input, call.toolCallId);
    this.run.take(call.toolCallId);
    const base = { type: "tool-result" as const, toolCallId: call.toolCallId, toolName: call.toolName };
    if (outcome.kind === "ok") return { ...base, output: { type: "json", value: outcome.outcome.result } };
    if (outcome.kind === "held" && !isFinal(outcome.held)) {
      return { ...base, output: { type: "error-text", value: `Not run: still waiting for a reviewer in Sagaboard. ${outcome.held.message} Call it again once they have approved it.` } };
    }
    return { ...base, output: { type: "error-text", value: outcomeText(outcome) } };
  }

  private async ask(name: string, input: unknown, toolCallId: string): Promise<JournaledOutcome> {
    const journal = await this.logJournal();
    return withFrameworkCall([], () => this.run.call(journal, name, input, toolCallId));
  }

  /** The journal of this request: the run's settled steps from its own log, not from the client's history. */
  private logJournal(): Promise<RunJournal> {
    this.journal ??= this.engine.listSteps(this.runId).then((steps) => {
      const calls: RunJournal["calls"] = [];
      for (const step of steps) {
        if (!CONSUMED.includes(step.status)) break; // an unsettled step: the next call at it reconciles it
        calls.push({ tool: this.registered(step.tool), args: step.args, stepIdx: step.stepIdx, callId: null });
      }
      return { runId: this.runId, calls, held: {} };
    });
    return this.journal;
  }

  /** The registry's name of a logged tool (the log may carry the token's namespace in front of it). */
  private registered(logged: string): string {
    if (this.byName.has(logged)) return logged;
    const bare = logged.slice(logged.indexOf(".") + 1);
    if (this.byName.has(bare)) return bare;
    throw new SagaError("DETERMINISM", `Run ${this.runId} logged ${logged}, a tool this chat was not given; give SagaChat every tool the run has used.`);
  }
}
