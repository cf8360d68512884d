/**
 * Sagaboard for LangGraph.js (`@langchain/langgraph`): the graph's tools go through the saga log, a
 * call Sagaboard holds becomes an `interrupt()`, and a node that re-runs after a resume gets the
 * recorded results of the calls it made before instead of making them again.
 *
 * LangGraph re-runs an interrupted (or crashed) node from its start and skips the nodes that
 * finished. The journal of consumed calls therefore lives in the graph state (`SagaboardAnnotation`)
 * and is written by the node wrapper (`SagaGraphRun.node`) with the node's own update: a node that
 * finished carries its calls into the checkpoint; a node that was interrupted carries none, so its
 * re-run walks the same steps again and the log answers them (replayed, or reconciled after a crash).
 *
 * The human decision lives in Sagaboard: resuming with `Command({ resume })` only says "look again".
 * The wrapped tool asks Sagaboard again; a call a reviewer approved runs once, a rejected one answers
 * "not done" to the node, and one still waiting interrupts again. One node drives a run at a time:
 * parallel branches calling the same run's tools would race on its step order.
 */
import { DynamicStructuredTool, tool, type StructuredToolInterface } from "@langchain/core/tools";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, interrupt } from "@langchain/langgraph";
import { AsyncLocalStorage } from "node:async_hooks";
import type { z } from "zod";
import type { SagaEngine } from "../../saga/engine";
import { SagaError } from "../../saga/errors";
import { ApprovalReason } from "../../saga/vocabulary";
import type { Json, ToolDefinition } from "../../saga/tools";
import {
  JournaledRun,
  JournaledSagaRun,
  outcomeText,
  parseJournal,
  sagaDefinition,
  withFrameworkCall,
  type HeldCall,
  type RunJournal,
  type SagaToolPolicy,
} from "./run-journal";

export { currentSagaStep } from "./run-journal";
// The types the adapter's public functions take and return, so a team's own declarations can name them.
export type { HeldCall, JournaledOutcome, JournaledRun, JournaledSagaRun, JournalEntry, RunJournal, SagaToolPolicy } from "./run-journal";

/** Add `...SagaboardAnnotation.spec` to the graph's state: the journal is checkpointed with it. */
export const SagaboardAnnotation = Annotation.Root({
  /** Sagaboard's journal of consumed calls (written by `SagaGraphRun.node`). */
  sagaboard: Annotation<RunJournal | null>({ reducer: (_previous, next) => next, default: () => null }),
});

/** What an `interrupt()` raised by a held call carries (read it from the graph's `__interrupt__`). */
export interface SagaInterrupt {
  /** The held call, with the escalation a reviewer answers in Sagaboard. */
  sagaboard: HeldCall & { args: Json };
}

/** A plain function with a zod schema, as you would give it to LangChain's `tool(fn, {...})`. */
export interface GraphToolOptions<S extends z.ZodObject> {
  /** The tool's name (lower-case letters, digits, `_`). */
  name: string;
  /** What the model reads about the tool. */
  description: string;
  /** Its arguments. */
  schema: S;
  /** The tool's function; call `currentSagaStep()` inside it for the key to send to the provider. */
  func(args: z.output<S>, config?: RunnableConfig): unknown;
}

/** A tool wrapped for Sagaboard: register `definition` with the engine, use the run's `tool(name)` in nodes. */
export interface SagaGraphTool {
  /** The tool's name. */
  readonly name: string;
  /** The engine's definition (goes into the ToolRegistry). */
  readonly definition: ToolDefinition;
  /** The LangChain tool bound to one saga run. */
  toolFor(run: JournaledRun): StructuredToolInterface;
}

/** The node attempt a tool call belongs to: its copy of the journal, written back when the node returns. */
const nodeAttempt = new AsyncLocalStorage<{ journal: RunJournal }>();

/** Wraps an existing LangChain tool (made with `tool(fn, { name, description, schema })`) so every call goes through the saga log. */
export function wrapTool<S extends z.ZodObject>(existing: DynamicStructuredTool<S>, policy: SagaToolPolicy<z.output<S>>): SagaGraphTool {
  return sagaTool(
    { name: existing.name, description: existing.description, schema: existing.schema as S, func: (args, config) => existing.func(args as never, undefined, config) },
    policy,
  );
}

