import { describe, expect, it } from "vitest";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { SimulatedCrash } from "@/packages/client/src/saga/crash-points";
import { ProviderError, ProviderTimeout } from "./errors";
import { World } from "./world";

const ticket = { summary: "Refund for order 1182", orderId: "1182", labels: ["refund", "saga-k2"] };

function setup(lag = 0) {
  const clock = new ManualClock();
  return { clock, w: new World({ clock, searchLagMs: lag }) };
}

describe("fault kinds", () => {
  it("reject: 4xx, nothing happened, logged as rejected", async () => {
    const { w } = setup();
    w.faults.inject("warehouse.reship", { kind: "reject", code: "out_of_stock" });
    const err = await w.warehouse.reship({ orderId: "1182" }, { idempotencyKey: "k5" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 422, code: "out_of_stock", effectHappened: false });
    expect(w.ledger.count({ op: "warehouse.reship" })).toBe(0);
    expect(w.ledger.operations({ op: "warehouse.reship" })[0]).toMatchObject({ outcome: "rejected", key: "k5" });
    expect(await w.warehouse.findByExternalId("k5")).toBeUndefined();
  });

  it("server_error: 5xx whose outcome the caller cannot know, but no effect", async () => {
    const { w } = setup();
    w.faults.inject("ticketing.create", { kind: "server_error" });
    await expect(w.ticketing.create(ticket)).rejects.toMatchObject({ status: 503, effectHappened: "unknown" });
    expect(w.ledger.count({ op: "ticketing.create" })).toBe(0);
  });

  it("timeout_before_effect: a 504 and no ticket", async () => {
    const { w, clock } = setup(1000);
    w.faults.inject("ticketing.create", { kind: "timeout_before_effect" });
    const err = await w.ticketing.create(ticket).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderTimeout);
    expect(err).toMatchObject({ status: 504, code: "gateway_timeout", effectHappened: "unknown" });
    clock.advance(1000);
    expect(await w.ticketing.searchByLabel("saga-k2")).toEqual([]);
    expect(w.ledger.count({ key: "k2" })).toBe(0);
  });

  it("timeout_after_effect: one real ticket, invisible to search until the lag passes", async () => {
    const { w, clock } = setup(30_000);
    w.faults.inject("ticketing.create", { kind: "timeout_after_effect" });
    await expect(w.ticketing.create(ticket)).rejects.toBeInstanceOf(ProviderTimeout);
    expect(w.ledger.effectsPerKey("ticketing.create")).toEqual(new Map([["k2", 1]]));
    const [effect] = w.ledger.effects({ op: "ticketing.create" });
    expect(effect?.ref).toBe("SUP-4470");
    expect(await w.ticketing.searchByLabel("saga-k2")).toEqual([]);
    clock.advance(29_999);
    expect(await w.ticketing.searchByLabel("saga-k2")).toEqual([]);
    clock.advance(1);
    expect((await w.ticketing.searchByLabel("saga-k2")).map((t) => t.id)).toEqual(["SUP-4470"]);
    expect((await w.ticketing.supportQueue()).map((t) => t.id)).toEqual(["SUP-4470"]);
  });

  it("timeout_after_effect with a native key: the retry replays, still one charge", async () => {
    const { w } = setup();
    const card = { customerId: "cus_1", amount: 900, currency: "usd", metadata: { saga_key: "k3" } };
    w.faults.inject("payments.charge", { kind: "timeout_after_effect" });
    await expect(w.payments.charge(card, { idempotencyKey: "k3" })).rejects.toBeInstanceOf(ProviderError);
    const retry = await w.payments.charge(card, { idempotencyKey: "k3" });
    expect(retry.status).toBe("succeeded");
    expect(w.ledger.count({ op: "payments.charge", key: "k3" })).toBe(1);
    expect(w.ledger.count({ op: "payments.charge", key: "k3", outcome: "replayed" })).toBe(1);
  });

  it("crash_after_effect: the effect exists and the caller dies with SimulatedCrash", async () => {
    const { w } = setup();
    w.faults.inject("email.send", { kind: "crash_after_effect" });
    const mail = { to: "a@example.com", subject: "Sorry", body: "…", headers: { "X-Saga-Key": "k7" } };
    const err = await w.email.send(mail).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SimulatedCrash);
    expect((err as SimulatedCrash).point).toBe("after-effect");
    expect(w.email.sent).toHaveLength(1);
    expect((await w.email.searchSent("x-saga-key", "k7")).map((m) => m.id)).toEqual([w.email.sent[0]?.id]);
  });

  it("slow: sleeps on the clock, then succeeds", async () => {
    const { w, clock } = setup();
    const start = clock.now().getTime();
    w.faults.inject("crm.update", { kind: "slow", ms: 5000 });
    w.crm.seed("crm_1", { tier: "gold" });
    await w.crm.update("crm_1", { tier: "silver" }, { idempotencyKey: "k9" });
    expect(clock.now().getTime() - start).toBe(5000);
    expect(w.ledger.count({ op: "crm.update" })).toBe(1);
  });

  it("faults are consumed in order, honour times and when, and clear", async () => {
    const { w } = setup();
    const op = "ticketing.create";
    w.faults.inject(op, { kind: "reject", code: "first" });
    w.faults.inject(op, { kind: "reject", code: "second" }, { times: 2 });
    w.faults.inject(op, { kind: "reject", code: "only_1182" }, { when: (a) => (a as { orderId?: string }).orderId === "1182" });
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) {
      await w.ticketing.create({ ...ticket, orderId: "9" }).catch((e: ProviderError) => codes.push(e.code));
    }
    await w.ticketing.create({ ...ticket, orderId: "9" }); // the `when` fault does not apply
    expect(codes).toEqual(["first", "second", "second"]);
    expect(w.faults.pending(op)).toBe(1);
    await expect(w.ticketing.create(ticket)).rejects.toMatchObject({ code: "only_1182" });
    w.faults.inject(op, { kind: "reject" }, { times: Infinity });
    w.faults.clear();
    await w.ticketing.create(ticket);
    expect(w.ledger.count({ op })).toBe(2);
  });
});
