/**
 * The LangGraph.js adapter against the real library: graphs whose nodes call the wrapped tools,
 * checkpointed in a MemorySaver that outlives "processes" (a new engine, SagaGraphRun and compiled
 * graph on the same store, world and checkpointer), with the effects counted per key in a fake world.
 */
import { AIMessage, HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { Annotation, Command, END, MemorySaver, MessagesAnnotation, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../saga/clock";
import { sequentialIds } from "../../saga/ids";
import { stepKey } from "../../saga/keys";
import { MemorySagaStore } from "../../saga/memory-store";
import type { SagaStore } from "../../saga/store";
import { ToolRegistry, type Json } from "../../saga/tools";
import { ToolClass } from "../../saga/vocabulary";
import { storeFactories } from "@/tests/support/harness";
import { currentSagaStep, SagaboardAnnotation, SagaGraphRun, sagaTool, wrapTool, type SagaGraphTool, type SagaInterrupt } from "./langgraph";
import { ZBookHotelArgs, ZFindHotelsArgs, ZSendEmailArgs, TripWorld } from "./testkit";
import { ReviewerEngine } from "../../saga/reviewer-engine";

const REVIEWER = { type: "user" as const, id: "rev@example.com" };

// ---- The glue a user writes (counted in the README): wrap the tools, bind them, wrap the nodes. ----
function tripTools(world: TripWorld): SagaGraphTool[] {
  return [
    sagaTool({ name: "find_hotels", description: "Search hotels", schema: ZFindHotelsArgs, func: (a) => world.search(a) }, { class: ToolClass.PURE }),
    sagaTool({ name: "book_hotel", description: "Book a hotel", schema: ZBookHotelArgs, func: (a) => world.book(a, currentSagaStep().stepKey) }, {
      class: ToolClass.COMPENSATABLE,
      lookup: (key) => world.findBooking(key),
      compensation: { with: "cancel_hotel", build: (a) => ({ city: a.city }) },
    }),
    // An existing LangChain tool, wrapped as it is:
    wrapTool(tool((a) => world.send(a, currentSagaStep().stepKey), { name: "send_email", description: "Email the traveller", schema: ZSendEmailArgs }), {
      class: ToolClass.IRREVERSIBLE,
      lookup: (key) => world.findEmail(key),
      correction: (a) => ({ audience: ["customer"], subject: `Correction: ${a.subject}`, body: "Please disregard our last email." }),
    }),
  ];
}

const TripState = Annotation.Root({
  ...SagaboardAnnotation.spec,
  city: Annotation<string>,
  hotels: Annotation<Json>,
  booking: Annotation<Json>,
  email: Annotation<Json>,
  searches: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
});

/** START -> search (pure) -> trip (book, then the irreversible email, in one node) -> END. */
function tripGraph(saga: SagaGraphRun, checkpointer: BaseCheckpointSaver) {
  return new StateGraph(TripState)
    .addNode("search", saga.node(async (s: typeof TripState.State) => ({ hotels: (await saga.tool("find_hotels").invoke({ city: s.city })) as Json, searches: 1 })))
    .addNode("trip", saga.node(async (s: typeof TripState.State) => {
      const booking = (await saga.tool("book_hotel").invoke({ city: s.city, nights: 2 })) as Json;
      const email = (await saga.tool("send_email").invoke({ to: "ada@example.com", subject: `Your ${s.city} trip` })) as Json;
      return { booking, email };
    }))
    .addEdge(START, "search")
    .addEdge("search", "trip")
    .addEdge("trip", END)
    .compile({ checkpointer });
}
// ---- end of glue ----

const TwoCities = Annotation.Root({ ...SagaboardAnnotation.spec, lisbonBooking: Annotation<Json>, portoBooking: Annotation<Json> });

/** START -> lisbon -> porto -> END: two nodes calling the same tool, checkpointed between them. */
function twoCitiesGraph(saga: SagaGraphRun, checkpointer: BaseCheckpointSaver) {
  return new StateGraph(TwoCities)
    .addNode("lisbon", saga.node(async () => ({ lisbonBooking: (await saga.tool("book_hotel").invoke({ city: "Lisbon", nights: 2 })) as Json })))
    .addNode("porto", saga.node(async () => ({ portoBooking: (await saga.tool("book_hotel").invoke({ city: "Porto", nights: 1 })) as Json })))
    .addEdge(START, "lisbon")
    .addEdge("lisbon", "porto")
    .addEdge("porto", END)
    .compile({ checkpointer });
}

function setup(store: SagaStore) {
  const world = new TripWorld();
  const clock = new ManualClock();
  const ids = sequentialIds();
  const checkpointer = new MemorySaver(); // outlives the "processes", as a database checkpointer would
  const processFor = (runId: string) => {
    const tools = tripTools(world);
    const registry = new ToolRegistry(tools.map((t) => t.definition), [world.cancelHotel()]);
    const engine = new ReviewerEngine({ store, registry, clock, ids, recheckAfterMs: 2000 });
    const saga = new SagaGraphRun({ engine, runId, tools });
    return { engine, saga, trip: tripGraph(saga, checkpointer), twoCities: twoCitiesGraph(saga, checkpointer) };
  };
  const start = async () => {
    const run = await processFor("unused").engine.startRun({ title: "Lisbon trip for Ada", agent: "trip-agent" });
    return { runId: run.runId, thread: { configurable: { thread_id: run.runId } }, first: processFor(run.runId) };
  };
  return { world, store, processFor, start };
}

function interrupts(result: unknown): SagaInterrupt[] {
  const list = (result as { __interrupt__?: { value: SagaInterrupt }[] }).__interrupt__ ?? [];
  return list.map((i) => i.value);
}

describe.each(storeFactories)("LangGraph.js adapter on the $name store", (factory) => {
  let cleanup: () => Promise<void> = async () => {};
  afterEach(async () => cleanup());
  const open = async () => {
    const handle = await factory.make(new ManualClock());
    cleanup = handle.cleanup;
    return setup(handle.store);
  };

  it("interrupts the node on the held email; the re-run node replays the booking, and the email runs once after a reviewer approves", async () => {
    const { world, store, processFor, start } = await open();
    const { runId, thread, first } = await start();

    const paused = await first.trip.invoke({ city: "Lisbon" }, thread);
    const [held] = interrupts(paused);
    expect(held?.sagaboard).toMatchObject({ tool: "send_email", reason: "IRREVERSIBLE", escalationId: expect.stringMatching(/^esc_/), args: { to: "ada@example.com" } });
    expect(world.bookingsFor(stepKey(runId, 0, "book_hotel"))).toBe(1);
    expect(world.emails).toHaveLength(0);

    // Resuming before anyone decided re-runs the node: the booking replays, the email holds again.
    const again = await first.trip.invoke(new Command({ resume: "look again" }), thread);
    expect(interrupts(again)[0]?.sagaboard.escalationId).toBe(held!.sagaboard.escalationId);
    expect(world.bookings).toHaveLength(1);
    expect(world.emails).toHaveLength(0);

    await first.engine.decideHeldCall(held!.sagaboard.escalationId!, { approve: true, actor: REVIEWER });

    // A new process resumes the thread: one email, the booking still once, the search not re-run.
    const second = processFor(runId);
    const done = await second.trip.invoke(new Command({ resume: "approved in Sagaboard" }), thread);
    expect(interrupts(done)).toHaveLength(0);
    expect(done.booking).toMatchObject({ bookingId: "htl_1" });
    expect(done.email).toMatchObject({ messageId: "msg_1" });
    expect(world.emailsFor(stepKey(runId, 1, "send_email"))).toBe(1);
    expect(world.bookings).toHaveLength(1);
    expect(world.searches).toBe(1);
    expect(done.sagaboard?.calls.map((c) => [c.stepIdx, c.tool])).toEqual([[0, "book_hotel"], [1, "send_email"]]);
    expect((await store.listSteps(runId)).map((s) => [s.stepIdx, s.tool, s.status])).toEqual([[0, "book_hotel", "CONFIRMED"], [1, "send_email", "CONFIRMED"]]);
    expect(await first.engine.irreversibleBeforePivot(runId)).toBe(0);
  });

  it("a crash after the effect in a later node: the restarted thread catches up from the checkpoint and replays (one effect per booking)", async () => {
    const { world, store, processFor, start } = await open();
    const { runId, thread, first } = await start();
    world.bookingModes.push("ok", "crash-after");

    await expect(first.twoCities.invoke({}, thread)).rejects.toThrow(/simulated crash/);
    expect(world.bookings.map((b) => (b.args as { city: string }).city)).toEqual(["Lisbon", "Porto"]);
    expect((await store.listSteps(runId)).map((s) => s.status)).toEqual(["CONFIRMED", "INTENDED"]);

    const second = processFor(runId);
    const done = await second.twoCities.invoke(null, thread);
    // Porto's own booking, found in the world by its key, not Lisbon's record at step 0.
    expect(done.portoBooking).toMatchObject({ bookingId: "htl_2", city: "Porto" });
    expect(done.lisbonBooking).toMatchObject({ bookingId: "htl_1", city: "Lisbon" });
    expect(world.bookingsFor(stepKey(runId, 0, "book_hotel"))).toBe(1);
    expect(world.bookingsFor(stepKey(runId, 1, "book_hotel"))).toBe(1);
    expect(world.bookings).toHaveLength(2);
    expect((await store.listSteps(runId)).map((s) => s.status)).toEqual(["CONFIRMED", "CONFIRMED"]);
  });
});

const Chat = Annotation.Root({ ...MessagesAnnotation.spec, ...SagaboardAnnotation.spec });

/** START -> tools (a prebuilt ToolNode running the model's tool calls) -> END. */
function toolNodeGraph(saga: SagaGraphRun, checkpointer: BaseCheckpointSaver) {
  const tools = new ToolNode(saga.tools, { handleToolErrors: false });
  return new StateGraph(Chat)
    .addNode("tools", saga.node(async (s: typeof Chat.State, config) => (await tools.invoke(s, config)) as { messages: ToolMessage[] }))
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile({ checkpointer });
}

describe("LangGraph.js adapter: decisions and misuse", () => {
  it("works under a prebuilt ToolNode: the model's held email interrupts, and runs once after approval", async () => {
    const { world, processFor, start } = setup(new MemorySagaStore(new ManualClock()));
    const { runId, thread, first } = await start();
    const modelTurn = new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "send_email", args: { to: "ada@example.com", subject: "Your trip" } }] });
    const checkpointer = new MemorySaver();

    const paused = await toolNodeGraph(first.saga, checkpointer).invoke({ messages: [new HumanMessage("Tell Ada."), modelTurn] }, thread);
    const [held] = interrupts(paused);
    expect(held?.sagaboard).toMatchObject({ tool: "send_email", reason: "IRREVERSIBLE" });
    expect(world.emails).toHaveLength(0);
    await first.engine.decideHeldCall(held!.sagaboard.escalationId!, { approve: true, actor: REVIEWER });

    const done = await toolNodeGraph(processFor(runId).saga, checkpointer).invoke(new Command({ resume: "look again" }), thread);
    const reply = done.messages.at(-1) as ToolMessage;
    expect(reply.tool_call_id).toBe("call_1");
    expect(String(reply.content)).toContain("msg_1");
    expect(world.emailsFor(stepKey(runId, 0, "send_email"))).toBe(1);
  });

  it("a reviewer's rejection answers the node 'not done' instead of interrupting again, and nothing is sent", async () => {
    const { world, processFor, start } = setup(new MemorySagaStore(new ManualClock()));
    const { runId, thread, first } = await start();
    const [held] = interrupts(await first.trip.invoke({ city: "Lisbon" }, thread));
    await first.engine.decideHeldCall(held!.sagaboard.escalationId!, { approve: false, actor: REVIEWER, note: "wrong address" });

    const done = await processFor(runId).trip.invoke(new Command({ resume: "decided" }), thread);
    expect(interrupts(done)).toHaveLength(0);
    expect(String(done.email)).toMatch(/^Not done: A reviewer \(rev@example.com\) rejected this call/);
    expect(world.emails).toHaveLength(0);
    expect(world.bookings).toHaveLength(1);
  });

  it("refuses a wrapped tool called outside a Sagaboard node, saying how to fix it", async () => {
    const { start } = setup(new MemorySagaStore(new ManualClock()));
    const { first } = await start();
    await expect(first.saga.tool("book_hotel").invoke({ city: "Lisbon", nights: 2 })).rejects.toThrow(/outside a Sagaboard node; wrap the node with saga.node/);
    expect(() => first.saga.tool("book_flight")).toThrow(/No Sagaboard tool named "book_flight".*known: find_hotels, book_hotel, send_email/);
  });
});
