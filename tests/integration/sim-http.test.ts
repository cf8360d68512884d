/**
 * The simulated world over HTTP: a RemoteWorld talks to the /api/sim route handlers (called
 * directly, through a fake fetch), and behaves like the in-process World: same values, same errors,
 * one hosted ledger as the oracle.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as faultsRoute from "@/app/api/sim/faults/route";
import * as ledgerRoute from "@/app/api/sim/ledger/route";
import * as resetRoute from "@/app/api/sim/reset/route";
import * as rpcRoute from "@/app/api/sim/rpc/route";
import * as searchLagRoute from "@/app/api/sim/search-lag/route";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { CrashPoint, SimulatedCrash } from "@/packages/client/src/saga/crash-points";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { ToolRejected } from "@/packages/client/src/saga/errors";
import { MemorySagaStore } from "@/packages/client/src/saga/memory-store";
import type { ToolRegistry } from "@/packages/client/src/saga/tools";
import { ProviderRejection, ProviderServerError, ProviderTimeout, World, type LedgerEntry } from "@/lib/demo/sim";
import { DEFAULT_HOSTED_SEARCH_LAG_MS, getHostedWorld, hostedSearchLagMs, resetHostedWorld } from "@/lib/demo/sim/host";
import { RemoteWorld, SimHttpError, type RemoteWorldOptions, type WorldLike } from "@/lib/demo/sim/remote";
import { decodeJson, dispatchRpc, encodeJson, RpcRequestError, ZRpcRequest, type TRpcRequest } from "@/lib/demo/sim/rpc";
import { refundAndReship } from "../support/support-agent";

const BASE = "http://sim.test";

type Handler = (request: Request) => Response | Promise<Response>;
const ROUTES: Record<string, Partial<Record<string, Handler>>> = {
  "/api/sim/rpc": rpcRoute,
  "/api/sim/faults": faultsRoute,
  "/api/sim/ledger": ledgerRoute,
  "/api/sim/reset": resetRoute,
  "/api/sim/search-lag": searchLagRoute,
};

/** A fetch that hands each request to the route module's handler, as Next's router would. */
const routeFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const handler = ROUTES[new URL(request.url).pathname]?.[request.method];
  if (!handler) return new Response("no route", { status: 405 });
  return handler(request);
};

function remote(opts: RemoteWorldOptions = {}): RemoteWorld {
  return new RemoteWorld(`${BASE}/`, { fetch: routeFetch, ...opts });
}

