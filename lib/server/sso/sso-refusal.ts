/**
 * Why single sign-on refused a person, carried to the refusal page (/signin/refused) in its address:
 * the page needs no session and no row, and the signature (HMAC with the sign-in secret) keeps anyone
 * from making Sagaboard's page say something else. It holds only what the person's own provider just
 * said about them (email, groups) and a time, after which the page only says it expired.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import * as z from "zod";

/** Why a person was refused at sign-in. */
export const SsoRefusalReason = {
  /** The provider sent no email, or said it is not verified. */
  no_email: "no_email",
  /** None of the person's groups is mapped to a role. */
  no_mapped_group: "no_mapped_group",
  /** The account is disabled (by an admin, or deprovisioned by the provider). */
  disabled: "disabled",
  /** The email is the break-glass account's, which signs in with its password only. */
  break_glass: "break_glass",
} as const;
export type SsoRefusalReason = (typeof SsoRefusalReason)[keyof typeof SsoRefusalReason];

/** What the refusal page shows. */
export const ZSsoRefusal = z.object({
  /** Why. */
  reason: z.enum(SsoRefusalReason),
  /** The email the provider sent, if any. */
  email: z.string().nullable(),
  /** The groups the provider sent. */
  groups: z.array(z.string()),
  /** When (ms since the epoch). */
  at: z.number(),
});
/** What the refusal page shows. */
export type TSsoRefusal = z.infer<typeof ZSsoRefusal>;

/** How long the page explains a refusal (after that it asks to sign in again). */
const REFUSAL_PAGE_MS = 15 * 60_000;

function sign(payload: string, secret: string): string {
  return createHmac("sha256", secret).update(`sso-refusal:${payload}`).digest("base64url");
}

/** The refusal page's address for `refusal`. */
export function refusalPath(refusal: TSsoRefusal, secret: string): string {
  const payload = Buffer.from(JSON.stringify(refusal)).toString("base64url");
  return `/signin/refused?r=${payload}.${sign(payload, secret)}`;
}

/** The refusal an address carries, or null when it is missing, forged or older than 15 minutes. */
export function readRefusal(param: string | undefined, secret: string, now = Date.now()): TSsoRefusal | null {
  const [payload, signature] = (param ?? "").split(".");
  if (!payload || !signature) return null;
  const expected = Buffer.from(sign(payload, secret));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  try {
    const refusal = ZSsoRefusal.parse(JSON.parse(Buffer.from(payload, "base64url").toString("utf8")));
    return now - refusal.at <= REFUSAL_PAGE_MS ? refusal : null;
  } catch {
    return null;
  }
}
