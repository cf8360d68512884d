/**
 * The route wrapper: turns an endpoint contract and a handler into a Next.js route handler, so a
 * route file is a few lines:
 *
 *   export const POST = agentRoute(createRun, async ({ principal, body, prisma }) => toRunView(...));
 *
 * For every request it: authenticates the agent (agentRoute), refuses bodies over 1 MiB (413),
 * parses the JSON body, path parameters and query with the contract's schemas (400 naming each field,
 * e.g. `body.args.amount`), applies the Idempotency-Key contract to POST/PUT/PATCH/DELETE requests
 * that carry the header, calls the handler, parses its result with the response schema (a mismatch is
 * our bug: 500), and maps anything thrown to the one error body (errors.ts).
 */
import * as z from "zod";
import { getPrisma, type PrismaClient } from "@/lib/core/db/prisma";
import type { Json } from "@/packages/client/src/saga/tools";
import { authenticateAgent, authenticateAgentForGuardedWrite, verifiedAgent, type AgentPrincipal } from "@/lib/server/tokens/authenticate-agent";
import type { Endpoint, EndpointAuth, ObjectSchema, Parsed } from "@/packages/client/src/protocol/endpoint";
import { ApiError, validationError, zodIssuesToDetails, type TErrorDetail } from "@/packages/client/src/protocol/errors";
import { retryAfterHeaders, toErrorPayload, toErrorResponse } from "@/lib/core/error-response";
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_METHODS,
  IDEMPOTENT_REPLAYED_HEADER,
  parseIdempotencyKey,
  withIdempotency,
  type StoredResponse,
} from "./idempotency";
import { findUnknownFields } from "./unknown-fields";
import { observeAgentRequest } from "@/lib/core/observability/agent-requests";
import { recordRefusedAttempt, type RefusedAttempt } from "@/lib/server/tokens/record-refused-attempt";

/** The largest request body accepted, in bytes (1 MiB). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The second argument Next.js passes to a route handler (params of dynamic segments). */
export interface RouteContext {
  /** The dynamic segments' values (Next.js 15+ passes a promise). */
  params: Promise<Record<string, string | string[] | undefined>>;
}

/** A Next.js route handler (`export const POST = ...`). */
export type RouteHandler = (request: Request, context?: RouteContext) => Promise<Response>;

/** A handler's answer with an explicit status, for endpoints with two success statuses. */
export class StatusResult<T> {
  constructor(
    /** One of the endpoint's success statuses. */
    readonly status: number,
    /** The response body (parsed with the endpoint's response schema). */
    readonly body: T,
  ) {}
}

/** Answers with `status` instead of the endpoint's `successStatus` (e.g. 200 "existing" vs 201 "created"). */
export function withStatus<T>(status: number, body: T): StatusResult<T> {
  return new StatusResult(status, body);
}

/** What every handler receives. */
export interface PublicHandlerContext<TParams, TQuery, TBody> {
  /** Parsed path parameters (undefined when the endpoint has none). */
  params: Parsed<TParams>;
  /** Parsed query (undefined when the endpoint has none). */
  query: Parsed<TQuery>;
  /** Parsed JSON body (undefined when the endpoint takes none). */
  body: Parsed<TBody>;
  /** The raw request (headers, URL, signal for long polls). */
  request: Request;
}

/** What an agent endpoint's handler receives. */
export interface AgentHandlerContext<TParams, TQuery, TBody> extends PublicHandlerContext<TParams, TQuery, TBody> {
  /** The authenticated agent; authorize tools with `assertToolInScope` (lib/server/agent-api/agent-access.ts). */
  principal: AgentPrincipal;
  /**
   * Only on `{ guardedWrite: true }` routes: set when the token was not read for this request, so a
   * write must carry it (IntentGuard / StepFence `activeToken`); any other path calls `verified()` first.
   */
  activeToken?: string;
  /** The principal with its token row read for this request (UNAUTHORIZED when revoked). */
  verified(): Promise<AgentPrincipal>;
  /** The process-wide Prisma client. */
  prisma: PrismaClient;
}

/** What a handler returns: the response body, or `withStatus(status, body)`. */
export type HandlerResult<TResponse extends z.ZodType> = z.input<TResponse> | StatusResult<z.input<TResponse>>;

