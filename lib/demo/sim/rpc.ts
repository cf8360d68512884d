/**
 * The wire protocol of the hosted simulated world (`POST /api/sim/rpc`): one request names a system,
 * one of its allow-listed methods and the arguments; the response carries the value, or the provider
 * error / simulated crash the in-process call would have thrown. Shared by the server
 * (`dispatchRpc`) and the client (`RemoteWorld`), so both sides agree on every shape.
 */
import { z } from "zod";
import { SimulatedCrash } from "@/packages/client/src/saga/crash-points";
import { ProviderError, ProviderRejection, ProviderServerError, ProviderTimeout } from "./errors";
import { MALFORMED_SHAPES, type Fault } from "./faults";
import type { World } from "./world";

/** The systems of a World that can be called over HTTP. */
export const SIM_SYSTEMS = ["payments", "ticketing", "email", "warehouse", "crm"] as const;
/** One of `SIM_SYSTEMS`. */
export type SimSystemName = (typeof SIM_SYSTEMS)[number];

/** Names of the public methods of `T` that return a promise (protected/private helpers are not in `keyof`). */
type AsyncMethodNames<T> = {
  [K in keyof T]-?: T[K] extends (...args: never[]) => Promise<unknown> ? K : never;
}[keyof T];

/**
 * What a remote caller may invoke: the public async methods of each sim, plus `crm.seed` (setup for
 * the demo and tests). Nothing else: no `constructor`, no protected helpers, no `ledger`, `faults`
 * or `clock` (those have their own routes), no getters.
 */
export const RPC_METHODS = {
  payments: ["authorize", "charge", "capture", "cancelAuthorization", "refund", "searchByMetadata", "getPaymentIntent", "listRefunds"],
  ticketing: ["createDraft", "create", "open", "deleteDraft", "close", "get", "searchByLabel", "supportQueue"],
  email: ["createDraft", "deleteDraft", "sendDraft", "send", "searchSent", "searchDrafts", "getDraft", "getMessage"],
  warehouse: ["reship", "cancelShipment", "markShipped", "findByExternalId", "get"],
  crm: ["seed", "update", "restore", "findUpdateByKey", "get"],
} as const satisfies { [S in SimSystemName]: readonly (AsyncMethodNames<World[S]> | (S extends "crm" ? "seed" : never))[] };

/** The allow-listed methods of system `S`. */
export type RpcMethod<S extends SimSystemName> = (typeof RPC_METHODS)[S][number];

// Compile-time completeness: a new public async method on a sim fails typecheck here until it is
// allow-listed above (or deliberately kept off the HTTP path by editing this check).
type Unlisted = { [S in SimSystemName]: Exclude<AsyncMethodNames<World[S]>, RpcMethod<S>> }[SimSystemName];
const everyAsyncMethodListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyAsyncMethodListed;

const allowed: { readonly [S in SimSystemName]: ReadonlySet<string> } = {
  payments: new Set(RPC_METHODS.payments),
  ticketing: new Set(RPC_METHODS.ticketing),
  email: new Set(RPC_METHODS.email),
  warehouse: new Set(RPC_METHODS.warehouse),
  crm: new Set(RPC_METHODS.crm),
};

/** True when `method` is allow-listed for `system` (own entries only, so `toString`/`__proto__` are not). */
export function isRpcMethod<S extends SimSystemName>(system: S, method: string): method is RpcMethod<S> {
  return allowed[system]?.has(method) ?? false;
}

/**
 * The operation names faults can be armed for (`FaultInjector` queues, as the sims name them:
 * note `warehouse.ship` for `markShipped`). Reads are never faulted, so they are not here.
 */
export const FAULTABLE_OPS = [
  "payments.authorize",
  "payments.charge",
  "payments.capture",
  "payments.cancelAuthorization",
  "payments.refund",
  "ticketing.createDraft",
  "ticketing.create",
  "ticketing.open",
  "ticketing.deleteDraft",
  "ticketing.close",
  "email.createDraft",
  "email.deleteDraft",
  "email.sendDraft",
  "email.send",
  "warehouse.reship",
  "warehouse.cancelShipment",
  "warehouse.ship",
  "crm.update",
  "crm.restore",
] as const;

// ---------------------------------------------------------------------------------------------------
// JSON with dates

/** `{ "$date": iso }`: how a Date travels, so the other side can revive it. */
const DATE_TAG = "$date";
/** `{ "$undefined": true }`: how an `undefined` array element travels (JSON would make it null). */
const UNDEFINED_TAG = "$undefined";

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Makes `value` JSON-safe without losing Dates: each Date becomes `{ "$date": iso }` (recursively),
 * an `undefined` array element becomes `{ "$undefined": true }`, undefined object fields are dropped
 * (as JSON would). Other values are left for `JSON.stringify`.
 */
export function encodeJson(value: unknown): unknown {
  if (value instanceof Date) return { [DATE_TAG]: value.toISOString() };
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? { [UNDEFINED_TAG]: true } : encodeJson(v)));
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, encodeJson(v)]),
    );
  }
  return value;
}

/** Inverse of `encodeJson`: revives `{ "$date": iso }` as a Date and `{ "$undefined": true }` as undefined. */
export function decodeJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeJson);
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1) {
      const tagged = value[DATE_TAG];
      if (typeof tagged === "string") {
        const date = new Date(tagged);
        if (!Number.isNaN(date.getTime())) return date;
      }
      if (value[UNDEFINED_TAG] === true) return undefined;
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decodeJson(v)]));
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------
// Schemas

