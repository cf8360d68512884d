/**
 * The Idempotency-Key contract through the route wrapper: same key and body -> the stored response
 * (handler ran once); different body -> 422; while in flight -> 409; 50 concurrent identical requests
 * -> the handler runs exactly once; 4xx stored, 5xx released; keys scoped per token.
 */
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { ApiError } from "@/packages/client/src/protocol/errors";
import { DEFAULT_ABANDONED_AFTER_MS, requestHash } from "@/lib/delivery/idempotency";
import { agentRoute } from "@/lib/delivery/route";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { randomIds } from "@/packages/client/src/saga/ids";
import { serverLog } from "@/lib/core/observability/log";
import { call, makeToken, useTestDatabase } from "./api-test-kit";

const prisma = useTestDatabase("idempotency");

const createThing = defineEndpoint({
  method: "POST",
  path: "/api/v1/test/things",
  summary: "test only",
  auth: "agent",
  body: z.object({ name: z.string(), amount: z.number() }),
  response: z.object({ id: z.string(), name: z.string(), amount: z.number(), n: z.number() }),
  successStatus: 201,
});

/** The effect ledger: every handler run appends here. */
const effects: { name: string; amount: number }[] = [];
let gate: Promise<void> = Promise.resolve();
let started: () => void = () => {};
let failWith: Error | undefined;

const POST = agentRoute(createThing, async ({ body }) => {
  started();
  await gate;
  if (failWith) throw failWith;
  effects.push(body);
  return { id: `thing_${effects.length}`, ...body, n: effects.length };
});

let secret = "";
const path = "/api/v1/test/things";

function send(key: string | undefined, body: unknown, token = secret) {
  return call(POST, path, { method: "POST", secret: token, body, headers: key === undefined ? {} : { "Idempotency-Key": key } });
}

async function rowsFor(key: string) {
  return (await prisma()).idempotentRequest.findMany({ where: { key } });
}

beforeAll(async () => {
  secret = (await makeToken(["charge_card"])).secret;
});

beforeEach(() => {
  gate = Promise.resolve();
  started = () => {};
  failWith = undefined;
});

