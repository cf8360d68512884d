/**
 * Sagaboard for the OpenAI Agents SDK (`@openai/agents`): the agent's tools go through the saga
 * log, Sagaboard's holds become the SDK's approval interruptions, and a restored `RunState` gets
 * the recorded results instead of calling a tool again.
 *
 * How the two approval models meet. In Sagaboard, asking and calling are one command: a call is
 * either run (under its key, after its intent is committed), replayed from the log, or held for a
 * person. So the wrapped tool asks Sagaboard in the SDK's `needsApproval`: an allowed call runs
 * there and `invoke` hands the SDK the recorded result; a held call becomes the SDK's approval
 * interruption, carrying the escalation a reviewer answers in Sagaboard. Approving in the SDK is
 * not an approval: `settleApprovals(state)` asks Sagaboard again and approves (the call then runs,
 * once) or rejects in the SDK what a reviewer decided there, and leaves the rest waiting. A call the
 * SDK runs without that (someone approved it in the SDK alone) is asked again too, and a held call
 * answers the model "not done", so the SDK can never let a held call through.
 *
 * Tool input guardrails of a wrapped tool run after Sagaboard's decision; put the checks that must
 * come first in the tool's zod schema, which the engine checks before anything is written.
 */
import { tool, type FunctionTool, type RunContext as AgentRunContext, type RunState, type RunToolApprovalItem } from "@openai/agents";
import type { z } from "zod";
import type { SagaEngine } from "../../saga/engine";
import { SagaError } from "../../saga/errors";
import type { ToolDefinition } from "../../saga/tools";
import { ApprovalReason } from "../../saga/vocabulary";
import {
  JournaledRun,
  JournaledSagaRun,
  outcomeText,
  parseJournal,
  sagaDefinition,
  withFrameworkCall,
  type HeldCall,
  type JournaledOutcome,
  type RunJournal,
  type SagaToolPolicy,
} from "./run-journal";

export { currentSagaStep } from "./run-journal";
// The types the adapter's public functions take and return, so a team's own declarations can name them.
export type { HeldCall, JournaledOutcome, JournaledRun, JournaledSagaRun, JournalEntry, RunJournal, SagaToolPolicy } from "./run-journal";

/** The key under which the journal lives in the SDK's run context (serialized with the RunState). */
export const JOURNAL_KEY = "sagaboard";

/** What the adapter uses of an SDK RunState (any context and agent type). */
type AgentRunState = Pick<RunState<unknown, never>, "getInterruptions" | "approve" | "reject"> & { _context: AgentRunContext<unknown> };

/** The SDK's per-call details, as its tools receive them. */
type CallDetails = Parameters<FunctionTool["invoke"]>[2];

/** An SDK tool as you would give it to `tool({...})`, plus what Sagaboard must know of it. */
export interface SagaAgentToolOptions<S extends z.ZodObject> extends SagaToolPolicy<z.output<S>> {
  /** The tool's name (lower-case letters, digits, `_`). */
  name: string;
  /** What the model reads about the tool. */
  description: string;
  /** Its arguments (zod; the SDK sends the JSON schema to the model, the engine checks them again). */
  parameters: S;
  /** The tool's function; call `currentSagaStep()` inside it for the key to send to the provider. */
  execute(args: z.output<S>, context?: AgentRunContext<unknown>, details?: CallDetails): unknown;
}

/** A tool wrapped for Sagaboard: register `definition` with the engine, give the agent `bind(...)`'s tools. */
export interface SagaAgentTool {
  /** The tool's name. */
  readonly name: string;
  /** The engine's definition (goes into the ToolRegistry). */
  readonly definition: ToolDefinition;
  /** The SDK tool bound to one saga run. */
  toolFor(run: JournaledRun): FunctionTool;
}

/**
 * Wraps the options of an SDK tool (the object you give `tool({...})`, or a plain function with a
 * zod schema) so every call goes through the saga log.
 */
export function sagaTool<S extends z.ZodObject>(options: SagaAgentToolOptions<S>): SagaAgentTool {
  const definition = sagaDefinition({ name: options.name, description: options.description, args: options.parameters, execute: options.execute, policy: options }) as ToolDefinition;
  return {
    name: options.name,
    definition,
    toolFor: (run) =>
      tool({
        name: options.name,
        description: options.description,
        parameters: options.parameters as z.ZodObject,
        // The gate answers here: an allowed call runs now (see the file comment), a held one interrupts.
        needsApproval: async (context, args, callId) => {
          if (!callId) return false; // no id to hand the outcome to invoke: invoke asks instead
          const outcome = await ask(run, context, options.name, args, callId, undefined);
          return outcome.kind === "held" && !isFinal(outcome.held);
        },
        execute: async (args, context, details) => {
          const callId = details?.toolCall?.callId ?? null;
          const outcome = (callId !== null ? run.take(callId) : undefined) ?? (await ask(run, context, options.name, args, callId, details));
          return outcome.kind === "ok" ? outcome.outcome.result : outcomeText(outcome);
        },
        // Errors the model can act on are answered above as text; the rest (a crash, a determinism
        // error, a closed run) must stop the run, not be turned into a message by the SDK.
        errorFunction: null,
      }) as unknown as FunctionTool,
  };
}

/** Held calls whose hold is a decision, not a wait: the model is told, no interruption is raised. */
function isFinal(held: HeldCall): boolean {
  return held.reason === ApprovalReason.REJECTED || held.reason === ApprovalReason.APPROVAL_USED;
}

