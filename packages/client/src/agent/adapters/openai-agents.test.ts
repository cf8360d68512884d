/**
 * The OpenAI Agents SDK adapter against the real SDK, driven by a scripted model (no network), with
 * the effects counted in a fake world's ledger per key. "A new process" is a new engine, a new
 * SagaAgentRun and a new Agent on the same store and world, resuming from a serialized RunState.
 */
import { Agent, RunState, Runner, Usage, setTracingDisabled, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../saga/clock";
import { sequentialIds } from "../../saga/ids";
import { MemorySagaStore } from "../../saga/memory-store";
import { stepKey } from "../../saga/keys";
import type { SagaStore } from "../../saga/store";
import { ToolRegistry } from "../../saga/tools";
import { ToolClass } from "../../saga/vocabulary";
import { storeFactories } from "@/tests/support/harness";
import { currentSagaStep, SagaAgentRun, sagaTool, type SagaAgentTool } from "./openai-agents";
import { ZBookHotelArgs, ZFindHotelsArgs, ZSendEmailArgs, TripWorld } from "./testkit";
import { ReviewerEngine } from "../../saga/reviewer-engine";

beforeAll(() => setTracingDisabled(true)); // nothing leaves the machine

const REVIEWER = { type: "user" as const, id: "rev@example.com" };

/** One planned tool call of the scripted model. */
interface PlannedCall {
  name: string;
  args: Record<string, unknown>;
}

/**
 * A model that asks, in order, for each planned call that has no output in its input yet, then
 * answers in words. It is stateless like a real model re-asked after a restore, but every answer
 * gets a new call id, as a real model's would.
 */
class ScriptedTripModel implements Model {
  asked = 0;
  constructor(
    private readonly plan: PlannedCall[],
    /** Ask for every open planned call in one turn (the SDK then runs them concurrently). */
    private readonly parallel = false,
  ) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.asked++;
    const items = Array.isArray(request.input) ? request.input : [];
    const callNames = new Map<string, string>();
    const outputs: { name: string; output: string }[] = [];
    for (const item of items) {
      if (item.type === "function_call") callNames.set(item.callId, item.name);
      if (item.type === "function_call_result") outputs.push({ name: callNames.get(item.callId) ?? "", output: JSON.stringify(item.output) });
    }
    // An unknown outcome is asked again with the same arguments, as its message tells the model.
    const settled = (name: string) => outputs.some((o) => o.name === name && !o.output.includes("is unknown"));
    const open = this.plan.filter((p) => !settled(p.name)).slice(0, this.parallel ? undefined : 1);
    const output: ModelResponse["output"] = open.length > 0
      ? open.map((next) => ({ type: "function_call" as const, name: next.name, callId: `call_${next.name}_${this.asked}`, status: "completed" as const, arguments: JSON.stringify(next.args) }))
      : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: `Done: ${outputs.map((o) => o.output).join(" | ")}` }] }];
    return { usage: new Usage(), output };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}

const TRIP: PlannedCall[] = [
  { name: "find_hotels", args: { city: "Lisbon" } },
  { name: "book_hotel", args: { city: "Lisbon", nights: 2 } },
  { name: "send_email", args: { to: "ada@example.com", subject: "Your Lisbon trip" } },
];

// ---- The glue a user writes (counted in the README): wrap the tools, bind them to a saga run. ----
function tripTools(world: TripWorld): SagaAgentTool[] {
  return [
    sagaTool({ name: "find_hotels", description: "Search hotels", parameters: ZFindHotelsArgs, execute: (a) => world.search(a), class: ToolClass.PURE }),
    sagaTool({
      name: "book_hotel", description: "Book a hotel", parameters: ZBookHotelArgs, class: ToolClass.COMPENSATABLE,
      execute: (a) => world.book(a, currentSagaStep().stepKey),
      lookup: (key) => world.findBooking(key),
      compensation: { with: "cancel_hotel", build: (a) => ({ city: a.city }) },
    }),
    sagaTool({
      name: "send_email", description: "Email the traveller", parameters: ZSendEmailArgs, class: ToolClass.IRREVERSIBLE,
      execute: (a) => world.send(a, currentSagaStep().stepKey),
      lookup: (key) => world.findEmail(key),
      correction: (a) => ({ audience: ["customer"], subject: `Correction: ${a.subject}`, body: "Please disregard our last email." }),
    }),
  ];
}
// ---- end of glue ----

interface Process {
  engine: ReviewerEngine;
  saga: SagaAgentRun;
  agent: Agent;
  model: ScriptedTripModel;
  runner: Runner;
}