/** Body of `POST /api/sim/rpc`. `args` are `encodeJson`-encoded. */
export const ZRpcRequest = z
  .object({
    system: z.enum(SIM_SYSTEMS),
    method: z.string().min(1).max(64),
    args: z.array(z.unknown()).max(16).default([]),
  })
  .strict()
  .superRefine((req, ctx) => {
    if (!isRpcMethod(req.system, req.method)) {
      ctx.addIssue({
        code: "custom",
        path: ["method"],
        message: `"${req.method}" is not callable on ${req.system}; allowed: ${RPC_METHODS[req.system].join(", ")}`,
      });
    }
  });
/** A parsed RPC request. */
export type TRpcRequest = z.output<typeof ZRpcRequest>;

/** A provider's refusal or failure, as `ProviderError` carries it. */
export const ZRpcProviderError = z.object({
  kind: z.literal("provider"),
  status: z.number().int(),
  code: z.string(),
  effectHappened: z.union([z.boolean(), z.literal("unknown")]),
  message: z.string(),
});
/** The caller "died" (a `crash_after_effect` fault): `SimulatedCrash(point)` on the client. */
export const ZRpcCrashError = z.object({ kind: z.literal("crash"), point: z.string() });

/** Body of a 200 answer of `POST /api/sim/rpc`. `value` is `encodeJson`-encoded (absent for `undefined`). */
export const ZRpcResponse = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), value: z.unknown().optional() }),
  z.object({ ok: z.literal(false), error: z.discriminatedUnion("kind", [ZRpcProviderError, ZRpcCrashError]) }),
]);
/** A parsed RPC response. */
export type TRpcResponse = z.output<typeof ZRpcResponse>;
/** The error half of an RPC response. */
export type RpcErrorBody = Extract<TRpcResponse, { ok: false }>["error"];

/** A fault as JSON can carry it (the `when` predicate of `InjectOptions` cannot cross HTTP). */
export const ZFault = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("reject"), status: z.number().int().min(400).max(499).optional(), code: z.string().min(1).max(64).optional() }).strict(),
  z.object({ kind: z.literal("server_error"), status: z.number().int().min(500).max(599).optional() }).strict(),
  z.object({ kind: z.literal("timeout_before_effect") }).strict(),
  z.object({ kind: z.literal("timeout_after_effect") }).strict(),
  z.object({ kind: z.literal("crash_after_effect") }).strict(),
  z.object({ kind: z.literal("slow"), ms: z.number().int().min(0).max(600_000) }).strict(),
  z.object({ kind: z.literal("malformed_after_effect"), shape: z.enum(MALFORMED_SHAPES) }).strict(),
]) satisfies z.ZodType<Fault>;

/** Body of `POST /api/sim/faults`. `times: "infinite"` arms the fault until cleared. */
export const ZInjectFaultRequest = z
  .object({
    op: z.enum(FAULTABLE_OPS),
    fault: ZFault,
    times: z.union([z.number().int().min(1).max(1_000_000), z.literal("infinite")]).optional(),
  })
  .strict();
/** A parsed fault injection. */
export type TInjectFaultRequest = z.output<typeof ZInjectFaultRequest>;

/** Body of `POST /api/sim/search-lag`. */
export const ZSearchLagRequest = z.object({ ms: z.number().int().min(0).max(3_600_000) }).strict();

/** Body of `POST /api/sim/reset` (optional): the new world's search lag instead of the env default. */
export const ZResetRequest = z.object({ searchLagMs: z.number().int().min(0).max(3_600_000).optional() }).strict();

// ---------------------------------------------------------------------------------------------------
// Server side

/** An RPC request that names a method outside the allow-list (the route answers 400). */
export class RpcRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RpcRequestError";
  }
}

/** The error body for what a sim threw, or undefined when it is not a provider error or a crash. */
export function errorToRpc(err: unknown): RpcErrorBody | undefined {
  if (err instanceof ProviderError) {
    return { kind: "provider", status: err.status, code: err.code, effectHappened: err.effectHappened, message: err.message };
  }
  if (err instanceof SimulatedCrash) return { kind: "crash", point: err.point };
  return undefined;
}

/**
 * Runs one request against `world`. Provider errors and simulated crashes become `{ ok: false }`
 * answers; anything else (a bug, arguments of the wrong shape) is rethrown for the route to turn
 * into a 500. Checks the allow-list itself, so it is safe to call with a request from anywhere.
 */
export async function dispatchRpc(world: World, request: TRpcRequest): Promise<TRpcResponse> {
  const { system, method } = request;
  if (!(SIM_SYSTEMS as readonly string[]).includes(system) || !isRpcMethod(system, method)) {
    throw new RpcRequestError(`"${String(method)}" is not callable on ${String(system)}`);
  }
  const target = world[system] as unknown as Record<string, (...args: unknown[]) => unknown>;
  const fn = target[method];
  if (typeof fn !== "function") throw new RpcRequestError(`${system}.${method} is not a function`);
  const args = request.args.map(decodeJson);
  try {
    const value = await fn.apply(target, args);
    return { ok: true, value: encodeJson(value) };
  } catch (err) {
    const error = errorToRpc(err);
    if (!error) throw err;
    return { ok: false, error };
  }
}

// ---------------------------------------------------------------------------------------------------
// Client side

/**
 * The error a caller of the in-process sims would have seen: the matching `ProviderError` subclass
 * (so connectors map 4xx to FAILED exactly as before), or `SimulatedCrash`.
 */
export function rpcErrorToThrowable(error: RpcErrorBody): Error {
  if (error.kind === "crash") return new SimulatedCrash(error.point);
  const { status, code, effectHappened, message } = error;
  if (status === 504 && code === "gateway_timeout") return new ProviderTimeout();
  if (status >= 500) return new ProviderServerError(status, code);
  if (status >= 400) return new ProviderRejection(status, code, message);
  return new ProviderError(status, code, effectHappened, message);
}