/** An agent endpoint's handler. */
export type AgentHandler<TParams, TQuery, TBody, TResponse extends z.ZodType> = (
  ctx: AgentHandlerContext<TParams, TQuery, TBody>,
) => Promise<HandlerResult<TResponse>> | HandlerResult<TResponse>;

/** A public endpoint's handler. */
export type PublicHandler<TParams, TQuery, TBody, TResponse extends z.ZodType> = (
  ctx: PublicHandlerContext<TParams, TQuery, TBody>,
) => Promise<HandlerResult<TResponse>> | HandlerResult<TResponse>;

/** Options of an agent route. */
export interface AgentRouteOptions {
  /**
   * The handler's write proves the token itself (see AgentHandlerContext.activeToken), so a recently
   * authenticated token is not read again. Requests with an Idempotency-Key always read it.
   */
  guardedWrite?: boolean;
}

/** A route handler for an endpoint that agents call with their token. */
export function agentRoute<
  TParams extends ObjectSchema | undefined,
  TQuery extends ObjectSchema | undefined,
  TBody extends z.ZodType | undefined,
  TResponse extends z.ZodType,
>(
  endpoint: Endpoint<TParams, TQuery, TBody, TResponse, "agent">,
  handler: AgentHandler<TParams, TQuery, TBody, TResponse>,
  options: AgentRouteOptions = {},
): RouteHandler {
  assertAuth(endpoint, "agent", "agentRoute");
  return async (request, context) => {
    try {
      const prisma = await getPrisma();
      const key = IDEMPOTENT_METHODS.has(request.method.toUpperCase())
        ? parseIdempotencyKey(request.headers.get(IDEMPOTENCY_KEY_HEADER))
        : null;
      const authorization = request.headers.get("authorization");
      const auth =
        options.guardedWrite && key === null
          ? await authenticateAgentForGuardedWrite(prisma, authorization)
          : verifiedAgent(await authenticateAgent(prisma, authorization));
      const { principal } = auth;
      const { rawBody, inputs } = await readInputs(endpoint, request, context);
      // Timed for the latency histogram, and traced when tracing is on (lib/core/observability); a replayed answer is neither.
      const produce = async () => {
        const answer = await observeAgentRequest(endpoint.operationId, request, () =>
          respond(endpoint, () => handler({ ...inputs, request, principal, prisma, activeToken: auth.activeToken, verified: auth.verified })),
        );
        // A request refused because it would cross a control is an attempt an admin must see on the token's chain.
        if (answer.status === 403) await recordRefusedAttempt(prisma, principal, refusedAttempt(endpoint.operationId, answer.body));
        return answer;
      };
      if (key === null) return jsonResponse(await produce());

      const url = new URL(request.url);
      const { response, replayed } = await withIdempotency(
        prisma,
        { principal: `agent:${principal.tokenId}`, key, method: request.method, path: url.pathname + url.search, body: rawBody },
        produce,
      );
      return jsonResponse(response, replayed ? { [IDEMPOTENT_REPLAYED_HEADER]: "true" } : {});
    } catch (e) {
      return withNoStore(toErrorResponse(e));
    }
  };
}

/** What a 403's error body says, for the token's audit chain. */
function refusedAttempt(operation: string, body: Json): RefusedAttempt {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  const details = Array.isArray(error?.details) ? (error.details as { path?: unknown }[]) : [];
  return { operation, code: String(error?.code ?? "FORBIDDEN"), message: String(error?.message ?? ""), fields: details.map((d) => String(d.path ?? "")) };
}

/** A route handler for an endpoint anyone may call (the OpenAPI document, health). No idempotency. */
export function publicRoute<
  TParams extends ObjectSchema | undefined,
  TQuery extends ObjectSchema | undefined,
  TBody extends z.ZodType | undefined,
  TResponse extends z.ZodType,
>(
  endpoint: Endpoint<TParams, TQuery, TBody, TResponse, "public">,
  handler: PublicHandler<TParams, TQuery, TBody, TResponse>,
): RouteHandler {
  assertAuth(endpoint, "public", "publicRoute");
  return async (request, context) => {
    try {
      const { inputs } = await readInputs(endpoint, request, context);
      return jsonResponse(await respond(endpoint, () => handler({ ...inputs, request })));
    } catch (e) {
      return withNoStore(toErrorResponse(e));
    }
  };
}

