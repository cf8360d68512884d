import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { notificationTopic } from "@/lib/core/outbox/outbox";
import { signWebhookBody, verifyWebhookSignature } from "./webhook-signature";
import { backoffDelayMs } from "./deliver-notifications";

describe("webhook signatures", () => {
  const secret = "whsec_test";
  const body = '{"deliveryId":"dlv_1","topic":"pivot_waiting"}';

  it("is the HMAC-SHA256 of '<t>.<body>', which a receiver can recompute on its own", () => {
    const header = signWebhookBody(secret, body, 1_764_000_000);
    expect(header).toBe(`t=1764000000,v1=${createHmac("sha256", secret).update(`1764000000.${body}`).digest("hex")}`);
    expect(verifyWebhookSignature({ secret, header, body, nowSec: 1_764_000_010 })).toEqual({ ok: true, timestamp: 1_764_000_000 });
  });

  it("refuses a changed body, another secret, an old timestamp and a malformed header, saying which", () => {
    const header = signWebhookBody(secret, body, 1_764_000_000);
    expect(verifyWebhookSignature({ secret, header, body: body.replace("1", "2"), nowSec: 1_764_000_000 })).toEqual({ ok: false, reason: "the signature does not match the body" });
    expect(verifyWebhookSignature({ secret: "whsec_other", header, body, nowSec: 1_764_000_000 }).ok).toBe(false);
    expect(verifyWebhookSignature({ secret, header, body, nowSec: 1_764_000_301 })).toMatchObject({ ok: false, reason: expect.stringContaining("too far from now") });
    expect(verifyWebhookSignature({ secret, header: "sha256=abc", body, nowSec: 1_764_000_000 })).toMatchObject({ ok: false, reason: expect.stringContaining("t=<unix seconds>") });
  });
});

describe("which audit events notify", () => {
  it("pivots, escalations, SLA marks, corrections and revokes; an expiry's rejection; never a step", () => {
    expect(notificationTopic("pivot.requested", {})).toBe("pivot_waiting");
    expect(notificationTopic("escalation.raised", { kind: "OUTCOME_UNKNOWN" })).toBe("escalation_raised");
    expect(notificationTopic("correction.drafted", {})).toBe("correction_waiting");
    expect(notificationTopic("revoke.run_pulled", {})).toBe("revoke_pulled");
    expect(notificationTopic("sla.breached", {})).toBe("sla_breached");
    expect(notificationTopic("pivot.rejected", { expired: true })).toBe("sla_breached");
    expect(notificationTopic("pivot.rejected", { reason: "no" })).toBeNull();
    expect(notificationTopic("escalation.resolved", { resolution: { approved: false, expired: true } })).toBe("sla_breached");
    expect(notificationTopic("escalation.resolved", { resolution: { approved: true } })).toBeNull();
    for (const type of ["step.intended", "step.confirmed", "step.reconciled", "compensation.requested", "run.started"]) expect(notificationTopic(type, {})).toBeNull();
  });

  it("backs off exponentially, capped at an hour", () => {
    expect([1, 2, 3, 4].map((n) => backoffDelayMs(n, 5_000))).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(backoffDelayMs(30, 5_000)).toBe(3_600_000);
  });
});