function setup(store: SagaStore) {
  const world = new TripWorld();
  const clock = new ManualClock();
  const ids = sequentialIds();
  /** A process: what a restarted agent builds from the store alone. */
  const processFor = (runId: string, plan = TRIP, parallel = false): Process => {
    const tools = tripTools(world);
    const registry = new ToolRegistry(tools.map((t) => t.definition), [world.cancelHotel()]);
    const engine = new ReviewerEngine({ store, registry, clock, ids, recheckAfterMs: 2000 });
    const saga = new SagaAgentRun({ engine, runId, tools });
    const model = new ScriptedTripModel(plan, parallel);
    const agent = new Agent({ name: "trip", instructions: "Book the trip, then tell the traveller.", model, tools: saga.tools });
    return { engine, saga, agent, model, runner: new Runner({ tracingDisabled: true }) };
  };
  const start = async (parallel = false) => {
    const first = processFor("unused");
    const run = await first.engine.startRun({ title: "Lisbon trip for Ada", agent: "trip-agent" });
    return { runId: run.runId, first: processFor(run.runId, TRIP, parallel) };
  };
  return { world, store, processFor, start };
}

async function onlyStep(store: SagaStore, runId: string, idx: number) {
  const step = (await store.listSteps(runId)).find((s) => s.stepIdx === idx);
  if (!step) throw new Error(`no step ${idx}`);
  return step;
}

