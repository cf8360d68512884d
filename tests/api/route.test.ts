/**
 * The route wrapper with a test-only endpoint: validation naming each field, body limits, invalid
 * JSON, response contract, two success statuses, and the error body for every kind of throw.
 */
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { Prisma } from "@/generated/prisma";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { ApiError, ZErrorBody } from "@/packages/client/src/protocol/errors";
import { agentRoute, MAX_BODY_BYTES, publicRoute, withStatus } from "@/lib/delivery/route";
import { SagaError } from "@/packages/client/src/saga/errors";
import { serverLog } from "@/lib/core/observability/log";
import { call, makeToken, useTestDatabase } from "./api-test-kit";

useTestDatabase("route");

const recordCharge = defineEndpoint({
  method: "POST",
  path: "/api/v1/test/runs/:runId/charges",
  summary: "test only",
  auth: "agent",
  params: z.object({ runId: z.string().regex(/^run_/, "must be a run id (run_...)") }),
  query: z.object({ dryRun: z.enum(["true", "false"]).optional(), limit: z.coerce.number().int().max(50).optional() }),
  body: z.object({
    tool: z.string(),
    args: z.object({ amount: z.number().int().positive(), currency: z.string().length(3) }),
    note: z.string().optional(),
  }),
  response: z.object({ runId: z.string(), amount: z.number(), created: z.boolean(), limit: z.number().nullable() }),
  successStatus: 201,
  otherSuccessStatuses: [200],
});

/** What the next call of the handler does, besides echoing its input. */
let behaviour: (input: { runId: string; note: string | undefined }) => unknown = () => undefined;
const seen: unknown[] = [];

const POST = agentRoute(recordCharge, async ({ params, query, body, principal }) => {
  seen.push({ params, query, body, principal: principal.name });
  const special = behaviour({ runId: params.runId, note: body.note });
  if (special !== undefined) return special as never;
  const view = { runId: params.runId, amount: body.args.amount, created: true, limit: query.limit ?? null };
  return body.note === "existing" ? withStatus(200, { ...view, created: false }) : view;
});

const path = "/api/v1/test/runs/run_1/charges";
const params = { runId: "run_1" };
const goodBody = { tool: "charge_card", args: { amount: 500, currency: "EUR" } };
let secret = "";

beforeAll(async () => {
  secret = (await makeToken(["charge_card"])).secret;
});

beforeEach(() => {
  behaviour = () => undefined;
});

function post(body: unknown, options: { path?: string; params?: Record<string, string>; headers?: Record<string, string> } = {}) {
  return call(POST, options.path ?? path, { method: "POST", secret, body, params: options.params ?? params, headers: options.headers });
}