describe("Idempotency-Key", () => {
  it("without the header, every request runs", async () => {
    const before = effects.length;
    await send(undefined, { name: "a", amount: 1 });
    await send(undefined, { name: "a", amount: 1 });
    expect(effects.length).toBe(before + 2);
  });

  it("replays the stored response for the same key and body; the handler ran once", async () => {
    const before = effects.length;
    const first = await send("key-replay", { name: "b", amount: 2 });
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();

    // Same JSON with keys reordered and other whitespace is the same request.
    const again = await call(POST, path, {
      method: "POST",
      secret,
      body: '{ "amount": 2,   "name": "b" }',
      headers: { "Idempotency-Key": '"key-replay"' },
    });
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(effects.length).toBe(before + 1);

    const [row] = await rowsFor("key-replay");
    expect(row).toMatchObject({ state: "DONE", responseStatus: 201, method: "POST", path });
    expect(row?.responseBody).toEqual(first.json);
  });

  it("refuses the same key with a different body (422), and changes nothing", async () => {
    const first = await send("key-reused", { name: "c", amount: 3 });
    const before = effects.length;
    const other = await send("key-reused", { name: "c", amount: 4 });
    expect(other.status).toBe(422);
    expect(other.json.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(other.json.error.details[0].path).toBe("headers.Idempotency-Key");
    expect(effects.length).toBe(before);
    expect((await send("key-reused", { name: "c", amount: 3 })).json).toEqual(first.json);
  });

  it("answers 409 to a duplicate while the first is in flight, then replays once it is done", async () => {
    let release: () => void = () => {};
    gate = new Promise((resolve) => (release = resolve));
    const running = new Promise<void>((resolve) => (started = resolve));
    const before = effects.length;

    const first = send("key-inflight", { name: "d", amount: 5 });
    await running;
    const duplicate = await send("key-inflight", { name: "d", amount: 5 });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json.error.code).toBe("IDEMPOTENCY_IN_FLIGHT");
    expect((await rowsFor("key-inflight"))[0]?.state).toBe("IN_FLIGHT");

    release();
    expect((await first).status).toBe(201);
    const replay = await send("key-inflight", { name: "d", amount: 5 });
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(effects.length).toBe(before + 1);
  });

  it("runs the handler exactly once for 50 concurrent identical requests", async () => {
    let release: () => void = () => {};
    gate = new Promise((resolve) => (release = resolve));
    let runs = 0;
    started = () => runs++;
    const before = effects.length;

    const requests = Array.from({ length: 50 }, () => send("key-fifty", { name: "e", amount: 50 }));
    setTimeout(() => release(), 50);
    const results = await Promise.all(requests);

    expect(runs).toBe(1);
    expect(effects.length).toBe(before + 1);
    const fresh = results.filter((r) => r.status === 201 && r.headers.get("Idempotent-Replayed") === null);
    const replays = results.filter((r) => r.status === 201 && r.headers.get("Idempotent-Replayed") === "true");
    const inFlight = results.filter((r) => r.status === 409 && r.json.error.code === "IDEMPOTENCY_IN_FLIGHT");
    expect(fresh).toHaveLength(1);
    expect(replays.length + inFlight.length).toBe(49);
    for (const replay of replays) expect(replay.json).toEqual(fresh[0]?.json);
    expect(await rowsFor("key-fifty")).toHaveLength(1);
  });

  it("stores a 4xx answer and replays it", async () => {
    failWith = new ApiError("INVALID_TRANSITION", "Not now.");
    const first = await send("key-4xx", { name: "f", amount: 6 });
    expect(first.status).toBe(422);
    failWith = undefined;
    const again = await send("key-4xx", { name: "f", amount: 6 });
    expect(again.status).toBe(422);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
  });

  it("releases the key after a 5xx so the client may retry with it", async () => {
    const log = vi.spyOn(serverLog(), "error").mockImplementation(() => {});
    failWith = new Error("database went away");
    const first = await send("key-5xx", { name: "g", amount: 7 });
    log.mockRestore();
    expect(first.status).toBe(500);
    expect(await rowsFor("key-5xx")).toHaveLength(0);
    failWith = undefined;
    const retry = await send("key-5xx", { name: "g", amount: 7 });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("does not store a 400 from request validation, so the client may fix the body and keep the key", async () => {
    expect((await send("key-invalid", { name: "h" })).status).toBe(400);
    expect(await rowsFor("key-invalid")).toHaveLength(0);
    expect((await send("key-invalid", { name: "h", amount: 8 })).status).toBe(201);
  });

  it("scopes keys per token", async () => {
    const other = (await makeToken(["charge_card"])).secret;
    const before = effects.length;
    await send("key-shared", { name: "i", amount: 9 });
    const second = await send("key-shared", { name: "i", amount: 9 }, other);
    expect(second.headers.get("Idempotent-Replayed")).toBeNull();
    expect(effects.length).toBe(before + 2);
  });

  it("takes over an IN_FLIGHT row abandoned by a crashed server", async () => {
    const body = { name: "j", amount: 10 };
    const token = await makeToken(["charge_card"]);
    await (await prisma()).idempotentRequest.create({
      data: {
        id: "idem_abandoned",
        principal: `agent:${token.id}`,
        key: "key-abandoned",
        method: "POST",
        path,
        requestHash: requestHash({ method: "POST", path, body }),
        state: "IN_FLIGHT",
        createdAt: new Date(Date.now() - DEFAULT_ABANDONED_AFTER_MS - 1000),
      },
    });
    const res = await send("key-abandoned", body, token.secret);
    expect(res.status).toBe(201);
    const rows = await rowsFor("key-abandoned");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ state: "DONE" });
    expect(rows[0]?.id).not.toBe("idem_abandoned");
  });

  it.each([["x".repeat(256)], [""], ["caf\u00e9"], ['""']])("refuses a malformed key %j with 400", async (key) => {
    const res = await send(key, { name: "k", amount: 11 });
    expect(res.status).toBe(400);
    expect(res.json.error.details[0].path).toBe("headers.Idempotency-Key");
  });

  it("accepts a 255-character key", async () => {
    expect((await send("k".repeat(255), { name: "l", amount: 12 })).status).toBe(201);
  });
});

describe("Idempotency-Key around real saga-store writes on the same connection", () => {
  const createRun = defineEndpoint({
    method: "POST",
    path: "/api/v1/test/runs",
    summary: "test only",
    auth: "agent",
    body: z.object({ title: z.string() }),
    response: z.object({ id: z.string(), title: z.string() }),
    successStatus: 201,
  });
  const POST_RUN = agentRoute(createRun, async ({ body, principal, prisma: client }) => {
    const run = await new PrismaSagaStore(client).createRun(
      { id: randomIds.next("run"), title: body.title, agent: principal.name, onBehalfOf: null, metadata: {} },
      { type: "run.created", actor: { type: "agent", id: principal.name } },
    );
    return { id: run.id, title: run.title };
  });
  const sendRun = (key: string, title: string) =>
    call(POST_RUN, "/api/v1/test/runs", { method: "POST", secret, body: { title }, headers: { "Idempotency-Key": key } });

  it("50 concurrent identical requests create one run; 20 different keys create 20 runs", async () => {
    const same = await Promise.all(Array.from({ length: 50 }, () => sendRun("run-key-same", "one run")));
    expect(same.filter((r) => r.status === 201 && r.headers.get("Idempotent-Replayed") === null)).toHaveLength(1);
    expect(same.every((r) => r.status === 201 || (r.status === 409 && r.json.error.code === "IDEMPOTENCY_IN_FLIGHT"))).toBe(true);
    expect(await (await prisma()).run.count({ where: { title: "one run" } })).toBe(1);

    const different = await Promise.all(Array.from({ length: 20 }, (_, i) => sendRun(`run-key-${i}`, `run ${i}`)));
    expect(different.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 201));
    expect(await (await prisma()).run.count({ where: { title: { startsWith: "run " } } })).toBe(20);
    expect(await (await prisma()).idempotentRequest.count({ where: { key: { startsWith: "run-key-" }, state: "DONE" } })).toBe(21);
  });
});

