import { describe, expect, it } from "vitest";
import * as z from "zod";
import { allEndpoints } from "./contracts";
import { fieldMapOf, findUnknownFields } from "./unknown-fields";

const paths = (schema: z.ZodType, value: unknown, prefix = "body") => findUnknownFields(schema, value, prefix).map((d) => d.path);

describe("findUnknownFields", () => {
  const Intent = z.object({ intent: z.object({ stepIdx: z.number(), tool: z.string(), args: z.json() }) });

  it("names a misspelt key at any depth and lists the known ones", () => {
    const details = findUnknownFields(Intent, { intent: { stepIdxx: 1, tool: "t", args: {} } }, "body");
    expect(details).toEqual([{ path: "body.intent.stepIdxx", message: "unknown field; known fields: stepIdx, tool, args" }]);
  });

  it("accepts any key inside z.json(), z.unknown(), records and loose objects", () => {
    const schema = z.object({
      args: z.json(),
      result: z.unknown(),
      byName: z.record(z.string(), z.object({ n: z.number() })),
      meta: z.looseObject({ a: z.string() }),
    });
    expect(paths(schema, { args: { deep: [{ x: { y: 1 } }] }, result: { any: 1 }, byName: { k: { n: 1 } }, meta: { a: "x", extra: 1 } })).toEqual([]);
    // A record's values are still objects with their own fields.
    expect(paths(schema, { args: 1, result: 1, byName: { k: { n: 1, m: 2 } }, meta: { a: "x" } })).toEqual(["body.byName.k.m"]);
  });

  it("walks arrays item by item", () => {
    const schema = z.object({ plan: z.array(z.object({ tool: z.string() })) });
    expect(paths(schema, { plan: [{ tool: "a" }, { tool: "b", tol: "c" }] })).toEqual(["body.plan.1.tol"]);
  });

  it("reports against the union branch the discriminator picks", () => {
    const schema = z.discriminatedUnion("kind", [z.object({ kind: z.literal("a"), alpha: z.string() }), z.object({ kind: z.literal("b"), beta: z.string() })]);
    expect(paths(schema, { kind: "a", alpha: "x" })).toEqual([]);
    expect(paths(schema, { kind: "b", beta: "x", alpha: "y" })).toEqual(["body.alpha"]);
    // A key one branch declares is accepted when that branch fits.
    expect(paths(z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]), { b: "x" })).toEqual([]);
  });

  it("follows recursive schemas and intersections", () => {
    type Node = { name: string; children?: Node[] };
    const NodeSchema: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), children: z.array(NodeSchema).optional() }));
    expect(paths(NodeSchema, { name: "a", children: [{ name: "b", children: [{ name: "c", kids: [] }] }] })).toEqual(["body.children.0.children.0.kids"]);
    const both = z.intersection(z.object({ a: z.string() }), z.object({ b: z.string() }));
    expect(paths(both, { a: "x", b: "y", c: "z" })).toEqual(["body.c"]);
  });

  it("leaves type errors to the schema (a string where an object goes has no keys)", () => {
    expect(paths(Intent, { intent: "x" })).toEqual([]);
    expect(paths(Intent, null)).toEqual([]);
  });

  it("compiles every endpoint's body and query", () => {
    for (const endpoint of allEndpoints) {
      for (const schema of [endpoint.body, endpoint.query]) if (schema) expect(() => fieldMapOf(schema)).not.toThrow();
    }
  });
});
