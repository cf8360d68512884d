/**
 * The per-page security headers proxy.ts sets (the static ones every response carries are in
 * next.config.js): the Content-Security-Policy carries a fresh nonce per page (Next applies it to its
 * own scripts when it finds it in the request's policy), and HSTS goes out only over https.
 */

/** HSTS, sent only over https (a browser would otherwise pin a plain-http demo to https). */
export const HSTS_HEADER = { key: "Strict-Transport-Security", value: "max-age=31536000; includeSubDomains" } as const;

/**
 * The page policy: scripts only from this origin and with this request's nonce ('strict-dynamic' lets
 * those load the chunks they need), no plugins, no framing, forms and base URI to this origin. Styles
 * may be inline (React style attributes); scripts may not. Development adds 'unsafe-eval' for Fast Refresh.
 */
export function contentSecurityPolicy(nonce: string, options: { development?: boolean; https?: boolean } = {}): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${options.development ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' blob: data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(options.https ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
}