async function ask(
  run: JournaledRun,
  context: AgentRunContext<unknown> | undefined,
  name: string,
  args: unknown,
  callId: string | null,
  details: CallDetails,
): Promise<JournaledOutcome> {
  const journal = journalOf(context, run.runId);
  return withFrameworkCall([context, details], () => run.call(journal, name, args, callId));
}

/** The journal in the SDK's run context, created on first use (it is serialized with the RunState). */
function journalOf(context: AgentRunContext<unknown> | undefined, runId: string): RunJournal {
  const holder = context?.context;
  if (typeof holder !== "object" || holder === null) {
    throw new SagaError(
      "INVALID_ARGS",
      "Sagaboard keeps its journal in the SDK's run context: pass an object as `context` to run() (or none: the SDK's default {} works).",
    );
  }
  const record = holder as Record<string, unknown>;
  const current = record[JOURNAL_KEY];
  // The calls of one turn run concurrently and must all write into the same journal object.
  if (typeof current === "object" && current !== null && checked.has(current)) return parseJournalOwner(current as RunJournal, runId);
  const journal = parseJournal(current, runId);
  checked.add(journal);
  record[JOURNAL_KEY] = journal;
  return journal;
}

/** Journals this process parsed (and so knows are well-formed). */
const checked = new WeakSet<object>();

function parseJournalOwner(journal: RunJournal, runId: string): RunJournal {
  if (journal.runId !== runId) parseJournal(journal, runId); // throws, naming both runs
  return journal;
}

/** A pending approval as the SDK user sees it. */
export interface PendingApproval extends HeldCall {
  /** The SDK's call id (the interruption's `rawItem.callId`). */
  callId: string;
}

/** What `settleApprovals` did to the state's interruptions. */
export interface SettledApprovals {
  /** Call ids approved in the SDK: Sagaboard let them run (they ran once, or were replayed). */
  approved: string[];
  /** Call ids rejected in the SDK: a reviewer rejected them in Sagaboard. */
  rejected: string[];
  /** Calls still waiting for a person in Sagaboard: do not resume yet. */
  waiting: PendingApproval[];
}

/** The Sagaboard tools of one saga run, for one agent. */
export class SagaAgentRun extends JournaledSagaRun {
  /** Give these to the `Agent` (same names and schemas as the wrapped tools). */
  readonly tools: FunctionTool[];
  /**
   * The SDK's name of each tool -> Sagaboard's. The SDK renames what is not a letter, digit or `_`
   * (`team.send_email` becomes `team_send_email`), so an interruption names the SDK's name; the log
   * and the gate know the tool by the declared, namespaced one.
   */
  private readonly sagaNames: Map<string, string>;

  constructor(options: {
    /** The engine (in-process store or HTTP) whose registry holds the tools' definitions. */
    engine: SagaEngine;
    /** The saga run this agent run drives. */
    runId: string;
    /** The wrapped tools. */
    tools: readonly SagaAgentTool[];
  }) {
    super(options.engine, options.runId);
    this.tools = options.tools.map((t) => t.toolFor(this.run));
    this.sagaNames = new Map(options.tools.map((t, i) => [this.tools[i]!.name, t.name]));
  }

  /** The state's interruptions that Sagaboard holds, with the escalation to answer (read from the state; nothing is asked). */
  pending(state: AgentRunState): PendingApproval[] {
    const journal = journalOf(state._context, this.runId);
    return this.interruptions(state).flatMap(({ callId }) => {
      const held = journal.held[callId];
      return held ? [{ ...held, callId }] : [];
    });
  }

  /**
   * Maps Sagaboard's decisions onto the state's interruptions: asks Sagaboard for each held call,
   * approves in the SDK what it let run (the call runs now, once, and the resumed run gets its
   * recorded result), rejects what a reviewer rejected, and reports what still waits.
   */
  async settleApprovals(state: AgentRunState): Promise<SettledApprovals> {
    const settled: SettledApprovals = { approved: [], rejected: [], waiting: [] };
    for (const { item, callId, name, args } of this.interruptions(state)) {
      const outcome = await ask(this.run, state._context, name, args, callId, { toolCall: item.rawItem as NonNullable<CallDetails>["toolCall"] });
      if (outcome.kind === "held" && !isFinal(outcome.held)) {
        this.run.take(callId);
        settled.waiting.push({ ...outcome.held, callId });
      } else if (outcome.kind === "held") {
        state.reject(item, { message: outcomeText(outcome) });
        settled.rejected.push(callId);
      } else {
        state.approve(item);
        settled.approved.push(callId);
      }
    }
    return settled;
  }

  private interruptions(state: AgentRunState): { item: RunToolApprovalItem; callId: string; name: string; args: unknown }[] {
    return state.getInterruptions().flatMap((item) => {
      const raw = item.rawItem;
      const name = raw.type === "function_call" ? this.sagaNames.get(raw.name) : undefined;
      if (raw.type !== "function_call" || name === undefined) return [];
      let args: unknown;
      try {
        args = JSON.parse(raw.arguments);
      } catch {
        throw new SagaError("INVALID_ARGS", `The interrupted call ${raw.callId} (${raw.name}) has arguments that are not JSON; it cannot be asked again.`);
      }
      return [{ item, callId: raw.callId, name, args }];
    });
  }
}
