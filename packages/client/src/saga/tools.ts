import type { z } from "zod";
import { SagaError, type FieldIssue } from "./errors";
import { ToolClass, TOOL_CLASSES } from "./vocabulary";

/** A JSON value, as stored in the saga log. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** What a tool call receives besides its arguments. */
export interface ToolCallContext {
  /** The step's idempotency key: send it natively and as metadata/label/external id. */
  stepKey: string;
  /** The run the call belongs to. */
  runId: string;
  /** The harness-assigned step index. */
  stepIdx: number;
}

/** An effect in an external system, as the call returned it or the lookup found it. */
export interface ToolEffect {
  /** The external system's id for the effect (ticket id, payment intent id, message id). */
  externalRef: string | null;
  /** The result handed to the agent. */
  result: Json;
}

/** A compensation, pre-written before the call: which compensator, with which arguments. */
export interface CompensationPlan {
  /** Name of a registered compensator. */
  tool: string;
  /** Its arguments (they point at the step key, because the external id does not exist yet). */
  args: Json;
}

/** A pre-written correction message for an irreversible effect. */
export interface CorrectionDraft {
  /** Who receives the correction. */
  audience: string[];
  /** Subject line. */
  subject: string;
  /** Body, for support staff to edit before sending. */
  body: string;
}

/** How a tool's effect is answered: the compensator and a builder of its arguments. */
export interface CompensationSpec<A> {
  /** Name of the compensator that answers this tool. */
  with: string;
  /** Builds the compensator's arguments; null (or a throw) when it cannot be built for these args. */
  build(args: A): Json | null;
}

/** A tool as the harness knows it. */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  /** Unique name (`create_ticket`). */
  name: string;
  /** What the tool does to the world; registration fails without it. */
  class: ToolClass;
  /** One line for people reading the log. */
  description?: string;
  /** Schema of the arguments; a call that fails it is refused before anything is written. */
  args: S;
  /** Performs the call, sending `ctx.stepKey` to the external system. */
  call(args: z.output<S>, ctx: ToolCallContext): Promise<ToolEffect>;
  /** Finds the effect of `stepKey` in the external system, or null. Required unless PURE. */
  lookup?(stepKey: string, args: z.output<S>): Promise<ToolEffect | null>;
  /** Required for REVERSIBLE (the delete) and COMPENSATABLE (the counter-action). */
  compensation?: CompensationSpec<z.output<S>>;
  /** Who can see the effect (`["finance"]` when receipts are off, `["customer"]` when on). */
  audience?(args: z.output<S>): string[];
  /** Required for IRREVERSIBLE: the correction message drafted at dispatch. */
  correction?(args: z.output<S>): CorrectionDraft | null;
  /** Who handles this tool's escalations. */
  owner?: string;
  /** Version of the tool's policy row; approvals bind it. */
  policyVersion?: number;
}

/** What a compensator receives besides its arguments. */
export interface CompensationContext {
  /** The compensation's own idempotency key. */
  compensationKey: string;
  /** The step being answered, with the external ref reconcile found for it. */
  target: { stepKey: string; externalRef: string | null; tool: string; args: Json };
}

/** What reading the real system back says about a compensation. */
export interface CompensationCheck {
  /** True when the compensation is in effect. */
  done: boolean;
  /** What is still out there when it is not (for the escalation). */
  remaining?: Json;
}

/** A counter-action (refund, close ticket, delete draft) and how to confirm it. */
export interface CompensatorDefinition<S extends z.ZodType = z.ZodType> {
  /** Unique name (`refund_charge`). */
  name: string;
  /** Schema of the arguments. */
  args: S;
  /** Sends the compensation with `ctx.compensationKey`. */
  run(args: z.output<S>, ctx: CompensationContext): Promise<{ externalRef?: string | null }>;
  /** Reads the real system back: requested is not confirmed. */
  verify(args: z.output<S>, ctx: CompensationContext): Promise<CompensationCheck>;
}

const NAME_PATTERN = /^[a-z][a-z0-9_.-]{0,63}$/;

function invalid(name: string, message: string): SagaError {
  return new SagaError("INVALID_TOOL_DEFINITION", `Tool "${name}": ${message}`);
}

/**
 * Checks a tool definition and returns it. Fails when the class is missing, when a non-PURE tool has
 * no lookup, when a REVERSIBLE or COMPENSATABLE tool has no compensation, and when an IRREVERSIBLE
 * tool has no correction template.
 */