function post(path: string, body: unknown): Request {
  return new Request(`${BASE}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

function count(entries: LedgerEntry[], op: string, outcome: LedgerEntry["outcome"] = "effect"): number {
  return entries.filter((e) => e.op === op && e.outcome === outcome).length;
}

const charge = { customerId: "cus_ada", amount: 1500, currency: "eur", metadata: { saga_key: "k-charge" } };

beforeEach(() => {
  resetHostedWorld({ searchLagMs: 0 });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe("hosted world", () => {
  it("is one process-wide world on globalThis, replaced by reset, with the demo's CRM records", async () => {
    const world = getHostedWorld();
    expect(getHostedWorld()).toBe(world);
    expect((await world.crm.get("crm_ada"))?.fields).toEqual({ tier: "gold" });
    expect((await world.crm.get("crm_bo"))?.fields).toEqual({ tier: "silver" });
    const fresh = resetHostedWorld();
    expect(fresh).not.toBe(world);
    expect(getHostedWorld()).toBe(fresh);
  });

  it("takes its search lag from SAGABOARD_SIM_SEARCH_LAG_MS (default 300)", () => {
    expect(hostedSearchLagMs({})).toBe(DEFAULT_HOSTED_SEARCH_LAG_MS);
    expect(DEFAULT_HOSTED_SEARCH_LAG_MS).toBe(300);
    expect(hostedSearchLagMs({ SAGABOARD_SIM_SEARCH_LAG_MS: "1500" })).toBe(1500);
    expect(hostedSearchLagMs({ SAGABOARD_SIM_SEARCH_LAG_MS: "-1" })).toBe(300);
    expect(hostedSearchLagMs({ SAGABOARD_SIM_SEARCH_LAG_MS: "soon" })).toBe(300);
    vi.stubEnv("SAGABOARD_SIM_SEARCH_LAG_MS", "42");
    expect(resetHostedWorld().ticketing.searchLagMs).toBe(42);
  });
});

describe("RemoteWorld over the route handlers", () => {
  it("a charge through RemoteWorld is an effect in the hosted ledger", async () => {
    const w = remote();
    const pi = await w.payments.charge(charge, { idempotencyKey: "k-charge" });
    expect(pi).toMatchObject({ id: expect.stringMatching(/^pi_/), status: "succeeded", amount: 1500, metadata: { saga_key: "k-charge" } });

    const hosted = getHostedWorld().ledger.effects({ op: "payments.charge" });
    expect(hosted).toHaveLength(1);
    expect(hosted[0]).toMatchObject({ key: "k-charge", ref: pi.id });

    const { entries, summary } = await w.ledger({ op: "payments.charge" });
    expect(entries.map((e) => [e.op, e.outcome, e.key, e.ref])).toEqual([["payments.charge", "effect", "k-charge", pi.id]]);
    expect(summary).toEqual({ payments: { charge: { effect: 1 } } });
    expect(await w.payments.getPaymentIntent(pi.id)).toEqual(pi);
  });

  it("replays an idempotent charge: same intent, one effect, one replay", async () => {
    const w = remote();
    const first = await w.payments.charge(charge, { idempotencyKey: "k-charge" });
    const again = await w.payments.charge(charge, { idempotencyKey: "k-charge" });
    expect(again).toEqual(first);
    const { entries } = await w.ledger();
    expect(count(entries, "payments.charge")).toBe(1);
    expect(count(entries, "payments.charge", "replayed")).toBe(1);
    expect(getHostedWorld().ledger.duplicates("payments.charge")).toEqual([]);
    // Same key, other parameters: the provider's 400, as in-process.
    const reused = w.payments.charge({ ...charge, amount: 9 }, { idempotencyKey: "k-charge" });
    await expect(reused).rejects.toBeInstanceOf(ProviderRejection);
    await expect(reused).rejects.toMatchObject({ status: 400, code: "idempotency_key_reused", effectHappened: false });
  });

  it("timeout_after_effect injected over HTTP: ProviderTimeout, and exactly one effect", async () => {
    const w = remote();
    await w.faults.inject("payments.charge", { kind: "timeout_after_effect" });
    expect(await w.faults.pending("payments.charge")).toBe(1);
    const call = w.payments.charge(charge, { idempotencyKey: "k-charge" });
    await expect(call).rejects.toBeInstanceOf(ProviderTimeout);
    await expect(call).rejects.toMatchObject({ status: 504, code: "gateway_timeout", effectHappened: "unknown" });
    expect(await w.faults.pending()).toBe(0);
    const { entries } = await w.ledger({ op: "payments.charge" });
    expect(entries.map((e) => e.outcome)).toEqual(["effect"]);
    // Reconcile can find it by key (search lag is 0 here).
    const found = await w.payments.searchByMetadata("saga_key", "k-charge");
    expect(found.map((pi) => pi.id)).toEqual([entries[0]?.ref]);
  });

  it("crash_after_effect: SimulatedCrash(after-effect), the effect is real", async () => {
    const w = remote();
    await w.faults.inject("ticketing.create", { kind: "crash_after_effect" });
    const call = w.ticketing.create({ summary: "Refund for order 1182", orderId: "1182", labels: ["saga-k1"] });
    await expect(call).rejects.toBeInstanceOf(SimulatedCrash);
    await expect(call).rejects.toMatchObject({ point: CrashPoint.AFTER_EFFECT });
    expect(getHostedWorld().ledger.count({ op: "ticketing.create" })).toBe(1);
    expect(await w.ticketing.searchByLabel("saga-k1")).toHaveLength(1);
  });

  it("4xx answers are ProviderRejection with the provider's status and code", async () => {
    const w = remote();
    await w.faults.inject("warehouse.reship", { kind: "reject", status: 422, code: "out_of_stock" });
    const reship = w.warehouse.reship({ orderId: "1182" }, { idempotencyKey: "k-ship" });
    await expect(reship).rejects.toBeInstanceOf(ProviderRejection);
    await expect(reship).rejects.toMatchObject({ status: 422, code: "out_of_stock", effectHappened: false });

    const missing = w.ticketing.close("SUP-1", "nope");
    await expect(missing).rejects.toBeInstanceOf(ProviderRejection);
    await expect(missing).rejects.toMatchObject({ status: 404, code: "not_found", message: "ticket SUP-1 does not exist" });
    const { entries } = await w.ledger();
    expect(entries.map((e) => [e.op, e.outcome])).toEqual([
      ["warehouse.reship", "rejected"],
      ["ticketing.close", "not_found"],
    ]);
  });

  it("5xx answers are ProviderServerError; timeout_before_effect is a ProviderTimeout with no effect", async () => {
    const w = remote();
    await w.faults.inject("email.send", { kind: "server_error", status: 502 }, { times: 1 });
    await w.faults.inject("email.send", { kind: "timeout_before_effect" });
    const msg = { to: "ada@example.com", subject: "Hi", body: "Hello", headers: { "X-Saga-Key": "k-mail" } };
    const first = w.email.send(msg);
    await expect(first).rejects.toBeInstanceOf(ProviderServerError);
    await expect(first).rejects.toMatchObject({ status: 502, effectHappened: "unknown" });
    await expect(w.email.send(msg)).rejects.toBeInstanceOf(ProviderTimeout);
    expect(getHostedWorld().ledger.count({ op: "email.send" })).toBe(0);
    await w.email.send(msg);
    expect(getHostedWorld().ledger.count({ op: "email.send" })).toBe(1);
  });

  it("arms faults until cleared, and DELETE disarms them", async () => {
    const w = remote();
    await w.faults.inject("crm.update", { kind: "reject", code: "locked" }, { times: Infinity });
    expect(await w.faults.pending()).toBe(Infinity);
    await expect(w.crm.update("crm_ada", { tier: "x" })).rejects.toMatchObject({ status: 422, code: "locked" });
    await expect(w.crm.update("crm_ada", { tier: "x" })).rejects.toMatchObject({ code: "locked" });
    await w.faults.clear();
    expect(await w.faults.pending()).toBe(0);
    expect((await w.crm.update("crm_ada", { tier: "platinum" })).fields).toEqual({ tier: "platinum" });
    // A predicate cannot travel; the type forbids it and the client refuses it at run time too.
    const sneaky = { when: () => true } as unknown as { times?: number };
    await expect(w.faults.inject("crm.update", { kind: "timeout_after_effect" }, sneaky)).rejects.toThrow(/when/);
  });

  it("Dates round-trip as Dates: results, arguments and ledger entries", async () => {
    const w = remote();
    const pi = await w.payments.charge(charge);
    expect(pi.createdAt).toBeInstanceOf(Date);
    const ticket = await w.ticketing.createDraft({ summary: "s", labels: ["saga-d"] });
    expect(ticket.createdAt).toBeInstanceOf(Date);
    // The same instant the hosted system stored (its ledger entry is stamped by a later clock read).
    expect(ticket.createdAt.getTime()).toBe((await getHostedWorld().ticketing.get(ticket.id))?.createdAt.getTime());

    const due = new Date("2026-03-01T12:00:00.000Z");
    await w.crm.seed("crm_cy", { tier: "bronze", renewal: due, history: [{ at: due }] });
    const hosted = await getHostedWorld().crm.get("crm_cy");
    expect(hosted?.fields["renewal"]).toBeInstanceOf(Date);
    const record = await w.crm.get("crm_cy");
    expect(record?.updatedAt).toBeInstanceOf(Date);
    expect(record?.fields).toEqual({ tier: "bronze", renewal: due, history: [{ at: due }] });

    const { entries } = await w.ledger();
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) expect(e.at).toBeInstanceOf(Date);
    // Absent values stay absent: a missing object is undefined, not null.
    expect(await w.payments.getPaymentIntent("pi_missing")).toBeUndefined();
    expect(await w.ticketing.deleteDraft(ticket.id)).toBeUndefined();
  });

  it("sets the hosted search lag over HTTP", async () => {
    const w = remote();
    await w.setSearchLag(60_000);
    expect(getHostedWorld().payments.searchLagMs).toBe(60_000);
    await w.payments.charge(charge);
    expect(await w.payments.searchByMetadata("saga_key", "k-charge")).toEqual([]);
    await w.setSearchLag(0);
    expect(await w.payments.searchByMetadata("saga_key", "k-charge")).toHaveLength(1);
  });

  it("reset gives a fresh world: empty ledger, no faults, seeded CRM", async () => {
    const w = remote();
    await w.payments.charge(charge);
    await w.faults.inject("payments.charge", { kind: "reject" });
    await w.reset({ searchLagMs: 5 });
    expect((await w.ledger()).entries).toEqual([]);
    expect(await w.faults.pending()).toBe(0);
    expect(getHostedWorld().email.searchLagMs).toBe(5);
    expect((await w.crm.get("crm_bo"))?.fields).toEqual({ tier: "silver" });
    const res = await resetRoute.POST(new Request(`${BASE}/api/sim/reset`, { method: "POST" }));
    expect(res.status).toBe(200);
    expect(getHostedWorld().email.searchLagMs).toBe(DEFAULT_HOSTED_SEARCH_LAG_MS);
  });
});

describe("transport failures are thrown as they are (outcome unknown)", () => {
  it("a network error is not a ProviderError", async () => {
    const boom = new TypeError("fetch failed");
    const w = remote({ fetch: () => Promise.reject(boom) });
    await expect(w.payments.charge(charge)).rejects.toBe(boom);
  });

  it("an RPC that outlives timeoutMs is aborted with the abort error", async () => {
    const hang: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      });
    const w = remote({ fetch: hang, timeoutMs: 20 });
    await expect(w.payments.charge(charge)).rejects.toMatchObject({ name: "TimeoutError" });
  });

  it("a non-JSON or non-2xx answer is a SimHttpError, never a provider answer", async () => {
    const w = remote({ fetch: async () => new Response("<html>Bad gateway</html>", { status: 502 }) });
    const call = w.payments.charge(charge);
    await expect(call).rejects.toBeInstanceOf(SimHttpError);
    await expect(call).rejects.toMatchObject({ status: 502 });
  });
});

describe("the routes", () => {
  it.each([["unset", undefined], ["0", "0"]])("answer 404 on every route while SAGABOARD_SIM is %s (off unless turned on)", async (_label, value) => {
    if (value === undefined) vi.stubEnv("SAGABOARD_SIM", undefined);
    else vi.stubEnv("SAGABOARD_SIM", value);
    const responses = await Promise.all([
      rpcRoute.POST(post("/api/sim/rpc", { system: "payments", method: "charge", args: [charge] })),
      faultsRoute.POST(post("/api/sim/faults", { op: "payments.charge", fault: { kind: "reject" } })),
      faultsRoute.DELETE(new Request(`${BASE}/api/sim/faults`, { method: "DELETE" })),
      faultsRoute.GET(new Request(`${BASE}/api/sim/faults`)),
      ledgerRoute.GET(new Request(`${BASE}/api/sim/ledger`)),
      resetRoute.POST(post("/api/sim/reset", {})),
      searchLagRoute.POST(post("/api/sim/search-lag", { ms: 1 })),
    ]);
    expect(responses.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404, 404]);
    expect(getHostedWorld().ledger.operations()).toEqual([]);
    await expect(remote().payments.charge(charge)).rejects.toMatchObject({ name: "SimHttpError", status: 404 });
  });

  it("with SAGABOARD_SIM_SECRET set, refuse requests without it (403), and nothing happens in the world", async () => {
    vi.stubEnv("SAGABOARD_SIM_SECRET", "demo-secret-123");
    const without = await rpcRoute.POST(post("/api/sim/rpc", { system: "payments", method: "charge", args: [charge] }));
    expect(without.status).toBe(403);
    expect(ledgerRoute.GET(new Request(`${BASE}/api/sim/ledger`, { headers: { "x-sagaboard-sim-secret": "wrong-secret-12" } })).status).toBe(403);
    expect(getHostedWorld().ledger.operations()).toEqual([]);
    // The agent and worker hold it (RemoteWorld sends SAGABOARD_SIM_SECRET by default).
    await expect(remote().payments.charge(charge)).resolves.toMatchObject({ status: "succeeded" });
    await expect(remote({ secret: "wrong-secret-12" }).payments.charge(charge)).rejects.toMatchObject({ status: 403 });
  });

  it("refuse a browser request from another site (403) and a body over 64 KB (413)", async () => {
    const crossSite = await resetRoute.POST(new Request(`${BASE}/api/sim/reset`, { method: "POST", headers: { origin: "https://evil.example", "content-type": "application/json" }, body: "{}" }));
    expect(crossSite.status).toBe(403);
    const big = await rpcRoute.POST(post("/api/sim/rpc", { system: "payments", method: "charge", args: [{ ...charge, metadata: { pad: "x".repeat(70_000) } }] }));
    expect(big.status).toBe(413);
    expect(getHostedWorld().ledger.operations()).toEqual([]);
  });

  it("refuse anything outside the allow-list with a 400 that names the allowed methods", async () => {
    const forbidden = [
      ["payments", "constructor"],
      ["payments", "ledger"],
      ["payments", "faults"],
      ["payments", "clock"],
      ["payments", "seed"],
      ["payments", "mutate"],
      ["payments", "createIntent"],
      ["payments", "receipts"],
      ["crm", "__proto__"],
      ["crm", "toString"],
      ["ticketing", "hasOwnProperty"],
    ];
    for (const [system, method] of forbidden) {
      const res = await rpcRoute.POST(post("/api/sim/rpc", { system, method, args: [] }));
      expect(res.status, `${system}.${method}`).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string; details: { path: string }[] } };
      expect(body.error.code).toBe("invalid_request");
      expect(body.error.details.map((i) => i.path)).toEqual(["body.method"]);
    }
    const unknownSystem = await rpcRoute.POST(post("/api/sim/rpc", { system: "world", method: "ledger", args: [] }));
    expect(unknownSystem.status).toBe(400);
    const notJson = await rpcRoute.POST(new Request(`${BASE}/api/sim/rpc`, { method: "POST", body: "{nope" }));
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { code: string } }).error.code).toBe("invalid_json");
    expect(getHostedWorld().ledger.operations()).toEqual([]);
  });

  it("dispatchRpc re-checks the allow-list itself", async () => {
    const world = new World();
    const smuggled = { system: "payments", method: "ledger", args: [] } as unknown as TRpcRequest;
    await expect(dispatchRpc(world, smuggled)).rejects.toBeInstanceOf(RpcRequestError);
    const ok = ZRpcRequest.parse({ system: "crm", method: "get", args: ["nobody"] });
    expect(await dispatchRpc(world, ok)).toEqual({ ok: true, value: undefined });
  });

  it("validate fault injections: known ops only, no predicates, sane statuses", async () => {
    const bad = [
      { op: "payments.chrage", fault: { kind: "reject" } },
      { op: "payments.charge", fault: { kind: "explode" } },
      { op: "payments.charge", fault: { kind: "reject", status: 503 } },
      { op: "payments.charge", fault: { kind: "reject" }, when: "args.amount > 10" },
      { op: "payments.charge", fault: { kind: "reject" }, times: 0 },
    ];
    for (const body of bad) {
      const res = await faultsRoute.POST(post("/api/sim/faults", body));
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(getHostedWorld().faults.pending()).toBe(0);
    const ship = await faultsRoute.POST(post("/api/sim/faults", { op: "warehouse.ship", fault: { kind: "reject", status: 409 }, times: 2 }));
    expect(await ship.json()).toEqual({ ok: true, pending: 2 });
  });

  it("filter the ledger and reject an unknown outcome", async () => {
    const w = remote();
    await w.payments.charge(charge);
    await w.ticketing.create({ summary: "s", labels: ["saga-t"] });
    const byOp = await ledgerRoute.GET(new Request(`${BASE}/api/sim/ledger?op=ticketing.create`));
    const body = (await byOp.json()) as { entries: { op: string; at: unknown }[]; summary: unknown };
    expect(body.entries.map((e) => e.op)).toEqual(["ticketing.create"]);
    expect(body.entries[0]?.at).toEqual({ $date: expect.any(String) });
    expect(body.summary).toEqual({ payments: { charge: { effect: 1 } }, ticketing: { create: { effect: 1 } } });
    expect((await w.ledger({ system: "payments", outcome: "effect" })).entries).toHaveLength(1);
    const bad = await ledgerRoute.GET(new Request(`${BASE}/api/sim/ledger?outcome=maybe`));
    expect(bad.status).toBe(400);
  });
});

describe("encodeJson / decodeJson", () => {
  it("revive nested dates and undefined array elements, and leave other values alone", () => {
    const at = new Date("2026-01-01T09:00:00.000Z");
    const value = { at, list: [at, undefined, 1, "x", null, { deep: [at] }], gone: undefined, n: 0 };
    const wire = JSON.parse(JSON.stringify(encodeJson(value))) as unknown;
    expect(wire).toEqual({
      at: { $date: at.toISOString() },
      list: [{ $date: at.toISOString() }, { $undefined: true }, 1, "x", null, { deep: [{ $date: at.toISOString() }] }],
      n: 0,
    });
    const back = decodeJson(wire) as typeof value;
    expect(back).toEqual({ at, list: [at, undefined, 1, "x", null, { deep: [at] }], n: 0 });
    expect(back.at).toBeInstanceOf(Date);
    expect(decodeJson({ $date: "not a date" })).toEqual({ $date: "not a date" });
    expect(decodeJson({ $date: at.toISOString(), other: 1 })).toEqual({ $date: at.toISOString(), other: 1 });
  });
});

describe("the support connectors over RemoteWorld", () => {
  // sim-tools.ts still types its parameter as World; RemoteWorld satisfies WorldLike, the surface it uses.
  const registryOver = (w: WorldLike): ToolRegistry => createSupportToolRegistry(w);
  const ctx = (stepKey: string) => ({ stepKey, runId: "run_1", stepIdx: 1 });

  it("call, look up, compensate and verify through HTTP; a 4xx maps to ToolRejected", async () => {
    const w = remote();
    const registry = registryOver(w);

    const chargeCard = registry.tool("charge_card");
    const args = registry.parseArgs(chargeCard, { customerId: "cus_ada", amount: 1500, currency: "eur", reason: "fee" });
    const done = await chargeCard.call(args, ctx("k-step-1"));
    expect(done).toEqual({ externalRef: expect.stringMatching(/^pi_/), result: { paymentIntentId: done.externalRef, status: "succeeded", amount: 1500 } });
    expect(await chargeCard.lookup?.("k-step-1", args)).toEqual(done);
    expect(await chargeCard.lookup?.("k-other", args)).toBeNull();

    const refund = registry.compensator("refund_charge");
    const target = { stepKey: "k-step-1", externalRef: done.externalRef, tool: "charge_card", args: {} };
    const compCtx = { compensationKey: "k-comp-1", target };
    expect(await refund.verify({ amount: 1500 }, compCtx)).toMatchObject({ done: false });
    await refund.run({ amount: 1500 }, compCtx);
    await refund.run({ amount: 1500 }, compCtx); // replayed under its own key: still one refund
    expect(await refund.verify({ amount: 1500 }, compCtx)).toMatchObject({ done: true });

    await w.faults.inject("warehouse.reship", { kind: "reject", status: 422, code: "out_of_stock" });
    const reship = registry.tool("reship_order");
    const refused = reship.call(registry.parseArgs(reship, { orderId: "1182" }), ctx("k-step-2"));
    await expect(refused).rejects.toBeInstanceOf(ToolRejected);
    await expect(refused).rejects.toMatchObject({ reason: "out_of_stock", retryable: false });

    const { entries } = await w.ledger();
    expect(count(entries, "payments.charge")).toBe(1);
    expect(count(entries, "payments.refund")).toBe(1);
    expect(count(entries, "payments.refund", "replayed")).toBe(1);
    expect(count(entries, "warehouse.reship", "rejected")).toBe(1);
  });

  it("seed 003 through the engine: timeout, crash, resume, unwind, and the hosted ledger agrees", async () => {
    const w = remote();
    const clock = new ManualClock();
    const store = new MemorySagaStore(clock);
    const registry = registryOver(w);
    const engine = () => new SagaEngine({ store, registry, clock, recheckAfterMs: 2000, backoffMs: 50 });
    await w.faults.inject("ticketing.create", { kind: "timeout_after_effect" });
    await w.faults.inject("payments.charge", { kind: "crash_after_effect" });
    await w.faults.inject("warehouse.reship", { kind: "reject", status: 422, code: "out_of_stock" });

    const first = await engine().startRun({ title: "Refund and reship order 1182", agent: "support-agent", onBehalfOf: "cus_ada" });
    await expect(refundAndReship(first)).rejects.toBeInstanceOf(SimulatedCrash);
    const resumed = await engine().resume(first.runId);
    expect(await refundAndReship(resumed)).toBe("failed");
    const report = await resumed.unwind("warehouse rejected the reship");
    expect(report).toMatchObject({ status: "UNWOUND" });

    const { entries } = await w.ledger();
    expect(count(entries, "ticketing.create")).toBe(1);
    expect(count(entries, "ticketing.close")).toBe(1);
    expect(count(entries, "payments.charge")).toBe(1);
    expect(count(entries, "payments.refund")).toBe(1);
    expect(count(entries, "warehouse.reship")).toBe(0);
    expect(count(entries, "email.send")).toBe(0);
    const rows = await store.listSteps(first.runId);
    expect(rows.map((r) => [r.tool, r.status])).toEqual([
      ["create_ticket", "COMPENSATED"],
      ["charge_card", "COMPENSATED"],
      ["reship_order", "FAILED"],
    ]);
  });
});
