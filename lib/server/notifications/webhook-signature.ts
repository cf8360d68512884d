/**
 * Webhook signatures: `Sagaboard-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`,
 * keyed with the webhook's secret. The timestamp is inside the MAC, so a receiver that checks it
 * against its own clock refuses a captured request replayed later; the delivery id
 * (`Sagaboard-Delivery`) is what it dedupes retries on.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** The header names a receiver reads. */
export const WEBHOOK_HEADERS = {
  signature: "sagaboard-signature",
  delivery: "sagaboard-delivery",
  topic: "sagaboard-topic",
} as const;

/** How far a receiver lets the signed time be from its own clock (seconds), by default. */
export const DEFAULT_TOLERANCE_SEC = 300;

function mac(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`, "utf8").digest("hex");
}

/** The Sagaboard-Signature header value for `body`, signed at `timestamp` (unix seconds). */
export function signWebhookBody(secret: string, body: string, timestamp: number): string {
  return `t=${timestamp},v1=${mac(secret, timestamp, body)}`;
}

/** Why a signature was refused, or that it holds. */
export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: string };

/**
 * Checks a Sagaboard-Signature header against the raw body (as received, before any JSON parsing)
 * and `nowSec` (the receiver's clock, unix seconds).
 */
export function verifyWebhookSignature(options: { secret: string; header: string | null; body: string; nowSec: number; toleranceSec?: number }): SignatureCheck {
  const { secret, header, body, nowSec } = options;
  if (!header) return { ok: false, reason: "no Sagaboard-Signature header" };
  const parts = new Map(header.split(",").map((p) => p.trim().split("=", 2) as [string, string]));
  const timestamp = Number(parts.get("t"));
  const given = parts.get("v1");
  if (!Number.isInteger(timestamp) || !given) return { ok: false, reason: "the header must read t=<unix seconds>,v1=<hex>" };
  if (Math.abs(nowSec - timestamp) > (options.toleranceSec ?? DEFAULT_TOLERANCE_SEC)) return { ok: false, reason: `signed at ${timestamp}, too far from now (${nowSec})` };
  const expected = Buffer.from(mac(secret, timestamp, body), "hex");
  const actual = Buffer.from(given, "hex");
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return { ok: false, reason: "the signature does not match the body" };
  return { ok: true, timestamp };
}
