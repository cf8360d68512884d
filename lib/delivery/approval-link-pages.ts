/**
 * The HTTP edge of approval links: the cookie that carries a link's secret from the email's address
 * (`/approve/<secret>`) to its confirm page and that page's POST, and the small page a refused link
 * is answered with (its status says what happened: 403 someone else's, 404 unknown, 409 used, 410 no
 * longer usable). The secret never goes into a page or another address.
 */
import type { TLinkRefusal } from "@/lib/desks/approvals/views";

/** How long the confirm page can be used after opening the link (the link's own expiry still applies). */
export const CONFIRM_COOKIE_SECONDS = 15 * 60;

/** The cookie of one link (one per link, so two open emails do not overwrite each other). */
export function linkCookieName(linkId: string): string {
  return `sagaboard-approval-${linkId.replace(/[^A-Za-z0-9_]/g, "")}`;
}

/** Set-Cookie for a link's secret: httpOnly, SameSite=Lax (sent on the redirect that follows the email's click), Secure over https. */
export function linkCookie(linkId: string, secret: string, https: boolean): string {
  return `${linkCookieName(linkId)}=${secret}; Path=/; Max-Age=${CONFIRM_COOKIE_SECONDS}; HttpOnly; SameSite=Lax${https ? "; Secure" : ""}`;
}

/** The secret a request carries for `linkId`, or null. */
export function linkSecretOf(cookieHeader: string | null, linkId: string): string | null {
  const name = linkCookieName(linkId);
  for (const part of (cookieHeader ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=") || null;
  }
  return null;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A refused link's answer (or a refused form: 400): its status and a page that says what happened and where to go. */
export function refusalPage(refusal: Omit<TLinkRefusal, "status"> & { status: number }, nonce: string | null): Response {
  const pivotLink = refusal.itemPath ? `<a href="${escapeHtml(refusal.itemPath)}">Open it in Sagaboard</a> · ` : "";
  const style = `body{font-family:system-ui,sans-serif;background:#f5f7f9;color:#1f2933;margin:0;padding:1rem}main{max-width:32rem;margin:3rem auto;background:#fff;border:1px solid #d9dee3;border-radius:10px;padding:1.5rem}h1{font-size:1.3rem;margin:0 0 .6rem;overflow-wrap:anywhere}p{line-height:1.5;overflow-wrap:anywhere}a{color:#1d5fa8}`;
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(refusal.title)} · Sagaboard</title><style${nonce ? ` nonce="${escapeHtml(nonce)}"` : ""}>${style}</style></head><body><main data-testid="approval-link-refused"><h1>${escapeHtml(refusal.title)}</h1><p>${escapeHtml(refusal.message)}</p><p>${pivotLink}<a href="/">Back to Sagaboard</a></p></main></body></html>`;
  return new Response(html, { status: refusal.status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer" } });
}

/** A 303 to `location` (same site), with an optional Set-Cookie; never cached, never a Referer with a secret. */
export function seeOther(location: string, cookie?: string): Response {
  const headers = new Headers({ location, "cache-control": "no-store", "referrer-policy": "no-referrer" });
  if (cookie) headers.append("set-cookie", cookie);
  return new Response(null, { status: 303, headers });
}
