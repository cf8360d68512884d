import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineCompensator, defineTool, ToolRegistry } from "../../saga/tools";
import { manifestOf } from "./declare-tools";

const effect = async () => ({ externalRef: null, result: null });
const cancelRoom = defineCompensator({ name: "trip.cancel_room", args: z.object({ room: z.string() }), run: async () => ({ externalRef: null }), verify: async () => ({ done: true }) });
const registry = new ToolRegistry(
  [
    defineTool({
      name: "trip.book_room", class: "COMPENSATABLE", args: z.object({ room: z.string(), nights: z.number() }), call: effect, lookup: async () => null,
      compensation: { with: "trip.cancel_room", build: (a) => ({ room: a.room }) },
    }),
    defineTool({
      name: "trip.send_itinerary", class: "IRREVERSIBLE", args: z.object({ to: z.string(), city: z.string() }), call: effect, lookup: async () => null,
      correction: (a) => ({ audience: ["customer"], subject: `About your trip to ${a.city}`, body: `We wrote to ${a.to} by mistake; please disregard it.` }),
    }),
    defineTool({
      name: "trip.charge", class: "IRREVERSIBLE", args: z.object({ cents: z.number() }), call: effect, lookup: async () => null,
      // Computes from a number: no template can say this, so nothing is declared for it.
      correction: (a) => ({ audience: ["finance"], subject: `Refund of ${(a.cents / 100).toFixed(2)}`, body: "Refunded." }),
    }),
  ],
  [cancelRoom],
);

describe("manifestOf", () => {
  it("declares the correction template, the audience and the compensation's arguments from the tool's own functions", () => {
    const tools = Object.fromEntries(manifestOf(registry).tools.map((t) => [t.name, t]));
    expect(tools["trip.book_room"]!.compensation).toEqual({ tool: "trip.cancel_room", args: { room: "{{room}}" } });
    expect(tools["trip.send_itinerary"]).toMatchObject({
      correction: { subject: "About your trip to {{city}}", body: "We wrote to {{to}} by mistake; please disregard it." },
      audience: ["customer"],
    });
  });

  it("declares nothing it cannot say as a template, and what is given by hand wins", () => {
    const tools = Object.fromEntries(manifestOf(registry, { "trip.charge": { correction: { subject: "Refund", body: "We refunded {{cents}} cents." } } }).tools.map((t) => [t.name, t]));
    expect(tools["trip.charge"]!.correction).toEqual({ subject: "Refund", body: "We refunded {{cents}} cents." });
    const bare = Object.fromEntries(manifestOf(registry).tools.map((t) => [t.name, t]));
    expect(bare["trip.charge"]!.correction).toBeUndefined();
    expect(bare["trip.charge"]!.audience).toEqual(["finance"]);
  });
});