describe.each(storeFactories)("OpenAI Agents SDK adapter on the $name store", (factory) => {
  let cleanup: () => Promise<void> = async () => {};
  afterEach(async () => cleanup());
  const open = async () => {
    const handle = await factory.make(new ManualClock());
    cleanup = handle.cleanup;
    return setup(handle.store);
  };

  it("holds the irreversible email as an SDK interruption, sends it once after a reviewer approves in Sagaboard, and a restored RunState replays the booking", async () => {
    const { world, store, processFor, start } = await open();
    const { runId, first } = await start();

    const held = await first.runner.run(first.agent, "Book Lisbon for two nights and tell Ada.");
    expect(held.interruptions.map((i) => i.name)).toEqual(["send_email"]);
    expect(world.searches).toBe(1);
    expect(world.bookingsFor(stepKey(runId, 0, "book_hotel"))).toBe(1);
    expect(world.emails).toHaveLength(0);
    const [pending] = first.saga.pending(held.state);
    expect(pending).toMatchObject({ tool: "send_email", reason: "IRREVERSIBLE", escalationId: expect.stringMatching(/^esc_/) });
    const saved = held.state.toString();

    // Nobody decided yet: a new process restores the state, asks Sagaboard, and keeps waiting.
    const second = processFor(runId);
    const early = await RunState.fromString(second.agent, saved);
    const waiting = await second.saga.settleApprovals(early);
    expect(waiting).toMatchObject({ approved: [], rejected: [], waiting: [{ tool: "send_email", escalationId: pending!.escalationId }] });
    expect(world.emails).toHaveLength(0);

    await first.engine.decideHeldCall(pending!.escalationId!, { approve: true, actor: REVIEWER });

    // A third process resumes from the saved state: the email runs once, the booking is not called again.
    const third = processFor(runId);
    const state = await RunState.fromString(third.agent, saved);
    const settled = await third.saga.settleApprovals(state);
    expect(settled.approved).toHaveLength(1);
    const done = await third.runner.run(third.agent, state);
    expect(done.interruptions).toHaveLength(0);
    expect(done.finalOutput).toContain("msg_1");
    expect(world.emailsFor(stepKey(runId, 1, "send_email"))).toBe(1);
    expect(world.bookings).toHaveLength(1);
    expect(third.model.asked).toBe(1); // only the final answer: no tool was asked for again
    expect(await onlyStep(store, runId, 1)).toMatchObject({ tool: "send_email", status: "CONFIRMED", phase: "APPROVED_HOLD" });

    // Resuming the same old state once more (a second worker, a retry) sends nothing new.
    const fourth = processFor(runId);
    const again = await RunState.fromString(fourth.agent, saved);
    expect((await fourth.saga.settleApprovals(again)).approved).toHaveLength(1);
    await fourth.runner.run(fourth.agent, again);
    expect(world.emails).toHaveLength(1);
    expect(world.bookings).toHaveLength(1);
    expect(await first.engine.irreversibleBeforePivot(runId)).toBe(0);
  });

  it("keeps a held call of a namespaced tool (the SDK renames team.send_email): pending() lists it, it is approved in Sagaboard and runs once", async () => {
    const handle = await factory.make(new ManualClock());
    cleanup = handle.cleanup;
    const world = new TripWorld();
    const email = sagaTool({
      name: "team.send_email", description: "Email the traveller", parameters: ZSendEmailArgs, class: ToolClass.IRREVERSIBLE,
      execute: (a) => world.send(a, currentSagaStep().stepKey),
      lookup: (key) => world.findEmail(key),
      correction: (a) => ({ audience: ["customer"], subject: `Correction: ${a.subject}`, body: "Please disregard our last email." }),
    });
    const engine = new ReviewerEngine({ store: handle.store, registry: new ToolRegistry([email.definition]), clock: new ManualClock(), ids: sequentialIds() });
    const run = await engine.startRun({ title: "Namespaced email", agent: "team" });
    const saga = new SagaAgentRun({ engine, runId: run.runId, tools: [email] });
    expect(saga.tools.map((t) => t.name)).toEqual(["team_send_email"]); // what the SDK calls it
    const model = new ScriptedTripModel([{ name: "team_send_email", args: { to: "ada@example.com", subject: "Your trip" } }]);
    const agent = new Agent({ name: "trip", instructions: "Tell the traveller.", model, tools: saga.tools });
    const held = await new Runner({ tracingDisabled: true }).run(agent, "Tell Ada.");
    expect(held.interruptions).toHaveLength(1);
    const [pending] = saga.pending(held.state);
    expect(pending).toMatchObject({ tool: "team.send_email", reason: "IRREVERSIBLE", escalationId: expect.stringMatching(/^esc_/) });
    expect(world.emails).toHaveLength(0);

    await engine.decideHeldCall(pending!.escalationId!, { approve: true, actor: REVIEWER });
    expect((await saga.settleApprovals(held.state)).approved).toEqual([pending!.callId]);
    await new Runner({ tracingDisabled: true }).run(agent, held.state);
    expect(world.emailsFor(stepKey(run.runId, 0, "team.send_email"))).toBe(1);
    expect(world.emails).toHaveLength(1);
  });

  it("replays a booking whose effect happened before a crash: the restarted run records it from the world, one effect", async () => {
    const { world, store, processFor, start } = await open();
    const { runId, first } = await start();
    world.bookingModes.push("crash-after");

    await expect(first.runner.run(first.agent, "Book Lisbon and tell Ada.")).rejects.toThrow(/simulated crash/);
    expect(world.bookings).toHaveLength(1);
    expect(await onlyStep(store, runId, 0)).toMatchObject({ tool: "book_hotel", status: "INTENDED" });

    // The crash came before any state was saved: the new process starts the agent over.
    const second = processFor(runId);
    const held = await second.runner.run(second.agent, "Book Lisbon and tell Ada.");
    expect(world.bookingsFor(stepKey(runId, 0, "book_hotel"))).toBe(1);
    expect(world.bookings).toHaveLength(1);
    expect(await onlyStep(store, runId, 0)).toMatchObject({ status: "CONFIRMED", externalRef: "htl_1", result: { bookingId: "htl_1" } });
    expect(held.interruptions.map((i) => i.name)).toEqual(["send_email"]);
  });

  it("tells the model an unknown outcome, and its unchanged retry is reconciled instead of booked again", async () => {
    const { world, start } = await open();
    const { runId, first } = await start();
    world.bookingModes.push("timeout-after");

    const held = await first.runner.run(first.agent, "Book Lisbon and tell Ada.");
    expect(world.bookingsFor(stepKey(runId, 0, "book_hotel"))).toBe(1);
    expect(world.bookings).toHaveLength(1);
    expect(held.interruptions.map((i) => i.name)).toEqual(["send_email"]);
    const outputs = held.newItems.filter((i) => i.type === "tool_call_output_item").map((i) => JSON.stringify(i.rawItem));
    expect(outputs.some((o) => o.includes("is unknown"))).toBe(true);
  });
});

