/**
 * The served OpenAPI document, checked by tools that are not ours: it validates against the OpenAPI
 * 3.1 schema (@seriousme/openapi-schema-validator) and passes Redocly's recommended lint rules with no
 * errors. And what a client author needs: named schemas (no Schema1...), every refusal code as an
 * enum, a `servers` entry, and an example for every agent operation that takes a body, which the
 * operation's own schema accepts.
 */
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { allEndpoints } from "@/lib/delivery/contracts";
import { ApiErrorCode } from "@/packages/client/src/protocol/errors";
import { buildOpenApiDocument } from "@/lib/delivery/openapi";
import { ApprovalReason } from "@/packages/client/src/saga/vocabulary";
import { SagaErrorCode } from "@/packages/client/src/saga/errors";

const doc = buildOpenApiDocument(allEndpoints);

describe("the OpenAPI document, checked from outside", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)?.slice(0, 2000)).toEqual([]);
    expect(result.valid).toBe(true);
    // And the validator is not a rubber stamp: a document without paths' required parts fails it.
    expect((await new Validator().validate({ openapi: "3.1.0", info: { title: "x" } })).valid).toBe(false);
  });

  it("passes Redocly's recommended rules with no errors", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "openapi.json", config });
    const errors = problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? "?"}`);
    const warnings = problems.filter((p) => p.severity === "warn");
    console.log(`redocly recommended: ${errors.length} errors, ${warnings.length} warnings (${[...new Set(warnings.map((w) => w.ruleId))].join(", ")})`);
    expect(errors).toEqual([]);
  }, 60_000);

  it("names every schema, lists every refusal and hold reason as an enum, and says where it is served", () => {
    const names = Object.keys(doc.components.schemas);
    expect(names.filter((n) => /^Schema\d+/.test(n))).toEqual([]);
    expect(new Set((doc.components.schemas.ErrorCode as { enum: string[] }).enum)).toEqual(new Set([...Object.values(ApiErrorCode), ...Object.values(SagaErrorCode)]));
    expect(new Set((doc.components.schemas.ApprovalReason as { enum: string[] }).enum)).toEqual(new Set(Object.values(ApprovalReason)));
    expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })]);
  });

  it("has an example for every agent operation with a body, and each one passes its own schema", () => {
    const withBody = allEndpoints.filter((e) => e.auth === "agent" && e.body !== undefined);
    expect(withBody.length).toBeGreaterThan(10);
    const missing = withBody.filter((e) => e.example === undefined).map((e) => e.operationId);
    expect(missing).toEqual([]);
    for (const e of withBody) {
      const parsed = e.body!.safeParse(e.example);
      expect(parsed.success, `${e.operationId}: ${parsed.success ? "" : parsed.error.message}`).toBe(true);
      const media = (doc.paths[e.path.replace(/:(\w+)/g, "{$1}")]?.[e.method.toLowerCase()] as { requestBody: { content: Record<string, { examples?: object }> } }).requestBody.content["application/json"];
      expect(media?.examples, e.operationId).toBeDefined();
    }
  });
});
