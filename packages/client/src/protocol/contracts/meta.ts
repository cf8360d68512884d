/** Contracts of the API's own endpoints: the OpenAPI document. */
import * as z from "zod";
import { defineEndpoint } from "../endpoint";

/** GET /api/v1/openapi.json: this API's OpenAPI 3.1 document, generated from the contracts. */
export const getOpenApiDocument = defineEndpoint({
  method: "GET",
  path: "/api/v1/openapi.json",
  operationId: "getOpenApiDocument",
  summary: "The OpenAPI 3.1 document of this API",
  description: "Generated from the same zod schemas that validate every request and response.",
  tags: ["meta"],
  auth: "public",
  response: z.looseObject({
    openapi: z.literal("3.1.0"),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.record(z.string(), z.unknown())),
    components: z.record(z.string(), z.unknown()),
  }),
});
