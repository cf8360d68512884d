import { describe, expect, it } from "vitest";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { ProviderError } from "./errors";
import { World } from "./world";

const card = { customerId: "cus_1", amount: 1500, currency: "usd", metadata: { saga_key: "k3" } };

describe("PaymentsSim", () => {
  it("replays the same key and params without a second charge", async () => {
    const w = new World({ clock: new ManualClock() });
    const first = await w.payments.charge(card, { idempotencyKey: "k3" });
    const again = await w.payments.charge({ ...card, metadata: { saga_key: "k3" } }, { idempotencyKey: "k3" });
    expect(again).toEqual(first);
    expect(w.ledger.count({ op: "payments.charge" })).toBe(1);
    expect(w.ledger.count({ op: "payments.charge", outcome: "replayed" })).toBe(1);
    expect(w.ledger.duplicates("payments.charge")).toEqual([]);
  });

  it("refuses a reused key with different params, changing nothing", async () => {
    const w = new World();
    await w.payments.charge(card, { idempotencyKey: "k3" });
    const err = await w.payments.charge({ ...card, amount: 1600 }, { idempotencyKey: "k3" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ status: 400, code: "idempotency_key_reused", effectHappened: false });
    expect(w.ledger.count({ op: "payments.charge" })).toBe(1);
    expect(w.ledger.count({ op: "payments.charge", outcome: "rejected" })).toBe(1);
  });

  it("without a key, a retry is a second charge (the incident)", async () => {
    const w = new World();
    await w.payments.charge(card);
    await w.payments.charge(card);
    expect(w.ledger.duplicates("payments.charge")).toEqual(["k3"]);
  });

  it("authorize, capture and cancel move the intent through its states", async () => {
    const w = new World();
    const held = await w.payments.authorize(card, { idempotencyKey: "a1" });
    expect(held.status).toBe("requires_capture");
    expect((await w.payments.capture(held.id)).status).toBe("succeeded");
    await expect(w.payments.cancelAuthorization(held.id)).rejects.toMatchObject({ status: 409 });
    const other = await w.payments.authorize(card, { idempotencyKey: "a2" });
    await w.payments.cancelAuthorization(other.id);
    expect((await w.payments.getPaymentIntent(other.id))?.status).toBe("canceled");
  });

  it("refunds up to the captured amount and rejects more", async () => {
    const w = new World();
    const pi = await w.payments.charge(card, { idempotencyKey: "k3" });
    const refund = await w.payments.refund({ paymentIntentId: pi.id, amount: 1000 }, { idempotencyKey: "c3" });
    expect(refund.id).toMatch(/^re_/);
    await expect(w.payments.refund({ paymentIntentId: pi.id, amount: 501 })).rejects.toMatchObject({
      status: 400,
      code: "amount_too_large",
      effectHappened: false,
    });
    await w.payments.refund({ paymentIntentId: pi.id, amount: 1000 }, { idempotencyKey: "c3" });
    expect((await w.payments.getPaymentIntent(pi.id))?.amountRefunded).toBe(1000);
    expect(await w.payments.listRefunds(pi.id)).toHaveLength(1);
    expect(w.ledger.count({ op: "payments.refund", ref: pi.id })).toBe(1);
    await expect(w.payments.refund({ paymentIntentId: "pi_nope", amount: 1 })).rejects.toMatchObject({ status: 404 });
  });

  it("sends receipts only when the charge asked for them", async () => {
    const w = new World();
    const quiet = await w.payments.charge(card, { idempotencyKey: "q" });
    await w.payments.refund({ paymentIntentId: quiet.id, amount: 1500 });
    expect(w.payments.receipts).toEqual([]);
    const loud = await w.payments.charge({ ...card, receipt: true }, { idempotencyKey: "l" });
    await w.payments.charge({ ...card, receipt: true }, { idempotencyKey: "l" }); // replay: no new receipt
    await w.payments.refund({ paymentIntentId: loud.id, amount: 500 });
    expect(w.payments.receipts.map((r) => [r.kind, r.amount])).toEqual([
      ["charge", 1500],
      ["refund", 500],
    ]);
    expect(w.ledger.count({ op: "payments.receipt", ref: loud.id })).toBe(2);
  });

  it("search by metadata lags, direct get does not", async () => {
    const clock = new ManualClock();
    const w = new World({ clock, searchLagMs: 60_000 });
    const pi = await w.payments.charge(card, { idempotencyKey: "k3" });
    expect(await w.payments.searchByMetadata("saga_key", "k3")).toEqual([]);
    expect((await w.payments.getPaymentIntent(pi.id))?.id).toBe(pi.id);
    clock.advance(60_000);
    expect((await w.payments.searchByMetadata("saga_key", "k3")).map((p) => p.id)).toEqual([pi.id]);
  });
});
