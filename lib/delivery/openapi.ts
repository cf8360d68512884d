/**
 * The OpenAPI 3.1 document, generated from the endpoint contracts' zod schemas (z.toJSONSchema,
 * JSON Schema draft 2020-12, which OpenAPI 3.1 uses as its schema dialect). Request schemas are
 * rendered as their input type, responses as their output type. Schemas with a `.meta({ id })` and
 * recursive schemas end up in `components.schemas` and are referenced from the operations.
 */
import * as z from "zod";
import { toOpenApiPath, type AnyEndpoint } from "@/packages/client/src/protocol/endpoint";
import { API_ERROR_HTTP_STATUS, ZErrorBody } from "@/packages/client/src/protocol/errors";
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_METHODS } from "./idempotency";
import { MAX_BODY_BYTES } from "./route";

/** A JSON Schema or OpenAPI object, as plain JSON. */
export type JsonObject = { [key: string]: unknown };

/** An OpenAPI 3.1 document (the parts we produce). */
export interface OpenApiDocument extends JsonObject {
  /** Always "3.1.0". */
  openapi: "3.1.0";
  /** Title, version and description. */
  info: { title: string; version: string; description: string };
  /** Path template (`/api/v1/runs/{runId}`) -> method -> operation. */
  paths: Record<string, Record<string, JsonObject>>;
  /** Where the API is served. */
  servers: { url: string; description: string }[];
  /** Shared schemas, responses and the security schemes (agents' bearer token, people's session cookie). */
  components: {
    schemas: Record<string, JsonObject>;
    responses: Record<string, JsonObject>;
    securitySchemes: Record<string, JsonObject>;
  };
}

/** next-auth's session cookie over plain HTTP (`__Secure-` is prefixed over HTTPS). */
const SESSION_COOKIE_NAME = "next-auth.session-token";

/** Options of `buildOpenApiDocument`. */
export interface OpenApiOptions {
  /** `info.version` (default "1.0.0"). */
  version?: string;
  /** The server's base URL (default "/": the server that serves the document). */
  serverUrl?: string;
}

const REASONS: Record<number, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No content",
  400: "The request is invalid; `details` names each bad field.",
  401:
    "No usable credentials: for agents, the Authorization header is missing, not a Bearer token, or names an unknown or revoked token; " +
    "for people, there is no session cookie or the account is disabled.",
  403: "Not allowed: the token may not use this tool, the person's role lacks the permission, or a cookie-authenticated change came from another origin.",
  404: "The addressed resource does not exist.",
  409: "Conflict: approval required, a step unresolved, a concurrent change, or the same Idempotency-Key still in flight.",
  413: `The body is larger than ${MAX_BODY_BYTES} bytes.`,
  422: "The change is not allowed in this state, or the Idempotency-Key was used for a different request.",
  500: "Our bug or an outage; retry later.",
  503: "The database is unreachable for a moment: send the same request again after the Retry-After header's seconds (a repeat is answered from what was recorded).",
};

/** Collects `$defs` from each generated schema into `components.schemas`, renaming on clashes. */
class SchemaCollector {
  readonly components: Record<string, JsonObject> = {};
  private anonymous = 0;


  /** JSON Schema of `schema` for the OpenAPI document, its `$defs` moved to components. */
  convert(schema: z.ZodType, io: "input" | "output"): JsonObject {
    const generated = z.toJSONSchema(schema, { target: "draft-2020-12", io }) as JsonObject;
    const { $schema: _dialect, $defs, ...root } = generated;
    const defs = ($defs ?? {}) as Record<string, JsonObject>;
    const renames = new Map<string, string>();
    const bases = new Map<string, string>();
    // A recursive schema without an id of its own (z.json() inside ZJson) is named after the
    // named definition that is only a reference to it (`JsonValue`), so every copy gets one name.
    const referrer = (anonymous: string) =>
      Object.entries(defs).find(([name, def]) => !name.startsWith("__schema") && def.$ref === `#/$defs/${anonymous}`)?.[0];
    for (const name of Object.keys(defs)) {
      const named = name.startsWith("__schema") ? referrer(name) : name;
      const id = named === undefined ? `Schema${++this.anonymous}` : name.startsWith("__schema") ? `${named}Value` : name;
      bases.set(name, io === "input" ? `${id}Input` : id);
      renames.set(name, bases.get(name)!);
    }
    const rewrite = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rewrite);
      if (value === null || typeof value !== "object") return value;
      const out: JsonObject = {};
      for (const [key, inner] of Object.entries(value)) {
        if (key === "$ref" && typeof inner === "string" && inner.startsWith("#/$defs/")) {
          const name = inner.slice("#/$defs/".length);
          out[key] = `#/components/schemas/${renames.get(name) ?? name}`;
        } else {
          out[key] = rewrite(inner);
        }
      }
      // The server refuses a key no schema declares (unknown-fields.ts reads an object with no
      // `additionalProperties` as "its properties only"), so a request says so to generated clients.
      if (io === "input" && out.type === "object" && out.properties !== undefined && !("additionalProperties" in out)) out.additionalProperties = false;
      return out;
    };
    // A definition seen before (the same id, the same content once its refs are rewritten) is reused;
    // a different one with the same id gets a numbered name (`Id2`). Refs are compared rewritten, so a
    // recursive definition (JSON values refer to themselves) matches its earlier copy.
    for (let round = 0; ; round++) {
      const clash = Object.keys(defs).find((name) => {
        const existing = this.components[renames.get(name)!];
        return existing !== undefined && JSON.stringify(existing) !== JSON.stringify(rewrite(defs[name]));
      });
      if (!clash) break;
      if (round >= 20) throw new Error(`Too many different schemas with the id "${clash}"; give them distinct .meta({ id }) values.`);
      const base = bases.get(clash)!;
      const current = renames.get(clash)!;
      renames.set(clash, `${base}${current === base ? 2 : Number(current.slice(base.length)) + 1}`);
    }
    for (const [name, def] of Object.entries(defs)) this.components[renames.get(name)!] ??= rewrite(def) as JsonObject;
    return rewrite(root) as JsonObject;
  }
}