/** Throws at module load when a wrapper is given an endpoint of another kind (a contract typo fails the first test). */
export function assertAuth(endpoint: { auth: EndpointAuth; method: string; path: string }, expected: EndpointAuth, wrapper: string): void {
  if (endpoint.auth !== expected) {
    throw new Error(`${wrapper} needs an endpoint with auth "${expected}"; ${endpoint.method} ${endpoint.path} has "${endpoint.auth}".`);
  }
}

/** A request's validated inputs. */
export interface Inputs<TParams, TQuery, TBody> {
  /** Parsed path parameters. */
  params: Parsed<TParams>;
  /** Parsed query. */
  query: Parsed<TQuery>;
  /** Parsed JSON body. */
  body: Parsed<TBody>;
}

/**
 * Reads and validates body, params and query, reporting every bad field at once. A key the schemas
 * do not declare (a typo, a field of another endpoint) is a bad field too (unknown-fields.ts), in
 * the query string and at any depth of the body, so it is never silently dropped; so is a body or a
 * query parameter sent to an endpoint that takes none.
 */
export async function readInputs<TParams extends ObjectSchema | undefined, TQuery extends ObjectSchema | undefined, TBody extends z.ZodType | undefined>(
  endpoint: Endpoint<TParams, TQuery, TBody, z.ZodType, EndpointAuth>,
  request: Request,
  context: RouteContext | undefined,
): Promise<{ rawBody: unknown; inputs: Inputs<TParams, TQuery, TBody> }> {
  const rawBody = endpoint.body || request.body ? await readJsonBody(request) : undefined;
  const rawQuery = queryObject(new URL(request.url).searchParams);
  const unknown = [...unknownFieldsOf(endpoint.query, rawQuery, "query", "query parameter"), ...unknownFieldsOf(endpoint.body, rawBody, "body", "body field")];
  const reported = new Set(unknown.map((d) => d.path));
  const details: TErrorDetail[] = [...unknown];
  const parse = async (schema: z.ZodType | undefined, value: unknown, prefix: string): Promise<unknown> => {
    if (!schema) return undefined;
    const result = await schema.safeParseAsync(value);
    if (result.success) return result.data;
    // A strict object's own "Unrecognized key" issue repeats what the unknown-field walk said.
    const issues = result.error.issues.filter((issue) => issue.code !== "unrecognized_keys" || !issue.keys.every((key) => reported.has([prefix, ...issue.path.map(String), key].join("."))));
    details.push(...zodIssuesToDetails(new z.ZodError(issues), prefix));
    return undefined;
  };
  const params = await parse(endpoint.params, endpoint.params ? await readParams(context) : undefined, "params");
  const query = await parse(endpoint.query, endpoint.query ? rawQuery : undefined, "query");
  const body = await parse(endpoint.body, rawBody, "body");
  if (details.length > 0) throw validationError(details);
  return { rawBody, inputs: { params, query, body } as Inputs<TParams, TQuery, TBody> };
}

/** Unknown keys of a query or body; without a schema, every key (and any body at all) is unknown. */
function unknownFieldsOf(schema: z.ZodType | undefined, value: unknown, prefix: string, what: string): TErrorDetail[] {
  if (schema) return findUnknownFields(schema, value, prefix);
  if (value === undefined) return [];
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    return Object.keys(value).map((key) => ({ path: `${prefix}.${key}`, message: `unknown ${what}; this endpoint takes none` }));
  }
  return [{ path: prefix, message: "this endpoint takes no body; send none" }];
}

/** Query string as an object: a repeated name becomes an array, a single one a string. */
function queryObject(searchParams: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(searchParams.keys())) {
    const values = searchParams.getAll(name);
    query[name] = values.length === 1 ? (values[0] ?? "") : values;
  }
  return query;
}

function tooLarge(): ApiError {
  return new ApiError(
    "PAYLOAD_TOO_LARGE",
    `The request body is larger than ${MAX_BODY_BYTES} bytes (1 MiB). Send large results by reference (a URL or an external id) instead.`,
    { details: [{ path: "body", message: `larger than ${MAX_BODY_BYTES} bytes` }] },
  );
}

/** How `readJsonBody` reads a body: its size limit, the 413 past it, and what the 400s call it. */
export interface JsonBodyLimits {
  /** The most bytes read (default MAX_BODY_BYTES). */
  maxBytes: number;
  /** The error past `maxBytes`. */
  tooLarge: () => ApiError;
  /** What the body is, in validation messages ("The request body", "The uploaded file"). */
  what: string;
}

