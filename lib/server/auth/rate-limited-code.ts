/**
 * How a throttled sign-in tells the sign-in form how long to wait. next-auth's client `signIn` hands
 * the form only the `error` query parameter of the answer's url (and the status), so the wait rides
 * in that code: `RateLimited:<seconds>`. Pure, so the client form and the server share it.
 */

/** The error code of a throttled sign-in, before the `:<seconds>` suffix. */
export const RATE_LIMITED_SIGN_IN_ERROR = "RateLimited";

/** The error code for a sign-in refused for `retryAfterSeconds`. */
export function rateLimitedSignInError(retryAfterSeconds: number): string {
  return `${RATE_LIMITED_SIGN_IN_ERROR}:${Math.max(1, Math.ceil(retryAfterSeconds))}`;
}

/** The seconds to wait that a throttled sign-in's error code names, or null for any other code. */
export function rateLimitedSeconds(code: string): number | null {
  const match = /^RateLimited(?::(\d{1,6}))?$/.exec(code);
  if (!match) return null;
  return match[1] === undefined ? 60 : Number(match[1]);
}

/** "Too many attempts; try again in N minutes." for a wait of `seconds` (rounded up to whole minutes). */
export function rateLimitedSentence(seconds: number): string {
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  return `Too many attempts; try again in ${minutes} ${minutes === 1 ? "minute" : "minutes"}.`;
}
