/**
 * Test kit for the engine's unit tests: a tiny fake external system, its tools and compensators,
 * and an engine on the in-memory store and a manual clock. Deliberately not lib/demo/sim: these tests pin
 * the engine's own behaviour. The fake never deduplicates by key: every call that reaches it records
 * an effect, so a count above one per key is a double effect the engine let through.
 */
import { z } from "zod";
import { ManualClock } from "./clock";
import { CrashPoint, CrashPoints, SimulatedCrash } from "./crash-points";
import { ReviewerEngine } from "./reviewer-engine";
import { ToolRejected } from "./errors";
import { sequentialIds } from "./ids";
import { MemorySagaStore } from "./memory-store";
import type { StepRecord } from "./store";
import {
  defineCompensator,
  defineTool,
  ToolRegistry,
  type CompensationCheck,
  type CompensationContext,
  type CompensatorDefinition,
  type Json,
  type ToolCallContext,
  type ToolDefinition,
  type ToolEffect,
} from "./tools";
import { ToolClass } from "./vocabulary";

/** How the next tool call behaves. */
export type CallMode =
  | "ok"
  /** The provider says no (4xx): nothing recorded. */
  | "reject"
  /** The provider says "try later" (429): nothing recorded. */
  | "reject-retryable"
  /** A gateway timeout before the provider did anything. */
  | "timeout-before"
  /** The effect happened, then the answer was lost (504). */
  | "timeout-after"
  /** The effect happened, then the process died. */
  | "crash-after";

export interface FakeEffect {
  key: string;
  tool: string;
  ref: string;
  args: Json;
}

export const ZFakeArgs = z.object({
  text: z.string().min(1),
  amount: z.number().int().positive().optional(),
  receipts: z.boolean().optional(),
});
export type FakeArgs = z.output<typeof ZFakeArgs>;

export class FakeSystem {
  /** Every effect, in the order it happened. */
  readonly effects: FakeEffect[] = [];
  /** Every call that reached a tool, with the key it carried. */
  readonly calls: { tool: string; key: string }[] = [];
  /** Behaviour of the next calls, in order ("ok" once empty). */
  readonly modes: CallMode[] = [];
  /** Every compensation effect, in the order it happened. */
  readonly compensations: { compensator: string; compensationKey: string; targetKey: string; targetRef: string | null }[] = [];
  /** Compensation calls (including refused ones). */
  compensationCalls = 0;
  /** Step keys whose compensation the provider refuses (non-retryable). */
  readonly refuseCompensationOf = new Set<string>();
  /** Compensations that time out after taking effect. */
  compensationTimeoutAfter = false;
  /** The provider accepts compensations but they never take effect (a cancel that was sent, not done). */
  compensationNoEffect = false;
  /** The next `verifyLag` read-backs say "not done" even when it is. */
  verifyLag = 0;
  /** The next `lookupLag` lookups answer null even when the effect exists (a lagging index). */
  lookupLag = 0;
  /** Every lookup throws (the provider's search is down). */
  lookupThrows = false;
  /** Lookups made. */
  lookups = 0;
  /** Called inside every tool call before anything happens (to inspect the saga log mid-call). */
  onCall: ((tool: string, ctx: ToolCallContext) => Promise<void>) | null = null;
  /** Called inside every compensation before anything happens. */
  onCompensate: ((ctx: CompensationContext) => Promise<void>) | null = null;

  effectCount(key: string): number {
    return this.effects.filter((e) => e.key === key).length;
  }

  compensationCount(compensationKey: string): number {
    return this.compensations.filter((c) => c.compensationKey === compensationKey).length;
  }

  callsOf(tool: string): number {
    return this.calls.filter((c) => c.tool === tool).length;
  }

  async call(tool: string, args: FakeArgs, ctx: ToolCallContext): Promise<ToolEffect> {
    if (this.onCall) await this.onCall(tool, ctx);
    this.calls.push({ tool, key: ctx.stepKey });
    const mode = this.modes.shift() ?? "ok";
    if (mode === "reject") throw new ToolRejected("card declined", "card_declined", false);
    if (mode === "reject-retryable") throw new ToolRejected("rate limited, try later", "rate_limited", true);
    if (mode === "timeout-before") throw new Error("504 gateway timeout");
    const ref = `${tool}-${this.effects.length + 1}`;
    this.effects.push({ key: ctx.stepKey, tool, ref, args: args as Json });
    if (mode === "timeout-after") throw new Error("504 gateway timeout");
    if (mode === "crash-after") throw new SimulatedCrash(CrashPoint.AFTER_EFFECT);
    return { externalRef: ref, result: { id: ref, tool } };
  }

  async lookup(key: string): Promise<ToolEffect | null> {
    this.lookups++;
    if (this.lookupThrows) throw new Error("search unavailable");
    if (this.lookupLag > 0) {
      this.lookupLag--;
      return null;
    }
    const found = this.effects.find((e) => e.key === key);
    return found ? { externalRef: found.ref, result: { id: found.ref, tool: found.tool } } : null;
  }

