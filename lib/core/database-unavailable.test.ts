/**
 * The "database unavailable" reading of errors, on the shapes the drivers really throw (captured from
 * the database-unavailable fault suite: a proxy cut, pg_terminate_backend, a locked SQLite file), and
 * on errors that must stay what they are (a unique violation is a 409, a bug is a 500).
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { Prisma } from "@/generated/prisma";
import { isDatabaseUnavailable } from "./database-unavailable";
import { toErrorPayload } from "./error-response";

const known = (code: string, cause?: Record<string, unknown>) =>
  new Prisma.PrismaClientKnownRequestError("failed", { code, clientVersion: "6", meta: cause ? { driverAdapterError: { name: "DriverAdapterError", cause } } : {} });
const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("isDatabaseUnavailable", () => {
  it.each([
    ["the server closed the connection (proxy cut)", known("P1017", { kind: "ConnectionClosed" })],
    ["a backend terminated mid-statement (pg_terminate_backend)", known("P2010", { kind: "postgres", code: "57P01", originalCode: "57P01", severity: "FATAL" })],
    ["SQLite locked past the busy timeout, through Prisma", known("P1008", { kind: "SocketTimeout", originalCode: "SQLITE_BUSY" })],
    ["SQLite locked, the saga log's own write", coded("database is locked", "SQLITE_BUSY")],
    ["pg's pool, the connection gone", new Error("Connection terminated unexpectedly")],
    ["the app's own wrap of an unreachable server", new Error("Cannot reach PostgreSQL at 127.0.0.1:5", { cause: coded("connect ECONNREFUSED", "ECONNREFUSED") })],
    ["no pooled connection in time", known("P2024")],
  ])("%s", (_, e) => {
    expect(isDatabaseUnavailable(e)).toBe(true);
    expect(toErrorPayload(e)).toMatchObject({ status: 503, body: { error: { code: "UNAVAILABLE" } } });
  });

  it.each([
    ["a unique violation", known("P2002", { kind: "UniqueConstraintViolation" })],
    ["a missing record", known("P2025")],
    ["a raw query's type error", known("P2010", { kind: "UnsupportedNativeDataType", type: "void" })],
    ["a SQLite constraint", coded("UNIQUE constraint failed", "SQLITE_CONSTRAINT_UNIQUE")],
    ["a syntax error from PostgreSQL", known("P2010", { kind: "postgres", code: "42601" })],
    ["a validation error", new z.ZodError([])],
    ["a bug", new TypeError("x is undefined")],
  ])("not %s", (_, e) => {
    expect(isDatabaseUnavailable(e)).toBe(false);
    expect(toErrorPayload(e).status).not.toBe(503);
  });
});
