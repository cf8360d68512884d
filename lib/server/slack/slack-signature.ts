/**
 * Slack's request signing (https://api.slack.com/authentication/verifying-requests-from-slack): the
 * `X-Slack-Signature` header is `v0=` + hex HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<raw body>`
 * with the app's signing secret, and a request whose timestamp is more than 300 s from now is refused
 * (a replay of a captured request). Checked on the raw bytes before anything is parsed.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** How far a request's timestamp may be from now. */
export const SLACK_MAX_SKEW_SEC = 300;

/** Why a request was refused, or that it is Slack's. */
export type SlackVerdict = { ok: true } | { ok: false; reason: "missing_headers" | "stale_timestamp" | "bad_signature" };

/** Checks one request; `nowSec` is this server's clock in seconds. */
export function verifySlackRequest(input: { signingSecret: string; timestamp: string | null; signature: string | null; body: string; nowSec: number }): SlackVerdict {
  const { timestamp, signature } = input;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: "missing_headers" };
  if (Math.abs(input.nowSec - Number(timestamp)) > SLACK_MAX_SKEW_SEC) return { ok: false, reason: "stale_timestamp" };
  const expected = Buffer.from(`v0=${createHmac("sha256", input.signingSecret).update(`v0:${timestamp}:${input.body}`).digest("hex")}`);
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given) ? { ok: true } : { ok: false, reason: "bad_signature" };
}