  async compensate(compensator: string, ctx: CompensationContext): Promise<{ externalRef: string | null }> {
    if (this.onCompensate) await this.onCompensate(ctx);
    this.compensationCalls++;
    if (this.refuseCompensationOf.has(ctx.target.stepKey)) {
      throw new ToolRejected("refund refused: the charge is disputed", "charge_disputed", false);
    }
    if (this.compensationNoEffect) return { externalRef: "comp-accepted" };
    const ref = `comp-${this.compensations.length + 1}`;
    this.compensations.push({ compensator, compensationKey: ctx.compensationKey, targetKey: ctx.target.stepKey, targetRef: ctx.target.externalRef });
    if (this.compensationTimeoutAfter) throw new Error("504 gateway timeout");
    return { externalRef: ref };
  }

  async verifyCompensation(ctx: CompensationContext): Promise<CompensationCheck> {
    if (this.verifyLag > 0) {
      this.verifyLag--;
      return { done: false, remaining: { stepKey: ctx.target.stepKey, externalRef: ctx.target.externalRef } };
    }
    if (this.compensationCount(ctx.compensationKey) > 0) return { done: true };
    return { done: false, remaining: { stepKey: ctx.target.stepKey, externalRef: ctx.target.externalRef } };
  }
}

export const HIGH_AMOUNT = 1000;

export function fakeTools(sys: FakeSystem): ToolDefinition[] {
  const side = (name: string) => ({
    name,
    args: ZFakeArgs,
    call: (a: FakeArgs, ctx: ToolCallContext) => sys.call(name, a, ctx),
    lookup: (key: string) => sys.lookup(key),
  });
  // Compensations are built from the call's arguments; the compensator finds the effect by the step (ctx).
  const undo = { with: "undo", build: (a: FakeArgs): Json => ({ text: a.text }) };
  return [
    defineTool({
      name: "lookup_order",
      class: ToolClass.PURE,
      args: ZFakeArgs,
      call: async (a: FakeArgs) => {
        sys.calls.push({ tool: "lookup_order", key: "" });
        return { externalRef: null, result: { order: a.text } };
      },
    }),
    defineTool({ ...side("stage_draft"), class: ToolClass.REVERSIBLE, compensation: undo }),
    defineTool({ ...side("create_ticket"), class: ToolClass.COMPENSATABLE, compensation: undo }),
    defineTool({
      ...side("charge_card"),
      class: ToolClass.COMPENSATABLE,
      compensation: { with: "refund", build: (a: FakeArgs): Json => ({ text: a.text }) },
      audience: (a: FakeArgs) => (a.receipts ? ["customer"] : ["finance"]),
      correction: (a: FakeArgs) => ({ audience: ["customer"], subject: "About your charge", body: `We refunded ${a.amount ?? 0}.` }),
    }),
    defineTool({
      ...side("hold_funds"),
      class: ToolClass.COMPENSATABLE,
      // No release can be built for large holds: the gate must treat them like irreversible calls.
      compensation: { with: "undo", build: (a: FakeArgs): Json | null => ((a.amount ?? 0) > HIGH_AMOUNT ? null : { text: a.text }) },
    }),
    defineTool({
      ...side("send_email"),
      class: ToolClass.IRREVERSIBLE,
      audience: () => ["customer"],
      correction: (a: FakeArgs) => ({ audience: ["customer"], subject: "Correction", body: `Please disregard: ${a.text}` }),
    }),
  ] as ToolDefinition[];
}

export function fakeCompensator(sys: FakeSystem, name: string): CompensatorDefinition {
  return defineCompensator({
    name,
    args: z.object({ text: z.string() }),
    run: (_a, ctx) => sys.compensate(name, ctx),
    verify: (_a, ctx) => sys.verifyCompensation(ctx),
  }) as CompensatorDefinition;
}

export const T0 = Date.UTC(2026, 0, 1, 9, 0, 0);

export function setup(extraTools: (sys: FakeSystem) => ToolDefinition[] = () => []) {
  const sys = new FakeSystem();
  const clock = new ManualClock(T0);
  const store = new MemorySagaStore(clock);
  const crashPoints = new CrashPoints();
  const registry = new ToolRegistry([...fakeTools(sys), ...extraTools(sys)], [fakeCompensator(sys, "undo"), fakeCompensator(sys, "refund")]);
  // One id generator for every engine on this store: a restarted engine must not reuse ids.
  const ids = sequentialIds();
  const makeEngine = () => new ReviewerEngine({ store, registry, clock, ids, crashPoints, recheckAfterMs: 2000, backoffMs: 10 });
  const engine = makeEngine();
  return {
    sys,
    clock,
    store,
    crashPoints,
    registry,
    engine,
    /** A fresh engine on the same store: a new process after a crash. */
    restart: makeEngine,
    start: () => engine.startRun({ title: "refund order 42", agent: "agent-1" }),
    /** Milliseconds the manual clock moved since the start. */
    elapsed: () => clock.now().getTime() - T0,
  };
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
}

/** The single step row at `idx`. */
export async function stepAt(store: MemorySagaStore, runId: string, idx: number): Promise<StepRecord> {
  const step = (await store.listSteps(runId)).find((s) => s.stepIdx === idx);
  if (!step) throw new Error(`no step ${idx}`);
  return step;
}
