import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ManualClock } from "./clock";
import { CrashPoints } from "./crash-points";
import { SagaEngine } from "./engine";
import { SagaError } from "./errors";
import { sequentialIds } from "./ids";
import { MemorySagaStore } from "./memory-store";
import {
  defineCompensator,
  defineTool,
  ToolRegistry,
  type CompensatorDefinition,
  type ToolDefinition,
  type ToolEffect,
} from "./tools";
import { ToolClass } from "./vocabulary";

/** The error `fn` throws (fails the test when it does not throw). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
}

/** Asserts an INVALID_TOOL_DEFINITION naming the tool and matching `problem`. */
function expectDefinitionError(fn: () => unknown, toolName: string, problem: RegExp): void {
  const e = thrown(fn);
  expect(e).toBeInstanceOf(SagaError);
  const err = e as SagaError;
  expect(err.code).toBe("INVALID_TOOL_DEFINITION");
  expect(err.httpStatus).toBe(400);
  expect(err.message).toContain(`"${toolName}"`);
  expect(err.message).toMatch(problem);
}

const args = z.object({ text: z.string().min(1), amount: z.number().int().positive() });

/** Counts every call and lookup, so a test can show nothing reached the external system. */
const calls = { call: 0, lookup: 0 };
const effect = async (): Promise<ToolEffect> => {
  calls.call++;
  return { externalRef: "ext_1", result: { ok: true } };
};
const lookup = async (): Promise<ToolEffect | null> => {
  calls.lookup++;
  return null;
};

const undo: CompensatorDefinition = defineCompensator({
  name: "undo",
  args: z.object({}),
  run: async () => ({ externalRef: null }),
  verify: async () => ({ done: true }),
});

function base(overrides: Partial<ToolDefinition> & Record<string, unknown>): ToolDefinition {
  return {
    name: "create_ticket",
    class: ToolClass.COMPENSATABLE,
    args,
    call: effect,
    lookup,
    compensation: { with: "undo", build: () => ({}) },
    ...overrides,
  } as ToolDefinition;
}

describe("defineTool", () => {
  it("accepts a complete definition of every class", () => {
    expect(defineTool(base({ name: "lookup_order", class: ToolClass.PURE, lookup: undefined, compensation: undefined })).name).toBe("lookup_order");
    expect(defineTool(base({ name: "stage_draft", class: ToolClass.REVERSIBLE })).class).toBe("REVERSIBLE");
    expect(defineTool(base({})).class).toBe("COMPENSATABLE");
    expect(
      defineTool(base({ name: "send_email", class: ToolClass.IRREVERSIBLE, compensation: undefined, correction: () => null })).class,
    ).toBe("IRREVERSIBLE");
  });

  it("refuses a tool without a class, saying it is missing and listing the classes", () => {
    expectDefinitionError(() => defineTool(base({ class: undefined })), "create_ticket", /class is missing/);
    expectDefinitionError(() => defineTool(base({ class: undefined })), "create_ticket", /PURE, REVERSIBLE, COMPENSATABLE, IRREVERSIBLE/);
  });

  it("refuses an unknown class string, quoting it", () => {
    expectDefinitionError(() => defineTool(base({ class: "UNDOABLE" as ToolClass })), "create_ticket", /class is "UNDOABLE"/);
  });

  it("refuses a non-PURE tool without lookup, for each side-effecting class", () => {
    expectDefinitionError(() => defineTool(base({ class: ToolClass.REVERSIBLE, lookup: undefined })), "create_ticket", /REVERSIBLE tool needs lookup/);
    expectDefinitionError(() => defineTool(base({ lookup: undefined })), "create_ticket", /COMPENSATABLE tool needs lookup/);
    expectDefinitionError(
      () => defineTool(base({ class: ToolClass.IRREVERSIBLE, lookup: undefined, compensation: undefined, correction: () => null })),
      "create_ticket",
      /IRREVERSIBLE tool needs lookup/,
    );
  });

  it("refuses a COMPENSATABLE tool without compensation", () => {
    expectDefinitionError(() => defineTool(base({ compensation: undefined })), "create_ticket", /COMPENSATABLE tool needs a compensation/);
  });

  it("refuses a REVERSIBLE tool without compensation", () => {
    expectDefinitionError(
      () => defineTool(base({ name: "stage_draft", class: ToolClass.REVERSIBLE, compensation: undefined })),
      "stage_draft",
      /REVERSIBLE tool needs a compensation/,
    );
  });

  it("refuses an IRREVERSIBLE tool without a correction template", () => {
    expectDefinitionError(
      () => defineTool(base({ name: "send_email", class: ToolClass.IRREVERSIBLE, compensation: undefined })),
      "send_email",
      /IRREVERSIBLE tool needs a correction template/,
    );
  });

  it("refuses bad names and bad policy versions", () => {
    expectDefinitionError(() => defineTool(base({ name: "Create Ticket" })), "Create Ticket", /name must be lower-case/);
    expectDefinitionError(() => defineTool(base({ policyVersion: 0 })), "create_ticket", /policyVersion must be a positive integer/);
  });
});