/** Wraps a plain function with a zod schema as a LangChain tool whose every call goes through the saga log. */
export function sagaTool<S extends z.ZodObject>(source: GraphToolOptions<S>, policy: SagaToolPolicy<z.output<S>>): SagaGraphTool {
  const execute = (args: z.output<S>, config?: RunnableConfig) => source.func(args, config);
  const schema = source.schema;
  const definition = sagaDefinition({ name: source.name, description: source.description, args: schema, execute, policy }) as ToolDefinition;
  return {
    name: source.name,
    definition,
    toolFor: (run) =>
      tool(
        async (args: z.output<S>, config: RunnableConfig): Promise<unknown> => {
          const attempt = nodeAttempt.getStore();
          if (!attempt) {
            throw new SagaError(
              "INVALID_ARGS",
              `${source.name} was called outside a Sagaboard node; wrap the node with saga.node(...) so its calls are checkpointed with its state.`,
            );
          }
          for (;;) {
            const outcome = await withFrameworkCall([config], () => run.call(attempt.journal, source.name, args, null));
            if (outcome.kind === "ok") return outcome.outcome.result;
            if (outcome.kind !== "held" || isFinal(outcome.held)) return outcomeText(outcome);
            // Pauses the graph the first time; on a re-run it returns the resume value, and the
            // decision is read again from Sagaboard (a resume is "look again", not an approval).
            interrupt<SagaInterrupt>({ sagaboard: { ...outcome.held, args: args as Json } });
          }
        },
        { name: source.name, description: source.description, schema: schema as z.ZodObject },
      ) as unknown as StructuredToolInterface,
  };
}

function isFinal(held: HeldCall): boolean {
  return held.reason === ApprovalReason.REJECTED || held.reason === ApprovalReason.APPROVAL_USED;
}

/** The Sagaboard tools of one saga run, for one graph thread. */
export class SagaGraphRun extends JournaledSagaRun {
  private readonly byName = new Map<string, StructuredToolInterface>();

  constructor(options: {
    /** The engine (in-process store or HTTP) whose registry holds the tools' definitions. */
    engine: SagaEngine;
    /** The saga run this thread drives. */
    runId: string;
    /** The wrapped tools. */
    tools: readonly SagaGraphTool[];
  }) {
    super(options.engine, options.runId);
    for (const t of options.tools) this.byName.set(t.name, t.toolFor(this.run));
  }

  /** Every wrapped tool (for a ToolNode or `model.bindTools`). */
  get tools(): StructuredToolInterface[] {
    return [...this.byName.values()];
  }

  /** The wrapped tool called `name`. */
  tool(name: string): StructuredToolInterface {
    const found = this.byName.get(name);
    if (!found) throw new SagaError("UNKNOWN_TOOL", `No Sagaboard tool named "${name}" in this run; known: ${[...this.byName.keys()].join(", ") || "none"}.`);
    return found;
  }

  /**
   * Wraps a node whose code calls the wrapped tools: it reads the journal from the state, and
   * returns the node's update with the journal of the calls it made, checkpointed together.
   */
  node<S extends { sagaboard?: RunJournal | null }, U extends Record<string, unknown> | void>(
    fn: (state: S, config: RunnableConfig) => Promise<U> | U,
  ): (state: S, config: RunnableConfig) => Promise<(U extends void ? object : U) & { sagaboard: RunJournal }> {
    return async (state, config) => {
      const attempt = { journal: parseJournal(state.sagaboard, this.runId) };
      const update = await nodeAttempt.run(attempt, async () => fn(state, config));
      if (update !== undefined && (typeof update !== "object" || update === null || Array.isArray(update))) {
        throw new SagaError("INVALID_ARGS", "A Sagaboard node must return a plain state update object (or nothing), so the journal can be added to it.");
      }
      return { ...(update ?? {}), sagaboard: attempt.journal } as (U extends void ? object : U) & { sagaboard: RunJournal };
    };
  }
}
