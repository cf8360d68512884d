/**
 * Both adapters with the engine in an agent process over the HTTP client (the route handlers,
 * reached without a server), a reviewer deciding with the server's own store: the adapters use only
 * the engine's surface, so the agent side does not change. Each scenario counts effects per key.
 */
import { Agent, RunState, Runner, Usage, setTracingDisabled, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { Annotation, Command, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { beforeAll, describe, expect, it } from "vitest";
import { HttpSagaStore } from "../client/http-store";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { syncToolPolicies } from "@/lib/server/tools/sync-tool-policies";
import { ManualClock } from "../../saga/clock";
import { SagaEngine } from "../../saga/engine";
import { stepKey } from "../../saga/keys";
import { ToolRegistry, type Json } from "../../saga/tools";
import { ToolClass } from "../../saga/vocabulary";
import { makeToken, useTestDatabase } from "@/tests/api/api-test-kit";
import { routeFetch } from "@/tests/support/api-router";
import * as graphAdapter from "./langgraph";
import * as sdkAdapter from "./openai-agents";
import { ZBookHotelArgs, ZSendEmailArgs, TripWorld } from "./testkit";
import { ReviewerEngine } from "../../saga/reviewer-engine";

const getPrisma = useTestDatabase("adapters-http");
const REVIEWER = { type: "user" as const, id: "rev@example.com" };
beforeAll(() => setTracingDisabled(true));

/** Books, then emails, then answers in words (one call per turn). */
class TwoStepModel implements Model {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const done = (Array.isArray(request.input) ? request.input : []).filter((i) => i.type === "function_call_result").length;
    const calls = [
      { name: "book_hotel", args: { city: "Lisbon", nights: 2 } },
      { name: "send_email", args: { to: "ada@example.com", subject: "Your Lisbon trip" } },
    ];
    const next = calls[done];
    const output: ModelResponse["output"] = next
      ? [{ type: "function_call", name: next.name, callId: `call_${done}`, status: "completed", arguments: JSON.stringify(next.args) }]
      : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Booked and told." }] }];
    return { usage: new Usage(), output };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}

const policies = (world: TripWorld) => ({
  book: {
    class: ToolClass.COMPENSATABLE,
    lookup: (key: string) => world.findBooking(key),
    compensation: { with: "cancel_hotel", build: (a: { city: string }): Json => ({ city: a.city }) },
  },
  email: {
    class: ToolClass.IRREVERSIBLE,
    lookup: (key: string) => world.findEmail(key),
    correction: (a: { subject: string }) => ({ audience: ["customer"], subject: `Correction: ${a.subject}`, body: "Please disregard our last email." }),
  },
});

/** The agent's engine over HTTP, and the server's engine a reviewer decides with. */
async function sides(registry: ToolRegistry) {
  const prisma = await getPrisma();
  await syncToolPolicies(prisma, registry, "system:test");
  const token = await makeToken(["book_hotel", "send_email"]);
  const clock = new ManualClock();
  const agentEngine = () => new SagaEngine({ store: new HttpSagaStore({ baseUrl: "http://sagaboard.test", token: token.secret, fetch: routeFetch }), registry, clock, recheckAfterMs: 2000 });
  const server = new ReviewerEngine({ store: new PrismaSagaStore(prisma), registry, clock });
  return { agentEngine, server };
}

describe("the framework adapters over HTTP", () => {
  it("OpenAI Agents SDK: the held email is sent once after the reviewer approves on the server; the restored state does not book again", async () => {
    const world = new TripWorld();
    const p = policies(world);
    const tools = [
      sdkAdapter.sagaTool({ name: "book_hotel", description: "Book a hotel", parameters: ZBookHotelArgs, execute: (a) => world.book(a, sdkAdapter.currentSagaStep().stepKey), ...p.book }),
      sdkAdapter.sagaTool({ name: "send_email", description: "Email the traveller", parameters: ZSendEmailArgs, execute: (a) => world.send(a, sdkAdapter.currentSagaStep().stepKey), ...p.email }),
    ];
    const { agentEngine, server } = await sides(new ToolRegistry(tools.map((t) => t.definition), [world.cancelHotel()]));
    const run = await agentEngine().startRun({ title: "Lisbon trip over HTTP", agent: "ignored: the token names the agent" });
    const agentFor = () => {
      const saga = new sdkAdapter.SagaAgentRun({ engine: agentEngine(), runId: run.runId, tools });
      return { saga, agent: new Agent({ name: "trip", model: new TwoStepModel(), tools: saga.tools }) };
    };
    const runner = new Runner({ tracingDisabled: true });

    const first = agentFor();
    const held = await runner.run(first.agent, "Book Lisbon and tell Ada.");
    const [pending] = first.saga.pending(held.state);
    expect(pending).toMatchObject({ tool: "send_email", reason: "IRREVERSIBLE" });
    await server.decideHeldCall(pending!.escalationId!, { approve: true, actor: REVIEWER });

    const second = agentFor();
    const state = await RunState.fromString(second.agent, held.state.toString());
    expect((await second.saga.settleApprovals(state)).approved).toEqual([pending!.callId]);
    const done = await runner.run(second.agent, state);
    expect(done.finalOutput).toBe("Booked and told.");
    expect(world.bookingsFor(stepKey(run.runId, 0, "book_hotel"))).toBe(1);
    expect(world.emailsFor(stepKey(run.runId, 1, "send_email"))).toBe(1);
    expect(world.bookings).toHaveLength(1);
    expect(world.emails).toHaveLength(1);
  });

  it("LangGraph.js: the node re-run after approval replays the booking over HTTP and sends the email once", async () => {
    const world = new TripWorld();
    const p = policies(world);
    const tools = [
      graphAdapter.sagaTool({ name: "book_hotel", description: "Book a hotel", schema: ZBookHotelArgs, func: (a) => world.book(a, graphAdapter.currentSagaStep().stepKey) }, p.book),
      graphAdapter.sagaTool({ name: "send_email", description: "Email the traveller", schema: ZSendEmailArgs, func: (a) => world.send(a, graphAdapter.currentSagaStep().stepKey) }, p.email),
    ];
    const { agentEngine, server } = await sides(new ToolRegistry(tools.map((t) => t.definition), [world.cancelHotel()]));
    const run = await agentEngine().startRun({ title: "Lisbon trip over HTTP", agent: "ignored" });
    const State = Annotation.Root({ ...graphAdapter.SagaboardAnnotation.spec, email: Annotation<Json> });
    const checkpointer = new MemorySaver();
    const graphFor = () => {
      const saga = new graphAdapter.SagaGraphRun({ engine: agentEngine(), runId: run.runId, tools });
      return new StateGraph(State)
        .addNode("trip", saga.node(async () => {
          await saga.tool("book_hotel").invoke({ city: "Lisbon", nights: 2 });
          return { email: (await saga.tool("send_email").invoke({ to: "ada@example.com", subject: "Your Lisbon trip" })) as Json };
        }))
        .addEdge(START, "trip")
        .compile({ checkpointer });
    };
    const thread = { configurable: { thread_id: run.runId } };

    const paused = (await graphFor().invoke({}, thread)) as { __interrupt__?: { value: graphAdapter.SagaInterrupt }[] };
    const held = paused.__interrupt__?.[0]?.value.sagaboard;
    expect(held).toMatchObject({ tool: "send_email", reason: "IRREVERSIBLE" });
    await server.decideHeldCall(held!.escalationId!, { approve: true, actor: REVIEWER });

    const done = await graphFor().invoke(new Command({ resume: "look again" }), thread);
    expect(done.email).toMatchObject({ messageId: "msg_1" });
    expect(world.bookings).toHaveLength(1);
    expect(world.emails).toHaveLength(1);
  });
});
