/**
 * Endpoint contracts: one object per operation holding its method, path and zod schemas. The route
 * wrapper (route.ts) validates requests and responses with them, the OpenAPI document (openapi.ts)
 * is generated from them, and a client can build URLs from them. Contracts live in
 * lib/delivery/contracts/<area>.ts and are listed in lib/delivery/contracts/index.ts.
 *
 * Path syntax: `path` uses `:name` for a parameter (`/api/v1/runs/:runId`), which matches the route
 * folder `app/api/v1/runs/[runId]` and becomes `{runId}` in the OpenAPI document. Every `:name` must
 * be a key of the `params` schema and vice versa; `defineEndpoint` throws otherwise.
 */
import * as z from "zod";

/** HTTP methods an endpoint can have. */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Who may call an endpoint: an agent with a Bearer token (`agentRoute`), anyone (`publicRoute`), or
 * a signed-in person with the dashboard's session cookie (`userRoute` in lib/delivery/user-route.ts).
 */
export type EndpointAuth = "agent" | "public" | "user";

/** Schema of path parameters or query strings: an object of (coerced) strings. */
export type ObjectSchema = z.ZodObject<z.ZodRawShape, z.core.$ZodObjectConfig>;

/** A validated endpoint contract. */
export interface Endpoint<
  TParams extends ObjectSchema | undefined = ObjectSchema | undefined,
  TQuery extends ObjectSchema | undefined = ObjectSchema | undefined,
  TBody extends z.ZodType | undefined = z.ZodType | undefined,
  TResponse extends z.ZodType = z.ZodType,
  TAuth extends EndpointAuth = EndpointAuth,
> {
  /** HTTP method. */
  readonly method: HttpMethod;
  /** Path with `:name` parameters (`/api/v1/runs/:runId`). */
  readonly path: string;
  /** Unique operation name in the OpenAPI document (`createRun`). */
  readonly operationId: string;
  /** One line for the OpenAPI document. */
  readonly summary: string;
  /** Longer explanation (Markdown), if any. */
  readonly description: string | undefined;
  /** OpenAPI tags (`runs`). */
  readonly tags: readonly string[];
  /** Path parameters, or undefined when the path has none. */
  readonly params: TParams;
  /** Query string (values arrive as strings or string arrays: use z.coerce), or undefined. */
  readonly query: TQuery;
  /** JSON request body, or undefined when the endpoint takes none. */
  readonly body: TBody;
  /** The success response body; the handler's result is parsed with it before it is sent. */
  readonly response: TResponse;
  /** Status of a success (default 200; 201 for creations). */
  readonly successStatus: number;
  /** Further success statuses the handler may answer with `withStatus` (documented in OpenAPI). */
  readonly otherSuccessStatuses: readonly number[];
  /** Who may call it. */
  readonly auth: TAuth;
  /** Error statuses to document; defaults depend on auth and inputs (see `defaultErrorStatuses`). */
  readonly errorStatuses: readonly number[];
  /** An example request body (or, for body-less operations, nothing) for the OpenAPI document. */
  readonly example: unknown;
}

/** What `defineEndpoint` takes: an Endpoint with defaults for the optional parts. */
export interface EndpointDefinition<
  TParams extends ObjectSchema | undefined,
  TQuery extends ObjectSchema | undefined,
  TBody extends z.ZodType | undefined,
  TResponse extends z.ZodType,
  TAuth extends EndpointAuth,
> {
  /** HTTP method. */
  method: HttpMethod;
  /** Path with `:name` parameters (`/api/v1/runs/:runId`). */
  path: string;
  /** Unique operation name; derived from method and path when omitted (`getRunsByRunId`). */
  operationId?: string;
  /** One line for the OpenAPI document. */
  summary: string;
  /** Longer explanation (Markdown). */
  description?: string;
  /** OpenAPI tags. */
  tags?: readonly string[];
  /** Path parameters; required when the path has `:name` segments. */
  params?: TParams;
  /** Query string schema. */
  query?: TQuery;
  /** JSON request body schema. */
  body?: TBody;
  /** Success response body schema. */
  response: TResponse;
  /** Status of a success (default 200). */
  successStatus?: number;
  /** Further success statuses answered with `withStatus`. */
  otherSuccessStatuses?: readonly number[];
  /** Who may call it. */
  auth: TAuth;
  /** Error statuses to document, replacing the defaults. */
  errorStatuses?: readonly number[];
  /** An example request body for the OpenAPI document (checked against `body` by the OpenAPI suite). */
  example?: TBody extends z.ZodType ? z.input<TBody> : never;
}

