/**
 * The OpenAPI 3.1 document: generated from the contracts, served by GET /api/v1/openapi.json
 * without a token, and shaped the way OpenAPI tools expect.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { GET } from "@/app/api/v1/openapi.json/route";
import { allEndpoints } from "@/lib/delivery/contracts";
import { defineEndpoint, fillPath, toOpenApiPath, type AnyEndpoint } from "@/packages/client/src/protocol/endpoint";
import { buildOpenApiDocument, type JsonObject } from "@/lib/delivery/openapi";
import { call } from "./api-test-kit";

const Money = z.object({ amount: z.number().int(), currency: z.string().length(3) }).meta({ id: "Money" });
type Tree = { label: string; children: Tree[] };
const TreeSchema: z.ZodType<Tree> = z.lazy(() => z.object({ label: z.string(), children: z.array(TreeSchema) }));

const testEndpoints: AnyEndpoint[] = [
  defineEndpoint({
    method: "POST",
    path: "/api/v1/test/runs/:runId/steps",
    summary: "Record an intent (test)",
    tags: ["steps"],
    auth: "agent",
    params: z.object({ runId: z.string().describe("The run (run_...)") }),
    body: z.object({ tool: z.string(), price: Money, plan: TreeSchema }),
    response: z.object({ stepId: z.string(), price: Money }),
    successStatus: 201,
    otherSuccessStatuses: [200],
  }),
  defineEndpoint({
    method: "GET",
    path: "/api/v1/test/runs",
    summary: "List runs (test)",
    tags: ["runs"],
    auth: "agent",
    query: z.object({ status: z.string().optional(), limit: z.coerce.number().int().default(20), agent: z.string() }),
    response: z.object({ items: z.array(z.object({ id: z.string(), total: Money })) }),
  }),
];

function operation(doc: ReturnType<typeof buildOpenApiDocument>, path: string, method: string): JsonObject {
  const op = doc.paths[path]?.[method];
  expect(op, `${method} ${path}`).toBeDefined();
  return op as JsonObject;
}

/** Every $ref in the document points at something that exists. */
function danglingRefs(doc: JsonObject): string[] {
  const dangling: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== "object") return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === "$ref" && typeof inner === "string") {
        const target = inner
          .replace(/^#\//, "")
          .split("/")
          .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], doc);
        if (target === undefined) dangling.push(inner);
      } else visit(inner);
    }
  };
  visit(doc);
  return dangling;
}