describe("defineCompensator", () => {
  it("refuses a compensator without run or verify", () => {
    const def = { name: "refund", args: z.object({}), run: async () => ({}), verify: async () => ({ done: true }) };
    expectDefinitionError(() => defineCompensator({ ...def, run: undefined } as unknown as CompensatorDefinition), "refund", /needs run/);
    expectDefinitionError(() => defineCompensator({ ...def, verify: undefined } as unknown as CompensatorDefinition), "refund", /needs verify/);
  });
});

describe("ToolRegistry", () => {
  it("refuses a compensation naming an unregistered compensator, listing the known ones", () => {
    const e = thrown(() => new ToolRegistry([base({ compensation: { with: "refund_charge", build: () => ({}) } })], [undo])) as SagaError;
    expect(e.code).toBe("INVALID_TOOL_DEFINITION");
    expect(e.message).toContain('"create_ticket"');
    expect(e.message).toContain('"refund_charge", which is not a registered compensator');
    expect(e.message).toContain("known: undo");
  });

  it("says 'none' when no compensator is registered", () => {
    expectDefinitionError(() => new ToolRegistry([base({})], []), "create_ticket", /known: none/);
  });

  it("refuses duplicate tool names and duplicate compensator names", () => {
    expectDefinitionError(() => new ToolRegistry([base({}), base({})], [undo]), "create_ticket", /tool with this name is already registered/);
    expectDefinitionError(() => new ToolRegistry([], [undo, undo]), "undo", /compensator with this name is already registered/);
  });

  it("runs defineTool's checks on add, so an unchecked definition cannot slip in", () => {
    const registry = new ToolRegistry([], [undo]);
    expectDefinitionError(() => registry.add(base({ lookup: undefined })), "create_ticket", /needs lookup/);
    expect(registry.has("create_ticket")).toBe(false);
  });

  it("answers an unknown tool with UNKNOWN_TOOL listing the known tools", () => {
    const registry = new ToolRegistry([base({})], [undo]);
    const e = thrown(() => registry.tool("delete_everything")) as SagaError;
    expect(e.code).toBe("UNKNOWN_TOOL");
    expect(e.httpStatus).toBe(404);
    expect(e.message).toContain('"delete_everything"');
    expect(e.message).toContain("Known tools: create_ticket");
    expect(thrown(() => registry.compensator("refund"))).toMatchObject({ code: "UNKNOWN_TOOL" });
  });
});

describe("calls the engine refuses before writing anything", () => {
  function setup() {
    calls.call = 0;
    calls.lookup = 0;
    const clock = new ManualClock();
    const store = new MemorySagaStore(clock);
    const registry = new ToolRegistry([base({})], [undo]);
    const engine = new SagaEngine({ store, registry, clock, ids: sequentialIds(), crashPoints: new CrashPoints(), recheckAfterMs: 2000, backoffMs: 10 });
    return { store, engine };
  }

  it("an unknown tool is a SagaError UNKNOWN_TOOL and nothing is recorded", async () => {
    const { store, engine } = setup();
    const run = await engine.startRun({ title: "t", agent: "agent-1" });
    const e = await run.call("delete_everything", {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SagaError);
    expect((e as SagaError).code).toBe("UNKNOWN_TOOL");
    expect(await store.listSteps(run.runId)).toEqual([]);
    expect((await store.listAuditEvents(run.runId)).map((a) => a.type)).toEqual(["run.started"]);
    expect(calls).toEqual({ call: 0, lookup: 0 });
  });

  it("args failing the schema are INVALID_ARGS naming args.<field>; no row, no audit event, no call", async () => {
    const { store, engine } = setup();
    const run = await engine.startRun({ title: "t", agent: "agent-1" });
    const e = await run.call("create_ticket", { text: "", amount: "ten" }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SagaError);
    const err = e as SagaError;
    expect(err.code).toBe("INVALID_ARGS");
    expect(err.httpStatus).toBe(400);
    expect(err.issues.map((i) => i.path).sort()).toEqual(["args.amount", "args.text"]);
    expect(err.message).toContain("args.amount");
    expect(err.message).toContain("Nothing was recorded");
    expect(await store.listSteps(run.runId)).toEqual([]);
    expect((await store.listAuditEvents(run.runId)).map((a) => a.type)).toEqual(["run.started"]);
    expect(await store.listEscalations({ runId: run.runId })).toEqual([]);
    expect(calls).toEqual({ call: 0, lookup: 0 });
  });

  it("a missing field is named too, and the cursor does not move (the next valid call is step 0)", async () => {
    const { store, engine } = setup();
    const run = await engine.startRun({ title: "t", agent: "agent-1" });
    const e = (await run.call("create_ticket", { text: "hello" }).catch((x: unknown) => x)) as SagaError;
    expect(e.issues).toEqual([expect.objectContaining({ path: "args.amount" })]);
    const ok = await run.call("create_ticket", { text: "hello", amount: 5 });
    expect(ok).toMatchObject({ status: "ok", stepIdx: 0 });
    expect(calls.call).toBe(1);
    expect((await store.listSteps(run.runId)).map((s) => s.stepIdx)).toEqual([0]);
  });
});