describe("OpenAI Agents SDK adapter: approvals", () => {
  it("an approval given in the SDK alone does not send: the model is told the call is held", async () => {
    const { world, start } = setup(new MemorySagaStore(new ManualClock()));
    const { first } = await start();
    const held = await first.runner.run(first.agent, "Book Lisbon and tell Ada.");
    const state = held.state;
    for (const item of state.getInterruptions()) state.approve(item);
    const done = await first.runner.run(first.agent, state);
    expect(world.emails).toHaveLength(0);
    expect(JSON.stringify(done.newItems.map((i) => i.rawItem))).toContain("Not done");
  });

  it("a reviewer's rejection in Sagaboard becomes the SDK's rejection, and nothing is sent", async () => {
    const { world, processFor, start } = setup(new MemorySagaStore(new ManualClock()));
    const { runId, first } = await start();
    const held = await first.runner.run(first.agent, "Book Lisbon and tell Ada.");
    const [pending] = first.saga.pending(held.state);
    await first.engine.decideHeldCall(pending!.escalationId!, { approve: false, actor: REVIEWER, note: "wrong address" });

    const second = processFor(runId);
    const state = await RunState.fromString(second.agent, held.state.toString());
    const settled = await second.saga.settleApprovals(state);
    expect(settled).toMatchObject({ approved: [], waiting: [], rejected: [pending!.callId] });
    const done = await second.runner.run(second.agent, state);
    expect(world.emails).toHaveLength(0);
    expect(JSON.stringify(done.newItems.map((i) => i.rawItem))).toContain("rejected");
  });

  it("runs the calls of one turn concurrently in the SDK but in call order in the log; the held one resumes once", async () => {
    const store = new MemorySagaStore(new ManualClock());
    const { world, processFor, start } = setup(store);
    const { runId, first } = await start(true);
    const held = await first.runner.run(first.agent, "Book Lisbon and tell Ada.");
    expect(first.model.asked).toBe(1);
    expect(held.interruptions.map((i) => i.name)).toEqual(["send_email"]);
    expect((await store.listSteps(runId)).map((s) => [s.stepIdx, s.tool, s.status])).toEqual([[0, "book_hotel", "CONFIRMED"]]);
    const [pending] = first.saga.pending(held.state);
    await first.engine.decideHeldCall(pending!.escalationId!, { approve: true, actor: REVIEWER });

    const second = processFor(runId, TRIP, true);
    const state = await RunState.fromString(second.agent, held.state.toString());
    expect((await second.saga.settleApprovals(state)).approved).toEqual([pending!.callId]);
    const done = await second.runner.run(second.agent, state);
    expect(done.finalOutput).toContain("msg_1");
    expect(world.bookings).toHaveLength(1);
    expect(world.emails).toHaveLength(1);
    expect(world.searches).toBe(1);
  });

  it("a pending pivot holds the email as an interruption; once the reviewer approves the pivot, the plan's email runs once in the commit phase", async () => {
    const store = new MemorySagaStore(new ManualClock());
    const { world, processFor, start } = setup(store);
    const { runId, first } = await start();
    const held = await first.runner.run(first.agent, "Book Lisbon and tell Ada.");
    const email = TRIP[2]!.args;
    const pivot = await first.saga.requestPivot({ summary: "Lisbon booked (releasable); email Ada about it.", plan: [{ tool: "send_email", args: email }] });

    const waiting = processFor(runId);
    const early = await RunState.fromString(waiting.agent, held.state.toString());
    expect((await waiting.saga.settleApprovals(early)).waiting).toMatchObject([{ tool: "send_email", reason: "PIVOT_PENDING", pivotId: pivot.id }]);

    await first.engine.decidePivot(pivot.id, { approve: true, actor: REVIEWER, planHash: pivot.planHash });
    expect((await first.saga.awaitPivot(pivot.id, { timeoutMs: 0 })).status).toBe("APPROVED");
    const second = processFor(runId);
    const state = await RunState.fromString(second.agent, held.state.toString());
    expect((await second.saga.settleApprovals(state)).approved).toHaveLength(1);
    await second.runner.run(second.agent, state);
    expect(world.emails).toHaveLength(1);
    expect(world.bookings).toHaveLength(1);
    expect(await onlyStep(store, runId, 1)).toMatchObject({ tool: "send_email", phase: "COMMIT", approvalId: pivot.id, planItemIdx: 0 });
  });

  it("refuses a state that belongs to another saga run, naming both", async () => {
    const { processFor, start } = setup(new MemorySagaStore(new ManualClock()));
    const { first } = await start();
    const held = await first.runner.run(first.agent, "Book Lisbon and tell Ada.");
    const other = processFor("run_other");
    const state = await RunState.fromString(other.agent, held.state.toString());
    await expect(other.saga.settleApprovals(state)).rejects.toThrow(/belongs to saga run run_.*not run_other/);
    expect(() => other.saga.pending(state)).toThrow(/belongs to saga run/);
  });
});
