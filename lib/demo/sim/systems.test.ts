import { describe, expect, it } from "vitest";
import { ManualClock } from "@/packages/client/src/saga/clock";
import { World } from "./world";

const labels = ["refund", "saga-k2"];

describe("TicketingSim", () => {
  it("closing a ticket that never existed is logged as not_found, not as an effect", async () => {
    const w = new World();
    await expect(w.ticketing.close("SUP-9999", "rolled back")).rejects.toMatchObject({
      status: 404,
      code: "not_found",
      effectHappened: false,
    });
    expect(w.ledger.operations({ op: "ticketing.close" })).toMatchObject([{ outcome: "not_found", ref: "SUP-9999" }]);
    expect(w.ledger.count({ op: "ticketing.close" })).toBe(0);
  });

  it("closes once under the ticket's saga key; a second close is refused", async () => {
    const w = new World();
    const t = await w.ticketing.create({ summary: "Refund for order 1182", orderId: "1182", labels });
    expect(t).toMatchObject({ id: "SUP-4470", status: "open" });
    await w.ticketing.close(t.id, "rolled back by run");
    await expect(w.ticketing.close(t.id, "again")).rejects.toMatchObject({ status: 409, code: "already_closed" });
    expect(await w.ticketing.get(t.id)).toMatchObject({ status: "closed", closeReason: "rolled back by run" });
    expect(w.ledger.effectsPerKey("ticketing.close")).toEqual(new Map([["k2", 1]]));
    expect(await w.ticketing.supportQueue()).toEqual([]);
  });

  it("a draft stays out of the queue until opened, and only drafts can be deleted", async () => {
    const w = new World();
    const draft = await w.ticketing.createDraft({ summary: "Reship 1182", labels });
    expect(await w.ticketing.supportQueue()).toEqual([]);
    expect(await w.ticketing.searchByLabel("saga-k2")).toHaveLength(1);
    await w.ticketing.open(draft.id);
    await expect(w.ticketing.deleteDraft(draft.id)).rejects.toMatchObject({ status: 409 });
    const other = await w.ticketing.createDraft({ summary: "x", labels: ["saga-k4"] });
    await w.ticketing.deleteDraft(other.id);
    expect(await w.ticketing.get(other.id)).toBeUndefined();
    expect(w.ledger.effects({ op: "ticketing.deleteDraft" })).toMatchObject([{ key: "k4", ref: other.id }]);
  });
});

describe("EmailSim", () => {
  it("drafts are deleted or sent; sent mail is searchable by header after the lag", async () => {
    const clock = new ManualClock();
    const w = new World({ clock, searchLagMs: 5000 });
    const mail = { to: "c@example.com", subject: "Your refund", body: "…", headers: { "X-Saga-Key": "k6" } };
    const draft = await w.email.createDraft(mail);
    expect(draft.id).toMatch(/^drf_/);
    clock.advance(5000);
    expect(await w.email.searchDrafts("X-Saga-Key", "k6")).toHaveLength(1);
    const msg = await w.email.sendDraft(draft.id);
    expect(msg).toMatchObject({ id: expect.stringMatching(/^msg_/), draftId: draft.id });
    expect(await w.email.getDraft(draft.id)).toBeUndefined();
    await expect(w.email.sendDraft(draft.id)).rejects.toMatchObject({ status: 404 });
    expect(await w.email.searchSent("X-Saga-Key", "k6")).toEqual([]);
    clock.advance(5000);
    expect(await w.email.searchSent("X-Saga-Key", "k6")).toHaveLength(1);
    expect(w.ledger.count({ system: "email", key: "k6" })).toBe(2); // createDraft + sendDraft
  });
});

describe("WarehouseSim", () => {
  it("reship is idempotent by key and cancellable only while scheduled", async () => {
    const w = new World();
    const s = await w.warehouse.reship({ orderId: "1182" }, { idempotencyKey: "k5" });
    expect(await w.warehouse.reship({ orderId: "1182" }, { idempotencyKey: "k5" })).toEqual(s);
    expect(s).toMatchObject({ status: "scheduled", externalId: "k5" });
    expect((await w.warehouse.findByExternalId("k5"))?.id).toBe(s.id);
    await w.warehouse.cancelShipment(s.id);
    await expect(w.warehouse.cancelShipment(s.id)).rejects.toMatchObject({ status: 409 });
    const t = await w.warehouse.reship({ orderId: "1183" }, { idempotencyKey: "k8" });
    await w.warehouse.markShipped(t.id);
    await expect(w.warehouse.cancelShipment(t.id)).rejects.toMatchObject({ status: 409, code: "already_shipped" });
    expect((await w.warehouse.get(s.id))?.status).toBe("cancelled");
    expect(w.ledger.count({ op: "warehouse.reship" })).toBe(2);
  });
});

describe("CrmSim", () => {
  it("restore puts back the snapshot taken before the keyed write", async () => {
    const clock = new ManualClock();
    const w = new World({ clock, searchLagMs: 1000 });
    w.crm.seed("crm_1", { tier: "gold", note: "vip" });
    await w.crm.update("crm_1", { tier: "silver", refunds: 1 }, { idempotencyKey: "k9" });
    await w.crm.update("crm_1", { note: "later" });
    expect(await w.crm.findUpdateByKey("k9")).toBeUndefined();
    clock.advance(1000);
    expect(await w.crm.findUpdateByKey("k9")).toMatchObject({ recordId: "crm_1", before: { tier: "gold", note: "vip" } });
    await w.crm.restore("k9");
    await w.crm.restore("k9");
    expect((await w.crm.get("crm_1"))?.fields).toEqual({ tier: "gold", note: "vip" });
    expect(w.ledger.count({ op: "crm.restore", key: "k9" })).toBe(1);
    await expect(w.crm.restore("nope")).rejects.toMatchObject({ status: 404 });
    expect(w.ledger.count({ op: "crm.restore", outcome: "not_found" })).toBe(1);
  });
});

describe("World", () => {
  it("shares one ledger and summarises it per system and op", async () => {
    const w = new World();
    w.setSearchLag(10);
    expect(w.systems.every((s) => s.searchLagMs === 10)).toBe(true);
    await w.ticketing.create({ summary: "a", labels });
    await w.ticketing.close("SUP-1", "ghost").catch(() => undefined);
    await w.payments.charge({ customerId: "c", amount: 1, currency: "usd" });
    expect(w.summary()).toEqual({
      ticketing: { create: { effect: 1 }, close: { not_found: 1 } },
      payments: { charge: { effect: 1 } },
    });
    expect(w.ledger.operations().map((e) => e.seq)).toEqual([1, 2, 3]);
  });
});
