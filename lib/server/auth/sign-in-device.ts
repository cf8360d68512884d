/**
 * Proof of a previous good sign-in from a browser: after a successful password sign-in the browser
 * gets a signed cookie naming the account (its throttle key, never the email) and a random device
 * id. The sign-in throttle counts that browser's attempts under the device and lets them past the
 * slowing a many-address attack causes, so the account's owner keeps a way in.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import * as z from "zod";
import { signInAccountKey } from "./sign-in-throttle";

/** The cookie's name; sent only to the credentials callback. */
export const SIGN_IN_DEVICE_COOKIE = "sagaboard-sign-in-device";
/** Where the browser sends it: only the password sign-in. */
const COOKIE_PATH = "/api/auth/callback/credentials";
/** How long the proof lasts, in seconds (90 days). */
export const SIGN_IN_DEVICE_MAX_AGE_SECONDS = 90 * 24 * 60 * 60;

const PayloadSchema = z.object({
  /** The account's throttle key (signInAccountKey). */
  account: z.string().min(1).max(80),
  /** A random id for this browser. */
  device: z.string().min(1).max(80),
  /** When it was issued, in unix seconds. */
  issuedAt: z.number().int(),
});

function mac(secret: string, payload: string): Buffer {
  return createHmac("sha256", `sign-in-device:${secret}`).update(payload).digest();
}

/** A Set-Cookie value proving that this browser signed in to `email` just now. */
export function signInDeviceCookie(input: { email: string; secret: string; secure: boolean; now?: Date }): string {
  const payload = Buffer.from(
    JSON.stringify({ account: signInAccountKey(input.email), device: randomBytes(12).toString("base64url"), issuedAt: Math.floor((input.now ?? new Date()).getTime() / 1000) }),
  ).toString("base64url");
  const value = `${payload}.${mac(input.secret, payload).toString("base64url")}`;
  return `${SIGN_IN_DEVICE_COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${SIGN_IN_DEVICE_MAX_AGE_SECONDS}; HttpOnly; SameSite=Strict${input.secure ? "; Secure" : ""}`;
}

/** The device id the request's cookie proves for `email`, or null (no cookie, another account, forged, expired). */
export function verifiedSignInDevice(input: { cookieHeader: string | null; email: string; secret: string; now?: Date }): string | null {
  const raw = (input.cookieHeader ?? "")
    .split(/;\s*/)
    .find((c) => c.startsWith(`${SIGN_IN_DEVICE_COOKIE}=`))
    ?.slice(SIGN_IN_DEVICE_COOKIE.length + 1);
  const [payload, signature] = (raw ?? "").split(".");
  if (!payload || !signature) return null;
  const expected = mac(input.secret, payload);
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let parsed: z.infer<typeof PayloadSchema>;
  try {
    parsed = PayloadSchema.parse(JSON.parse(Buffer.from(payload, "base64url").toString("utf8")));
  } catch {
    return null;
  }
  const age = Math.floor((input.now ?? new Date()).getTime() / 1000) - parsed.issuedAt;
  if (age < 0 || age > SIGN_IN_DEVICE_MAX_AGE_SECONDS) return null;
  return parsed.account === signInAccountKey(input.email) ? parsed.device : null;
}
