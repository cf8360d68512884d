/**
 * The server's answer to anything thrown in a handler: one status and one error body (errors.ts),
 * whatever threw it (ApiError, SagaError, zod, Prisma). Server-only: it knows Prisma's error codes.
 */
import * as z from "zod";
import { Prisma } from "@/generated/prisma";
import { SagaError, type FieldIssue } from "@/lib/saga/errors";
import { ApiError, validationError, zodIssuesToDetails, type ErrorBody, type ErrorExtra } from "./errors";
import { serverLog } from "@/lib/observability/log";

/** A status and the JSON body that answers an error. */
export interface ErrorPayload {
  /** HTTP status. */
  status: number;
  /** The error body. */
  body: ErrorBody;
}

function payload(status: number, code: string, message: string, details: FieldIssue[], extra: ErrorExtra = {}): ErrorPayload {
  // Extra members go first so they can never replace code, message or details.
  return { status, body: { error: { ...extra, code: code as ErrorBody["error"]["code"], message, details } } };
}

/**
 * Maps anything thrown to a status and an error body:
 * ApiError -> its status; SagaError -> its status, code and issues; ZodError -> 400 naming each field;
 * Prisma P2002 -> 409 CONFLICT, P2025 -> 404 NOT_FOUND (by code, never by message);
 * anything else -> 500 INTERNAL with a generic message (the real one goes to the server log).
 */
export function toErrorPayload(e: unknown): ErrorPayload {
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
  return Response.json(body, { status });
}