function jsonContent(schema: JsonObject): JsonObject {
  return { "application/json": { schema } };
}

function parametersOf(collector: SchemaCollector, schema: z.ZodType | undefined, where: "path" | "query"): JsonObject[] {
  if (!schema) return [];
  const json = collector.convert(schema, "input");
  const properties = (json.properties ?? {}) as Record<string, JsonObject>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      required: where === "path" || required.has(name),
      ...(typeof description === "string" ? { description } : {}),
      schema: rest,
    };
  });
}

function operationOf(collector: SchemaCollector, endpoint: AnyEndpoint): JsonObject {
  const parameters = [...parametersOf(collector, endpoint.params, "path"), ...parametersOf(collector, endpoint.query, "query")];
  if (endpoint.auth === "agent" && IDEMPOTENT_METHODS.has(endpoint.method)) {
    parameters.push({
      name: IDEMPOTENCY_KEY_HEADER,
      in: "header",
      required: false,
      description:
        "Makes retries safe (IETF Idempotency-Key draft): the same key with the same request replays the stored response " +
        "(header Idempotent-Replayed: true); with a different request it is refused (422); while the first is in flight, 409.",
      schema: { type: "string", minLength: 1, maxLength: 255 },
    });
  }
  const successSchema = collector.convert(endpoint.response, "output");
  const responses: JsonObject = {};
  for (const status of [endpoint.successStatus, ...endpoint.otherSuccessStatuses]) {
    responses[String(status)] = { description: REASONS[status] ?? "Success", content: jsonContent(successSchema) };
  }
  for (const status of endpoint.errorStatuses) responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
  // Any endpoint may find the database away (error-response.ts): "try later", as any may fail with 500.
  responses["503"] = { $ref: "#/components/responses/Error503" };
  responses.default = { $ref: "#/components/responses/Error500" };

  return {
    operationId: endpoint.operationId,
    summary: endpoint.summary,
    ...(endpoint.description ? { description: endpoint.description } : {}),
    tags: [...endpoint.tags],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(endpoint.body
      ? {
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: collector.convert(endpoint.body, "input"),
                ...(endpoint.example === undefined ? {} : { examples: { typical: { summary: "A typical request", value: endpoint.example } } }),
              },
            },
          },
        }
      : {}),
    responses,
    security: endpoint.auth === "agent" ? [{ bearer: [] }] : endpoint.auth === "user" ? [{ session: [] }] : [],
  };
}

/** The OpenAPI 3.1 document of `endpoints`; throws when two share an operationId or a method+path. */
export function buildOpenApiDocument(endpoints: readonly AnyEndpoint[], options: OpenApiOptions = {}): OpenApiDocument {
  const collector = new SchemaCollector();
  const errorSchema = collector.convert(ZErrorBody, "output");
  const paths: OpenApiDocument["paths"] = {};
  const operationIds = new Set<string>();
  const errorStatuses = new Set<number>([500, 503]);

  for (const endpoint of endpoints) {
    const path = toOpenApiPath(endpoint.path);
    const method = endpoint.method.toLowerCase();
    const item = (paths[path] ??= {});
    if (item[method]) throw new Error(`Two endpoints are ${endpoint.method} ${endpoint.path}; each method and path needs one contract.`);
    if (operationIds.has(endpoint.operationId)) {
      throw new Error(`Two endpoints have the operationId "${endpoint.operationId}"; give one of them another operationId.`);
    }
    operationIds.add(endpoint.operationId);
    endpoint.errorStatuses.forEach((status) => errorStatuses.add(status));
    item[method] = operationOf(collector, endpoint);
  }

  const responses: Record<string, JsonObject> = {};
  for (const status of [...errorStatuses].sort((a, b) => a - b)) {
    const codes = Object.entries(API_ERROR_HTTP_STATUS)
      .filter(([, s]) => s === status)
      .map(([code]) => code);
    responses[`Error${status}`] = {
      description: `${REASONS[status] ?? "Error"}${codes.length > 0 ? ` Codes: ${codes.join(", ")}.` : ""}`,
      content: jsonContent(errorSchema),
    };
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Sagaboard API",
      version: options.version ?? "1.0.0",
      description:
        "The saga log of LLM agents' tool calls over HTTP. Agents authenticate with a Bearer token (sgb_...) scoped to named tools; " +
        "the dashboard's own endpoints use the signed-in person's session cookie and role. " +
        "Every error has the same body: { error: { code, message, details: [{ path, message }] } }.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    // Relative: the document describes the server that serves it (GET /api/v1/openapi.json).
    servers: [{ url: options.serverUrl ?? "/", description: "This Sagaboard server" }],
    paths,
    components: {
      schemas: collector.components,
      responses,
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "An agent token (sgb_...), created by an admin with `npm run token -- create` and shown once.",
        },
        session: {
          type: "apiKey",
          in: "cookie",
          name: SESSION_COOKIE_NAME,
          description:
            "The dashboard's next-auth session (sign in at /signin); over HTTPS the cookie is named __Secure-" +
            `${SESSION_COOKIE_NAME}. POST, PUT, PATCH and DELETE must also send an Origin (or Referer) of this same site.`,
        },
      },
    },
  };
}