/** The `:name` parameters of a path, in order. */
export function pathParameterNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] ?? "");
}

/** `/api/v1/runs/:runId` -> `/api/v1/runs/{runId}` (the OpenAPI form). */
export function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
}

/** Fills `:name` parameters, URL-encoded (`/api/v1/runs/run_1`); throws when one is missing. */
export function fillPath(path: string, params: Record<string, string | number>): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`The path ${path} needs the parameter "${name}".`);
    return encodeURIComponent(String(value));
  });
}

/** Error statuses documented when the contract does not list its own. */
export function defaultErrorStatuses(def: { auth: EndpointAuth; params?: unknown; query?: unknown; body?: unknown }): number[] {
  const statuses = new Set<number>();
  if (def.params !== undefined || def.query !== undefined || def.body !== undefined) statuses.add(400);
  if (def.auth === "agent" || def.auth === "user") [400, 401, 403, 404, 409, 422].forEach((s) => statuses.add(s));
  if (def.body !== undefined) statuses.add(413);
  return [...statuses].sort((a, b) => a - b);
}

function operationIdFor(method: HttpMethod, path: string): string {
  const words = path
    .replace(/^\/api\/v\d+\//, "")
    .split("/")
    .filter(Boolean)
    .map((segment) => (segment.startsWith(":") ? `By-${segment.slice(1)}` : segment))
    .flatMap((segment) => segment.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w.charAt(0).toUpperCase() + w.slice(1))].join("");
}

/**
 * Declares an endpoint contract. Throws at module load when the path's `:name` parameters and the
 * `params` schema disagree, so a typo fails the first test that imports the contract.
 */
export function defineEndpoint<
  TResponse extends z.ZodType,
  TAuth extends EndpointAuth,
  TParams extends ObjectSchema | undefined = undefined,
  TQuery extends ObjectSchema | undefined = undefined,
  TBody extends z.ZodType | undefined = undefined,
>(def: EndpointDefinition<TParams, TQuery, TBody, TResponse, TAuth>): Endpoint<TParams, TQuery, TBody, TResponse, TAuth> {
  if (!def.path.startsWith("/")) throw new Error(`Endpoint path "${def.path}" must start with "/".`);
  if (/[[\]{}]/.test(def.path)) {
    throw new Error(`Endpoint path "${def.path}" must write parameters as :name (not [name] or {name}).`);
  }
  const inPath = pathParameterNames(def.path);
  const inSchema = def.params ? Object.keys(def.params.shape) : [];
  const missing = inPath.filter((name) => !inSchema.includes(name));
  const extra = inSchema.filter((name) => !inPath.includes(name));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(
      `Endpoint ${def.method} ${def.path}: the params schema must have exactly the path's parameters ` +
        `(missing from schema: ${missing.join(", ") || "none"}; not in path: ${extra.join(", ") || "none"}).`,
    );
  }
  if (def.body !== undefined && def.method === "GET") throw new Error(`Endpoint GET ${def.path} cannot take a body.`);
  return {
    method: def.method,
    path: def.path,
    operationId: def.operationId ?? operationIdFor(def.method, def.path),
    summary: def.summary,
    description: def.description,
    tags: def.tags ?? [],
    params: def.params as TParams,
    query: def.query as TQuery,
    body: def.body as TBody,
    response: def.response,
    successStatus: def.successStatus ?? 200,
    otherSuccessStatuses: def.otherSuccessStatuses ?? [],
    auth: def.auth,
    errorStatuses: def.errorStatuses ?? defaultErrorStatuses(def),
    example: def.example,
  };
}

/** Any endpoint, for lists (`allEndpoints`). */
export type AnyEndpoint = Endpoint<ObjectSchema | undefined, ObjectSchema | undefined, z.ZodType | undefined, z.ZodType, EndpointAuth>;

/** The parsed value of an optional schema, or undefined when there is none. */
export type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;