export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): ToolDefinition<S> {
  const name = typeof def.name === "string" ? def.name : "(unnamed)";
  if (!NAME_PATTERN.test(name)) {
    throw invalid(name, "name must be lower-case letters, digits, '_', '.' or '-', starting with a letter.");
  }
  if (!TOOL_CLASSES.includes(def.class)) {
    throw invalid(
      name,
      `class is ${def.class === undefined ? "missing" : `"${String(def.class)}"`}; give it one of ${TOOL_CLASSES.join(", ")}.`,
    );
  }
  if (def.class !== ToolClass.PURE && typeof def.lookup !== "function") {
    throw invalid(name, `a ${def.class} tool needs lookup(stepKey) so reconcile can find its effect after a timeout or crash.`);
  }
  if ((def.class === ToolClass.COMPENSATABLE || def.class === ToolClass.REVERSIBLE) && !def.compensation) {
    throw invalid(
      name,
      `a ${def.class} tool needs a compensation ({ with, build }) written before any call; ` +
        `if none can exist, register it as IRREVERSIBLE.`,
    );
  }
  if (def.class === ToolClass.IRREVERSIBLE && typeof def.correction !== "function") {
    throw invalid(name, "an IRREVERSIBLE tool needs a correction template: the only answer to its effect is a new message.");
  }
  if (def.policyVersion !== undefined && (!Number.isInteger(def.policyVersion) || def.policyVersion < 1)) {
    throw invalid(name, "policyVersion must be a positive integer.");
  }
  return def;
}

/** Checks a compensator definition and returns it. */
export function defineCompensator<S extends z.ZodType>(def: CompensatorDefinition<S>): CompensatorDefinition<S> {
  const name = typeof def.name === "string" ? def.name : "(unnamed)";
  if (!NAME_PATTERN.test(name)) throw invalid(name, "compensator name must be lower-case letters, digits, '_', '.' or '-'.");
  if (typeof def.run !== "function") throw invalid(name, "a compensator needs run(args, ctx).");
  if (typeof def.verify !== "function") {
    throw invalid(name, "a compensator needs verify(args, ctx) that reads the real system back.");
  }
  return def;
}

/** Turns a zod error into field issues under `prefix` (`args.amount`). */
export function zodIssues(error: z.ZodError, prefix: string): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter(Boolean).join("."),
    message: issue.message,
  }));
}

/** The tools and compensators one engine knows; checks that every compensation names a compensator. */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private readonly compensators = new Map<string, CompensatorDefinition>();

  constructor(tools: readonly ToolDefinition[] = [], compensators: readonly CompensatorDefinition[] = []) {
    for (const c of compensators) this.addCompensator(c);
    for (const t of tools) this.add(t);
  }

  /** Registers a compensator. */
  addCompensator(def: CompensatorDefinition): void {
    defineCompensator(def);
    if (this.compensators.has(def.name)) throw invalid(def.name, "a compensator with this name is already registered.");
    this.compensators.set(def.name, def);
  }

  /** Registers a tool; its compensator must already be registered. */
  add(def: ToolDefinition): void {
    defineTool(def);
    if (this.tools.has(def.name)) throw invalid(def.name, "a tool with this name is already registered.");
    if (def.compensation && !this.compensators.has(def.compensation.with)) {
      throw invalid(
        def.name,
        `its compensation names "${def.compensation.with}", which is not a registered compensator ` +
          `(known: ${[...this.compensators.keys()].join(", ") || "none"}).`,
      );
    }
    this.tools.set(def.name, def);
  }

  /** The tool called `name`, or an UNKNOWN_TOOL error listing the known ones. */
  tool(name: string): ToolDefinition {
    const def = this.tools.get(name);
    if (!def) {
      throw new SagaError(
        "UNKNOWN_TOOL",
        `No tool named "${name}" is registered. Known tools: ${[...this.tools.keys()].join(", ") || "none"}.`,
        [{ path: "tool", message: "unknown tool" }],
      );
    }
    return def;
  }

  /** The compensator called `name`. */
  compensator(name: string): CompensatorDefinition {
    const def = this.compensators.get(name);
    if (!def) {
      throw new SagaError("UNKNOWN_TOOL", `No compensator named "${name}" is registered in this process.`, [
        { path: "compensation.tool", message: "unknown compensator" },
      ]);
    }
    return def;
  }

  /** True when a tool called `name` is registered. */
  has(name: string): boolean {
    return this.tools.has(name);
  }

  /** Every registered tool. */
  list(): ToolDefinition[] {
    return [...this.tools.values()];
  }

  /** Every registered compensator. */
  listCompensators(): CompensatorDefinition[] {
    return [...this.compensators.values()];
  }

  /** Validates `args` against the tool's schema; INVALID_ARGS names each bad field. */
  parseArgs(def: ToolDefinition, args: unknown): unknown {
    const parsed = def.args.safeParse(args);
    if (!parsed.success) {
      const issues = zodIssues(parsed.error, "args");
      throw new SagaError(
        "INVALID_ARGS",
        `Arguments for ${def.name} are invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}. Nothing was recorded.`,
        issues,
      );
    }
    return parsed.data;
  }
}