describe("buildOpenApiDocument", () => {
  const doc = buildOpenApiDocument([...allEndpoints, ...testEndpoints]);

  it("is an OpenAPI 3.1 document with every endpoint path and the bearer scheme", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.title).toBe("Sagaboard API");
    for (const endpoint of [...allEndpoints, ...testEndpoints]) {
      expect(doc.paths[toOpenApiPath(endpoint.path)]?.[endpoint.method.toLowerCase()]).toBeDefined();
    }
    expect(doc.paths["/api/v1/openapi.json"]?.get).toBeDefined();
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(danglingRefs(doc)).toEqual([]);
    expect(JSON.stringify(doc)).not.toContain("#/$defs/");
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it("writes :name parameters as {name} path parameters", () => {
    const op = operation(doc, "/api/v1/test/runs/{runId}/steps", "post");
    expect(op.parameters).toEqual(
      expect.arrayContaining([
        { name: "runId", in: "path", required: true, description: "The run (run_...)", schema: { type: "string" } },
        expect.objectContaining({ name: "Idempotency-Key", in: "header", required: false }),
      ]),
    );
    expect(Object.keys(doc.paths).some((p) => p.includes(":") || p.includes("["))).toBe(false);
  });

  it("documents query parameters with their required flags", () => {
    const params = operation(doc, "/api/v1/test/runs", "get").parameters as JsonObject[];
    const byName = Object.fromEntries(params.map((p) => [p.name, p]));
    expect(byName.agent).toMatchObject({ in: "query", required: true });
    expect(byName.status).toMatchObject({ in: "query", required: false });
    expect(byName.limit).toMatchObject({ in: "query", required: false, schema: { type: "integer", default: 20 } });
    expect(byName["Idempotency-Key"]).toBeUndefined();
  });

  it("takes request and response bodies from the zod schemas, shared schemas as components", () => {
    const op = operation(doc, "/api/v1/test/runs/{runId}/steps", "post");
    const requestSchema = (op.requestBody as { content: Record<string, { schema: JsonObject }> }).content["application/json"]?.schema;
    expect(requestSchema).toMatchObject({ type: "object", required: ["tool", "price", "plan"] });
    expect((requestSchema?.properties as JsonObject).price).toEqual({ $ref: "#/components/schemas/MoneyInput" });
    expect(doc.components.schemas.MoneyInput).toMatchObject({ type: "object", required: ["amount", "currency"] });
    expect(doc.components.schemas.Money).toMatchObject({ type: "object", additionalProperties: false });
    const plan = (requestSchema?.properties as JsonObject).plan as { $ref: string };
    expect(plan.$ref).toMatch(/^#\/components\/schemas\/Schema\d+Input$/);
    const responses = op.responses as Record<string, JsonObject>;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(["200", "201", "400", "401", "403", "404", "409", "413", "422", "default"]));
    expect(responses["201"]).toMatchObject({ content: { "application/json": { schema: { required: ["stepId", "price"] } } } });
    expect(op.security).toEqual([{ bearer: [] }]);
  });

  it("says request bodies refuse unknown fields, as the server does (additionalProperties: false on inputs only)", () => {
    const op = operation(doc, "/api/v1/test/runs/{runId}/steps", "post");
    const requestSchema = (op.requestBody as { content: Record<string, { schema: JsonObject }> }).content["application/json"]?.schema;
    expect(requestSchema).toMatchObject({ additionalProperties: false });
    expect(doc.components.schemas.MoneyInput).toMatchObject({ additionalProperties: false });
    const full = buildOpenApiDocument(allEndpoints);
    const begin = full.paths["/api/v1/runs/{runId}/calls"]!.post as { requestBody: { content: Record<string, { schema: JsonObject }> } };
    const body = begin.requestBody.content["application/json"]!.schema;
    const beginCall = (body.$ref ? full.components.schemas[String(body.$ref).split("/").pop()!] : body) as JsonObject;
    expect(beginCall).toMatchObject({ additionalProperties: false });
    expect(Object.keys(beginCall.properties as JsonObject)).toEqual(expect.arrayContaining(["cursor", "planItem"]));
  });

  it("types worker tasks per kind: one schema per kind, discriminated by kind, each payload the shape the worker reads", () => {
    const full = buildOpenApiDocument(allEndpoints);
    const schemas = full.components.schemas as Record<string, JsonObject>;
    expect(schemas.WorkerTask).toMatchObject({ discriminator: { propertyName: "kind" } });
    expect((schemas.WorkerTask!.oneOf as JsonObject[]).map((r) => r.$ref)).toHaveLength(6);
    const payload = (name: string) => (schemas[name]!.properties as Record<string, JsonObject>).payload;
    expect(payload("UnwindTask")).toMatchObject({ required: ["reason"] });
    expect(payload("CommitPlanTask")).toMatchObject({ required: ["pivotId"] });
    expect(payload("SendCorrectionTask")).toMatchObject({ required: ["correctionId", "messages"] });
    expect(JSON.stringify(full.paths["/api/v1/worker/claim"])).toContain("#/components/schemas/WorkerTask");
  });

  it("uses the one error body for 400/401/403/404/409/422", () => {
    for (const status of [400, 401, 403, 404, 409, 422]) {
      const response = doc.components.responses[`Error${status}`] as { content: Record<string, { schema: JsonObject }> };
      expect(response.content["application/json"]?.schema).toEqual({ $ref: "#/components/schemas/Error" });
    }
    expect(doc.components.schemas.Error).toMatchObject({ properties: { error: { required: ["code", "message", "details"] } } });
    expect(doc.components.responses.Error409?.description).toContain("IDEMPOTENCY_IN_FLIGHT");
  });

  it("refuses two contracts for the same method and path", () => {
    const first = testEndpoints[1] as AnyEndpoint;
    expect(() => buildOpenApiDocument([first, { ...first, operationId: "other" }])).toThrow(/Two endpoints are GET/);
    expect(() => buildOpenApiDocument([first, { ...first, method: "POST" }])).toThrow(/operationId/);
  });
});

describe("GET /api/v1/openapi.json", () => {
  it("serves the document of allEndpoints without a token", async () => {
    const res = await call(GET, "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.json).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(allEndpoints))));
    expect(res.json.paths["/api/v1/openapi.json"].get.security).toEqual([]);
  });
});

describe("fillPath", () => {
  it("fills and encodes :name parameters", () => {
    expect(fillPath("/api/v1/runs/:runId/steps/:stepIdx", { runId: "run 1/x", stepIdx: 3 })).toBe("/api/v1/runs/run%201%2Fx/steps/3");
    expect(() => fillPath("/api/v1/runs/:runId", {})).toThrow(/runId/);
  });
});
