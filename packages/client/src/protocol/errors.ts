/**
 * The HTTP API's errors: one class with a closed union of codes, an exhaustive code -> status map,
 * and one body shape for every error response. No server module here: the agent-side client parses
 * error bodies with these schemas. What answers a thrown error on the server is error-response.ts.
 */
import * as z from "zod";
import { SagaErrorCode } from "../saga/errors";

/** The closed set of codes the API layer raises itself. */
export const ApiErrorCode = {
  /** The request (body, query, path parameters or a header) failed validation; `details` names each field. */
  VALIDATION_FAILED: "VALIDATION_FAILED",
  /** No usable credentials: missing, malformed, unknown or revoked token. */
  UNAUTHORIZED: "UNAUTHORIZED",
  /** Authenticated, but not allowed (a tool outside the token's scope). */
  FORBIDDEN: "FORBIDDEN",
  /** The addressed thing does not exist. */
  NOT_FOUND: "NOT_FOUND",
  /** A unique value is taken, or another writer got there first. */
  CONFLICT: "CONFLICT",
  /** The call needs a person's approval first; `escalationId` names the queued item. */
  APPROVAL_REQUIRED: "APPROVAL_REQUIRED",
  /** A step of the run is still UNKNOWN; resolve it before calling another tool. */
  STEP_UNRESOLVED: "STEP_UNRESOLVED",
  /** A request with this Idempotency-Key is still being processed; retry after it finishes. */
  IDEMPOTENCY_IN_FLIGHT: "IDEMPOTENCY_IN_FLIGHT",
  /** This Idempotency-Key was already used for a different request (method, path or body). */
  IDEMPOTENCY_KEY_REUSED: "IDEMPOTENCY_KEY_REUSED",
  /** The thing is in a state that does not allow this change. */
  INVALID_TRANSITION: "INVALID_TRANSITION",
  /** The request body is larger than the API accepts. */
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  /** Too many attempts (sign-in after repeated wrong passwords); wait for the Retry-After header's seconds. */
  RATE_LIMITED: "RATE_LIMITED",
  /**
   * Sagaboard cannot reach its database for a moment (restarted, connections cut, SQLite's file
   * locked by another process): try the same request again after the Retry-After header's seconds.
   */
  UNAVAILABLE: "UNAVAILABLE",
  /** Our bug or an outage; the message is generic and the details are in the server log. */
  INTERNAL: "INTERNAL",
} as const;
export type ApiErrorCode = (typeof ApiErrorCode)[keyof typeof ApiErrorCode];

/** HTTP status for each code; `satisfies` makes a missing code a compile error. */
export const API_ERROR_HTTP_STATUS = {
  VALIDATION_FAILED: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  APPROVAL_REQUIRED: 409,
  STEP_UNRESOLVED: 409,
  IDEMPOTENCY_IN_FLIGHT: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  INVALID_TRANSITION: 422,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
} as const satisfies Record<ApiErrorCode, number>;

/** One problem with one field: `path` is dotted (`body.args.amount`), empty for the whole request. */
export const ZErrorDetail = z.object({
  path: z.string().describe("Dotted path of the offending field (body.args.amount); empty for the whole request."),
  message: z.string().describe("What is wrong with it."),
});
/** One problem with one field. */
export type TErrorDetail = z.infer<typeof ZErrorDetail>;

/** Every code an error response can carry: the API's own and the saga engine's. */
export const ZErrorCode = z.enum({ ...SagaErrorCode, ...ApiErrorCode }).meta({ id: "ErrorCode", description: "The closed list of reasons a request is refused." });

/**
 * The body of every error response. Extra members (e.g. `escalationId` for APPROVAL_REQUIRED) sit
 * beside `code`, `message` and `details`.
 */
export const ZErrorBody = z
  .object({
    error: z
      .looseObject({
        code: ZErrorCode.describe("Machine-readable reason; branch on this, never on the message."),
        message: z.string().describe("What went wrong and what to do about it."),
        details: z.array(ZErrorDetail).describe("One entry per offending field; empty when not about input."),
      })
      .describe("The error; extra members (such as escalationId) depend on the code."),
  })
  .meta({ id: "Error", description: "The body of every error response." });
/** The body of every error response. */
export type TErrorBody = z.infer<typeof ZErrorBody>;

/** Extra members of an error body (`{ escalationId }`); they never override code, message or details. */
export type ErrorExtra = Record<string, string | number | boolean | null>;

/** Options of an ApiError. */
export interface ApiErrorOptions {
  /** Fields that were wrong, when the error is about input. */
  details?: TErrorDetail[];
  /** Extra members of the error body (`{ escalationId }`). */
  extra?: ErrorExtra;
  /** The underlying error, for the server log. */
  cause?: unknown;
}

/** An error the API client can act on. */
export class ApiError extends Error {
  /** Fields that were wrong, when the error is about input. */
  readonly details: TErrorDetail[];
  /** Extra members of the error body. */
  readonly extra: ErrorExtra;

  constructor(
    readonly code: ApiErrorCode,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ApiError";
    this.details = options.details ?? [];
    this.extra = options.extra ?? {};
  }

  /** The HTTP status that answers this error. */
  get httpStatus(): number {
    return API_ERROR_HTTP_STATUS[this.code];
  }
}

/** Turns zod issues into details with dotted paths, under `prefix` (`body`, `query`, `params`). */
export function zodIssuesToDetails(error: z.ZodError, prefix = ""): TErrorDetail[] {
  return error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter((part) => part !== "").join("."),
    message: issue.message,
  }));
}

/** A VALIDATION_FAILED error whose message lists every offending field. */
export function validationError(details: TErrorDetail[], what = "The request"): ApiError {
  const list = details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join("; ");
  return new ApiError("VALIDATION_FAILED", `${what} is invalid (${list}). Fix the named fields and try again.`, {
    details,
  });
}