const REQUEST_BODY: JsonBodyLimits = { maxBytes: MAX_BODY_BYTES, tooLarge, what: "The request body" };

/** The JSON body (undefined when empty); 413 past the limit, 400 when it is not UTF-8 JSON or nests too deep. */
export async function readJsonBody(request: Request, limits: JsonBodyLimits = REQUEST_BODY): Promise<unknown> {
  const { maxBytes, what } = limits;
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw limits.tooLarge();
  if (!request.body) return undefined;
  // Count while reading, since Content-Length may be absent (chunked) or wrong.
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw limits.tooLarge();
    }
    chunks.push(value);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw validationError([{ path: "body", message: "is not valid UTF-8" }], what);
  }
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    const reason = e instanceof Error ? e.message : "parse error";
    throw validationError([{ path: "body", message: `is not valid JSON (${reason})` }], what);
  }
  // A body nested thousands of levels deep is valid JSON that every recursive reader after this
  // (schemas, hashing, the database's JSON) would overflow on: refuse it here, with its depth.
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) {
    throw validationError([{ path: "body", message: `nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays` }], what);
  }
  return value;
}

/** How deep a body's objects and arrays may nest. */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests objects/arrays deeper than `limit` (iterative: never overflows itself). */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== "object") continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * The route's path parameters. A segment that is not valid percent-encoding (`/runs/%`) or holds a
 * lone surrogate is the caller's error (400), not ours: Next's decoding throws URIError for it.
 */
async function readParams(context: RouteContext | undefined): Promise<unknown> {
  try {
    const params = (await context?.params) ?? {};
    for (const value of Object.values(params)) for (const v of [value].flat()) if (typeof v === "string") encodeURIComponent(v);
    return params;
  } catch (e) {
    if (e instanceof URIError) throw validationError([{ path: "params", message: "a path segment is not valid percent-encoding (send a lone % as %25)" }], "The request path");
    throw e;
  }
}

/**
 * Runs the handler and shapes its answer: parsed with the response schema, as plain JSON (what is
 * sent is exactly what the idempotency store keeps). Errors become error responses here, so 4xx
 * answers can be stored and replayed.
 */
export async function respond<TResponse extends z.ZodType>(
  endpoint: Endpoint<ObjectSchema | undefined, ObjectSchema | undefined, z.ZodType | undefined, TResponse, EndpointAuth>,
  run: () => Promise<HandlerResult<TResponse>> | HandlerResult<TResponse>,
): Promise<StoredResponse> {
  try {
    const result = await run();
    const { status, body } = result instanceof StatusResult ? result : { status: endpoint.successStatus, body: result };
    const where = `${endpoint.method} ${endpoint.path} (${endpoint.operationId})`;
    if (status !== endpoint.successStatus && !endpoint.otherSuccessStatuses.includes(status)) {
      throw internal(`${where} answered ${status}, which its contract does not list among its success statuses.`);
    }
    const parsed = await endpoint.response.safeParseAsync(body);
    if (!parsed.success) {
      const issues = zodIssuesToDetails(parsed.error).map((d) => `${d.path || "(root)"}: ${d.message}`);
      throw internal(`${where} produced a response that does not match its contract: ${issues.join("; ")}`);
    }
    return { status, body: JSON.parse(JSON.stringify(parsed.data ?? null)) as Json };
  } catch (e) {
    const { status, body } = toErrorPayload(e);
    return { status, body: body as unknown as Json };
  }
}

/** A contract violation: our bug, logged in full and answered with a generic 500. */
function internal(logMessage: string): ApiError {
  return new ApiError("INTERNAL", "Sagaboard produced an invalid response; this is a bug on our side. Retry later or report it.", {
    cause: new Error(logMessage),
  });
}

/**
 * API answers are never cached, and never compressed by the server (no-transform: Next's gzip would
 * cost both ends more CPU than a step's ~1 KB of JSON saves; a proxy in front may still compress).
 */
const API_CACHE_CONTROL = "no-store, no-transform";

/** A JSON response that no cache keeps. */
export function jsonResponse({ status, body }: StoredResponse, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers: { "cache-control": API_CACHE_CONTROL, ...retryAfterHeaders(status), ...headers } });
}

/** Marks an (error) response as not cacheable (and not compressed). */
export function withNoStore(response: Response): Response {
  response.headers.set("cache-control", API_CACHE_CONTROL);
  return response;
}