describe("agentRoute", () => {
  it("parses params, query and body and answers with the success status", async () => {
    const res = await post(goodBody, { path: `${path}?limit=7&dryRun=false` });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({ runId: "run_1", amount: 500, created: true, limit: 7 });
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expect(res.headers.get("cache-control")).toBe("no-store, no-transform");
    expect(seen.at(-1)).toMatchObject({ query: { limit: 7, dryRun: "false" }, params, body: goodBody });
  });

  it("answers withStatus(200, ...) for the second success status", async () => {
    const res = await post({ ...goodBody, note: "existing" });
    expect(res.status).toBe(200);
    expect(res.json.created).toBe(false);
  });

  it("names each bad field of body, params and query in one 400", async () => {
    const res = await post(
      { tool: 7, args: { amount: "500", currency: "EURO" } },
      { path: "/api/v1/test/runs/xyz/charges?limit=500", params: { runId: "xyz" } },
    );
    expect(res.status).toBe(400);
    expect(ZErrorBody.safeParse(res.json).success).toBe(true);
    expect(res.json.error.code).toBe("VALIDATION_FAILED");
    const paths = res.json.error.details.map((d: { path: string }) => d.path);
    expect(paths).toEqual(expect.arrayContaining(["params.runId", "query.limit", "body.tool", "body.args.amount", "body.args.currency"]));
    expect(res.json.error.message).toContain("body.args.amount");
    expect(res.json.error.details.find((d: { path: string }) => d.path === "params.runId").message).toContain("run id");
  });

  it("refuses a missing body (400 naming body) and invalid JSON (400 naming body)", async () => {
    const empty = await call(POST, path, { method: "POST", secret, params });
    expect(empty.status).toBe(400);
    expect(empty.json.error.details[0].path).toBe("body");

    const broken = await post('{"tool": "charge_card", "args": {');
    expect(broken.status).toBe(400);
    expect(broken.json.error).toMatchObject({ code: "VALIDATION_FAILED", details: [{ path: "body" }] });
    expect(broken.json.error.details[0].message).toMatch(/not valid JSON/);
  });

  it("refuses a body over 1 MiB with 413, whether or not Content-Length says so", async () => {
    const huge = JSON.stringify({ ...goodBody, note: "x".repeat(MAX_BODY_BYTES) });
    const calls = seen.length;
    const streamed = await post(huge);
    expect(streamed.status).toBe(413);
    expect(streamed.json.error).toMatchObject({ code: "PAYLOAD_TOO_LARGE", details: [{ path: "body" }] });

    const declared = await post(JSON.stringify(goodBody), { headers: { "content-length": String(MAX_BODY_BYTES + 1) } });
    expect(declared.status).toBe(413);
    expect(seen.length).toBe(calls);

    const justFits = JSON.stringify({ ...goodBody, note: "" });
    const padded = justFits.replace('"note":""', `"note":"${"y".repeat(MAX_BODY_BYTES - justFits.length)}"`);
    expect(Buffer.byteLength(padded)).toBe(MAX_BODY_BYTES);
    expect((await post(padded)).status).toBe(201);
  });

  it("checks the token before reading the body", async () => {
    const res = await call(POST, path, { method: "POST", body: "not json", params });
    expect(res.status).toBe(401);
  });

  it("answers 500 with a generic message when the handler's result breaks the response contract", async () => {
    const log = vi.spyOn(serverLog(), "error").mockImplementation(() => {});
    behaviour = () => ({ runId: "run_1", amount: "lots" });
    const res = await post(goodBody);
    expect(res.status).toBe(500);
    expect(res.json.error.code).toBe("INTERNAL");
    expect(res.json.error.message).not.toContain("amount");
    // The server's log has the detail the answer leaves out (pino: the error under `err`).
    expect(String(log.mock.calls.flat().map((a: unknown) => (a && typeof a === "object" && "err" in a && a.err instanceof Error ? a.err.message : a)))).toContain("amount");
    log.mockRestore();
  });

  it("answers 500 when the handler answers a status its contract does not list", async () => {
    const log = vi.spyOn(serverLog(), "error").mockImplementation(() => {});
    behaviour = () => withStatus(202, { runId: "run_1", amount: 1, created: true, limit: null });
    expect((await post(goodBody)).status).toBe(500);
    log.mockRestore();
  });

  it("strips fields the response schema does not declare", async () => {
    behaviour = () => ({ runId: "run_1", amount: 1, created: true, limit: null, secretColumn: "hash" });
    const res = await post(goodBody);
    expect(res.status).toBe(201);
    expect(res.json).not.toHaveProperty("secretColumn");
  });

  it.each([
    ["ApiError", () => new ApiError("APPROVAL_REQUIRED", "Needs approval.", { extra: { escalationId: "esc_1" } }), 409, "APPROVAL_REQUIRED"],
    ["SagaError", () => new SagaError("RUN_NOT_FOUND", "Run run_1 does not exist."), 404, "RUN_NOT_FOUND"],
    ["SagaError with issues", () => new SagaError("INVALID_ARGS", "Bad args.", [{ path: "args.amount", message: "too big" }]), 400, "INVALID_ARGS"],
    ["ZodError", () => z.object({ a: z.string() }).parse({ a: 1 }), 400, "VALIDATION_FAILED"],
    [
      "Prisma P2002",
      () => new Prisma.PrismaClientKnownRequestError("Unique constraint failed", { code: "P2002", clientVersion: "6.19.3", meta: { target: ["stepKey"] } }),
      409,
      "CONFLICT",
    ],
    ["Prisma P2025", () => new Prisma.PrismaClientKnownRequestError("gone", { code: "P2025", clientVersion: "6.19.3" }), 404, "NOT_FOUND"],
    ["TypeError", () => new TypeError("cannot read properties of undefined (reading 'password')"), 500, "INTERNAL"],
  ])("maps a thrown %s to the one error body", async (_name, make, status, code) => {
    const log = vi.spyOn(serverLog(), "error").mockImplementation(() => {});
    behaviour = () => {
      throw make();
    };
    const res = await post(goodBody);
    log.mockRestore();
    expect(res.status).toBe(status);
    expect(ZErrorBody.safeParse(res.json).success).toBe(true);
    expect(res.json.error.code).toBe(code);
    if (code === "APPROVAL_REQUIRED") expect(res.json.error.escalationId).toBe("esc_1");
    if (_name === "SagaError with issues") expect(res.json.error.details).toEqual([{ path: "args.amount", message: "too big" }]);
    if (code === "INTERNAL") expect(res.json.error.message).not.toContain("password");
  });
});

describe("publicRoute", () => {
  const ping = defineEndpoint({
    method: "GET",
    path: "/api/v1/test/ping/:name",
    summary: "test only",
    auth: "public",
    params: z.object({ name: z.string().min(2) }),
    response: z.object({ hello: z.string() }),
  });
  const GET = publicRoute(ping, ({ params }) => ({ hello: params.name }));

  it("needs no token and still validates", async () => {
    expect(await call(GET, "/api/v1/test/ping/ana", { params: { name: "ana" } })).toMatchObject({ status: 200, json: { hello: "ana" } });
    const bad = await call(GET, "/api/v1/test/ping/a", { params: { name: "a" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details[0].path).toBe("params.name");
  });

  it("refuses to wrap an endpoint of the other kind", () => {
    expect(() => agentRoute(ping as never, () => ({ hello: "x" }))).toThrow(/auth "agent"/);
    expect(() => publicRoute(recordCharge as never, () => ({}) as never)).toThrow(/auth "public"/);
  });
});

describe("defineEndpoint", () => {
  it("refuses a path whose parameters disagree with the params schema", () => {
    const response = z.object({});
    expect(() => defineEndpoint({ method: "GET", path: "/a/:runId", summary: "", auth: "public", response })).toThrow(/missing from schema: runId/);
    expect(() =>
      defineEndpoint({ method: "GET", path: "/a/:runId", summary: "", auth: "public", response, params: z.object({ runID: z.string() }) }),
    ).toThrow(/not in path: runID/);
    expect(() => defineEndpoint({ method: "GET", path: "/a/[runId]", summary: "", auth: "public", response })).toThrow(/:name/);
  });
});
