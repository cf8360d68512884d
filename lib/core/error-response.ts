/**
 * The server's answer to anything thrown in a handler: one status and one error body (errors.ts),
 * whatever threw it (ApiError, SagaError, zod, Prisma). Server-only: it knows Prisma's error codes.
 */
import * as z from "zod";
import { Prisma } from "@/generated/prisma";
import { SagaError, type FieldIssue } from "@/packages/client/src/saga/errors";
import { ApiError, validationError, zodIssuesToDetails, type TErrorBody, type ErrorExtra } from "@/packages/client/src/protocol/errors";
import { serverLog } from "@/lib/core/observability/log";
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from "./database-unavailable";

/** A status and the JSON body that answers an error. */
export interface ErrorPayload {
  /** HTTP status. */
  status: number;
  /** The error body. */
  body: TErrorBody;
}

function payload(status: number, code: string, message: string, details: FieldIssue[], extra: ErrorExtra = {}): ErrorPayload {
  // Extra members go first so they can never replace code, message or details.
  return { status, body: { error: { ...extra, code: code as TErrorBody["error"]["code"], message, details } } };
}

/**
 * Maps anything thrown to a status and an error body:
 * ApiError -> its status; SagaError -> its status, code and issues; ZodError -> 400 naming each field;
 * Prisma P2002 -> 409 CONFLICT, P2025 -> 404 NOT_FOUND (by code, never by message);
 * the database unreachable or locked (database-unavailable.ts) -> 503 UNAVAILABLE, "try later";
 * anything else -> 500 INTERNAL with a generic message (the real one goes to the server log).
 */
export function toErrorPayload(e: unknown): ErrorPayload {
  // Before the Prisma codes: a lost connection is an outage to wait out, not the request's fault nor our bug.
  if (isDatabaseUnavailable(e)) {
    serverLog().warn({ err: e }, "database unavailable: answered 503 UNAVAILABLE");
    return payload(
      503,
      "UNAVAILABLE",
      `Sagaboard cannot reach its database right now. Send the same request again in ${DATABASE_RETRY_AFTER_SECONDS} s or later (Retry-After): ` +
        "what was recorded before the interruption answers the repeat, so a retry never doubles an effect.",
      [],
    );
  }
  if (e instanceof ApiError) {
    if (e.code === "INTERNAL") serverLog().error({ err: e.cause ?? e }, "internal error answered 500");
    return payload(e.httpStatus, e.code, e.message, e.details, e.extra);
  }
  if (e instanceof SagaError) return payload(e.httpStatus, e.code, e.message, e.issues);
  if (e instanceof z.ZodError) {
    const error = validationError(zodIssuesToDetails(e));
    return payload(error.httpStatus, error.code, error.message, error.details);
  }
  if (e instanceof Prisma.PrismaClientKnownRequestError) {
    if (e.code === "P2002") {
      const target = e.meta?.target;
      const fields = Array.isArray(target) ? target.map(String).join(", ") : typeof target === "string" ? target : "";
      return payload(
        409,
        "CONFLICT",
        `A record with the same ${fields || "unique value"} already exists; use a different value or read the existing one.`,
        [],
      );
    }
    if (e.code === "P2025") {
      return payload(404, "NOT_FOUND", "The record this request addresses does not exist; check the id.", []);
    }
  }
  serverLog().error({ err: e }, "unexpected error answered 500");
  return payload(
    500,
    "INTERNAL",
    "Sagaboard failed to handle this request; nothing in it was wrong as far as we know. Retry later, or report it with the time of the request.",
    [],
  );
}

/** The JSON Response that answers anything thrown (see `toErrorPayload`). */
export function toErrorResponse(e: unknown): Response {
  const { status, body } = toErrorPayload(e);
  return Response.json(body, { status, headers: retryAfterHeaders(status) });
}

/** A 503 says when to come back (Retry-After, in seconds); other statuses carry no header. */
export function retryAfterHeaders(status: number): Record<string, string> {
  return status === 503 ? { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) } : {};
}
